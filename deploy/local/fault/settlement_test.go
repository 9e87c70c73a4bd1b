package fault_test

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/fault"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	interchangeapp "github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

const (
	settlementCreatePath = "/v3/api/interchange/settlement/create"
	settlementStatusPath = "/v3/api/interchange/settlement/status"
)

// TestSettlementSurvivesServiceRestarts drives a settlement with a receivable (BTC, client →
// venue) and a netted payable (ETH, venue → client), instructed by the venue's side, through
// the settlement engine's gRPC API and stops interchange twice in the middle of it:
//   - during the pay-in, with its hold entry on its way to trading: a graceful stop
//     (SIGTERM): health turns NOT_SERVING, new calls are refused, the call in flight
//     completes, and the service restarts on the same address;
//   - during the pay-out, after trading applied the pay-out entry but before interchange
//     heard back: a crash (its database link is cut first, so the dying process records
//     nothing more, and its calls are cut after a 300 ms grace). The settlement is left
//     claimed by the dead process; after the restart the engine's repeated PAY_OUT is
//     refused (409) until the claim's lease runs out, then resumes: it sends the same
//     entry ids again and trading answers them as already applied.
//
// Each wallet ends where the instruction says, funds moved exactly once (checked in
// between, after the crash, and at the end), and every balance kind summed per currency
// over the client's and the venue's wallets is the same before and after.
func TestSettlementSurvivesServiceRestarts(t *testing.T) {
	t.Parallel()
	var grace atomic.Int64 // interchange's ShutdownTimeout at its next start
	grace.Store(int64(10 * time.Second))
	s := newSuite(t, setup{
		ownLink: []string{"interchange"},
		relays:  [][2]string{{"interchange", "trading"}},
		service: func(name string, c *config.Common) {
			if name == "interchange" {
				c.ShutdownTimeout = time.Duration(grace.Load())
			}
		},
		// A short claim lease, so that the engine's retry resumes within seconds; the
		// recovery sweeper keeps its 30 s grace and leaves the resuming to the engine.
		interchange: func(c *interchangeapp.Config) { c.SettlementLease = 3 * time.Second },
	})
	f := newVenueFixture(t, s, "10.12345678", "1", "0.5", "100.000000000000000001")
	engine := newSettlementEngine(t, s)
	before := f.totals(t)
	requestID := "FAULT-" + uuid.NewString()[:8]
	body := instructionBody(requestID, f.venue, []map[string]any{
		legOf(f.btc, "BTC", "BTC", "1.23456789"), legOf(f.btc, "BTC", "BTC", "0.00000001"),
		legOf(f.eth, "ETH", "ETH", "-30"), legOf(f.eth, "ETH", "ETH", "9.499999999999999999"),
	}, map[string]any{"currency": "ETH", "ledger": "ETH", "amount": "-20.500000000000000001"})
	id := engine.instruct(t, body)
	engine.mustAdvance(t, id, "SETTLEMENT_INITIATED", "SETTLEMENT_INITIATED")

	relay := s.relay("interchange", "trading")
	icAddr := s.stack.Services["interchange"]

	// 1. Pay-in, graceful stop with a movement in flight.
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		if c.Method == tradingv1.TradingLedgerService_RecordEntry_FullMethodName {
			once.Do(func() { close(held) })
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return forward()
	})
	payIn := engine.advanceAsync(id, "SETTLEMENT_PAY_IN")
	<-held
	stopped := make(chan error, 1)
	stopAt := time.Now()
	go func() { stopped <- s.stack.StopService("interchange") }()
	refused := waitFor(t, 5*time.Second, "interchange refuses new calls while it drains", func() bool {
		_, err := health(t.Context(), icAddr, "")
		return status.Code(err) == codes.Unavailable
	})
	// A call on a new connection is refused (one on an open connection may still be taken:
	// HTTP/2's GOAWAY lets the calls the client sent before it saw the GOAWAY in).
	fresh := newSettlementEngine(t, s)
	fresh.opts = nil // fail fast rather than wait for the service
	if _, err := fresh.advance(id, "SETTLEMENT_PAY_IN"); status.Code(err) != codes.Unavailable {
		t.Errorf("a new call while interchange drains: %v, want Unavailable", err)
	}
	time.Sleep(200 * time.Millisecond)
	close(release)
	if got := <-payIn; got.err != nil || got.status != "SETTLEMENT_PAY_IN" {
		t.Fatalf("the pay-in in flight during the stop = %q, %v; want SETTLEMENT_PAY_IN", got.status, got.err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	t.Logf("graceful stop: new calls refused %v after the stop began; it ended %v after, the call in flight finished",
		refused.Round(time.Millisecond), time.Since(stopAt).Round(time.Millisecond))
	relay.SetHook(nil)
	grace.Store(int64(300 * time.Millisecond)) // the next stop is a kill
	restartAt := time.Now()
	if err := s.stack.StartService(t.Context(), "interchange"); err != nil {
		t.Fatal(err)
	}
	t.Logf("interchange SERVING again %v after its restart", time.Since(restartAt).Round(time.Millisecond))
	// PAY_IN holds every payer's share (the client's BTC, the venue's net ETH payout).
	afterPayIn := map[string]amounts{
		"client BTC": {"8.88888888", "10.12345678", "1.2345679", "0"}, "client ETH": {"1", "1", "0", "0"},
		"venue BTC": {"0.5", "0.5", "0", "0"}, "venue ETH": {"79.5", "100.000000000000000001", "20.500000000000000001", "0"},
	}
	if diff := cmp.Diff(afterPayIn, f.balances(t)); diff != "" {
		t.Errorf("balances after the pay-in (-want +got):\n%s", diff)
	}

	// 2. Pay-out, crash after trading applied the last movement, before the answer.
	var mu sync.Mutex
	var sent []string // entry ids interchange sent to trading, in order
	crashed := make(chan struct{})
	var crashOnce sync.Once
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		entry, ok := entryOf(c)
		if !ok {
			return forward()
		}
		mu.Lock()
		sent = append(sent, entry)
		mu.Unlock()
		if err := forward(); err != nil {
			return err
		}
		crash := false
		if strings.HasSuffix(entry, ":payout") {
			crashOnce.Do(func() { crash = true })
		}
		if crash {
			close(crashed)
			<-ctx.Done() // applied by trading; the answer never reaches interchange
			return ctx.Err()
		}
		return nil
	})
	payOut := engine.advanceAsync(id, "SETTLEMENT_PAY_OUT")
	select {
	case <-crashed:
	case got := <-payOut:
		t.Fatalf("the pay-out ended before the crash: %q, %v", got.status, got.err)
	}
	s.own["interchange"].Cut()
	crashAt := time.Now()
	if err := s.stack.StopService("interchange"); err != nil {
		t.Logf("interchange ended with %v (killed)", err)
	}
	if got := <-payOut; got.err == nil {
		t.Errorf("the pay-out cut by the crash answered %q, want an error", got.status)
	}
	mu.Lock()
	firstRun := append([]string(nil), sent...)
	sent = nil
	mu.Unlock()
	t.Logf("killed %v after the crash point; entries sent before it: %v", time.Since(crashAt).Round(time.Millisecond), firstRun)
	afterPayOut := map[string]amounts{
		"client BTC": {"8.88888888", "8.88888888", "0", "0"}, "venue BTC": {"1.7345679", "1.7345679", "0", "0"},
		"client ETH": {"21.500000000000000001", "21.500000000000000001", "0", "0"}, "venue ETH": {"79.5", "79.5", "0", "0"},
	}
	if diff := cmp.Diff(afterPayOut, f.balances(t)); diff != "" {
		t.Errorf("balances right after the crash, the pay-out applied by trading (-want +got):\n%s", diff)
	}

	if err := s.own["interchange"].Restore(); err != nil {
		t.Fatal(err)
	}
	if err := s.stack.StartService(t.Context(), "interchange"); err != nil {
		t.Fatal(err)
	}
	if st := f.settlementStatus(t, s.client(demo.CompanyZTEST, company), requestID); st != "SETTLEMENT_PAY_IN" {
		t.Errorf("status after the crash = %s, want SETTLEMENT_PAY_IN (the pay-out is not recorded)", st)
	}
	resumeAt := time.Now()
	var refusals int
	for {
		got, err := engine.advance(id, "SETTLEMENT_PAY_OUT")
		if err == nil {
			if got != "SETTLEMENT_PAY_OUT" {
				t.Fatalf("resumed pay-out = %s, want SETTLEMENT_PAY_OUT", got)
			}
			break
		}
		if status.Code(err) != codes.Aborted || grpcERCode(err) != "ER-409" {
			t.Fatalf("pay-out asked again after the restart: %v, want 409 ER-409 while the dead process's claim lasts, then success", err)
		}
		refusals++
		if time.Since(resumeAt) > 20*time.Second {
			t.Fatalf("the pay-out did not resume within 20s: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	mu.Lock()
	resumed := append([]string(nil), sent...)
	mu.Unlock()
	t.Logf("the pay-out resumed %v after the restart (%d refusals while the claim lasted); entries sent again: %v",
		time.Since(resumeAt).Round(time.Millisecond), refusals, resumed)
	for _, m := range resumed {
		if !slices.Contains(firstRun, m) {
			t.Errorf("the resumed pay-out sent entry %s, which the first run did not: %v", m, firstRun)
		}
	}
	if diff := cmp.Diff(afterPayOut, f.balances(t)); diff != "" {
		t.Errorf("balances after the resumed pay-out: funds moved twice? (-want +got):\n%s", diff)
	}
	relay.SetHook(nil)
	engine.mustAdvance(t, id, "SETTLEMENT_COMPLETE", "SETTLEMENT_COMPLETE")
	if diff := cmp.Diff(afterPayOut, f.balances(t)); diff != "" {
		t.Errorf("final balances (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, f.totals(t)); diff != "" {
		t.Errorf("totals per currency changed (-before +after):\n%s", diff)
	}
	if st := f.settlementStatus(t, s.client(demo.CompanyZTEST, company), requestID); st != "SETTLEMENT_COMPLETE" {
		t.Errorf("final status %s, want SETTLEMENT_COMPLETE", st)
	}
	f.reconciled(t, s)
}

// entryOf returns the journal entry id of a call to trading's RecordEntry or ResolveHold.
func entryOf(c fault.Call) (string, bool) {
	var m interface {
		proto.Message
		GetEntryId() string
	}
	switch c.Method {
	case tradingv1.TradingLedgerService_RecordEntry_FullMethodName:
		m = &tradingv1.RecordEntryRequest{}
	case tradingv1.TradingLedgerService_ResolveHold_FullMethodName:
		m = &tradingv1.ResolveHoldRequest{}
	default:
		return "", false
	}
	if err := proto.Unmarshal(c.Request, m); err != nil {
		return "", false
	}
	return m.GetEntryId(), true
}

// venueFixture is a trading venue of its own with ZTEST trading wallets written into
// trading's database, funded (with the venue's settlement wallets) by deposits through
// trading's ledger API as the settlement engine records them, and an operator of its own
// (demo.OnboardVenueOperator) that instructs its settlements through the gateway.
type venueFixture struct {
	venue    string
	operator string
	btc, eth string // ZTEST wallets at the venue
	store    *tradingstore.Store
	suite    *suite
}

func newVenueFixture(t *testing.T, s *suite, clientBTC, clientETH, venueBTC, venueETH string) venueFixture {
	t.Helper()
	client, err := mongodb.Connect(t.Context(), s.direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	suffix := strings.ToUpper(uuid.NewString()[:8])
	f := venueFixture{venue: "FAULT-" + suffix, operator: "OP" + suffix, store: tradingstore.New(client.Database("trading")), suite: s}
	if err := demo.OnboardVenueOperator(t.Context(), client, f.operator, f.venue); err != nil {
		t.Fatal(err)
	}
	f.btc = f.put(t, "BTC", clientBTC)
	f.eth = f.put(t, "ETH", clientETH)
	for currency, amount := range map[string]string{"BTC": venueBTC, "ETH": venueETH} {
		f.deposit(t, trading.VenueCompanyID(f.venue), trading.VenueWalletID(f.venue, currency), currency, amount)
	}
	return f
}

// ledger is trading's ledger API as the settlement engine.
func (f venueFixture) ledger(t *testing.T) (tradingv1.TradingLedgerServiceClient, context.Context) {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(f.suite.dir, "keys", "settlement-engine.pem"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(f.suite.stack.Services["trading"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, err := principal.NewSigner("settlement-engine", key, time.Minute).OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
	if err != nil {
		t.Fatal(err)
	}
	return tradingv1.NewTradingLedgerServiceClient(conn), ctx
}

// deposit credits a wallet through trading's ledger API.
func (f venueFixture) deposit(t *testing.T, companyID, walletID, currency, amount string) {
	t.Helper()
	if amount == "0" {
		return
	}
	ledger, ctx := f.ledger(t)
	if _, err := ledger.RecordDeposit(ctx, &tradingv1.RecordDepositRequest{DepositId: "FAULT-" + uuid.NewString(), CompanyId: companyID,
		WalletId: walletID, Currency: currency, Amount: amount}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("deposit into %s: %v", walletID, err)
	}
}

// reconciled fails the test unless trading's journal reconciles (the suite is the test's
// own, and quiet by now).
func (f venueFixture) reconciled(t *testing.T, s *suite) {
	t.Helper()
	ledger, ctx := f.ledger(t)
	resp, err := ledger.Reconcile(ctx, &tradingv1.ReconcileRequest{})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if v := resp.GetViolations(); len(v) > 0 {
		t.Errorf("trading's journal does not reconcile:\n%s", strings.Join(v, "\n"))
	}
}

func (f venueFixture) put(t *testing.T, currency, amount string) string {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	w := trading.Wallet{ID: trading.NewWalletID(demo.CompanyZTEST), VenueID: f.venue, Name: "Fault " + currency, Status: trading.StatusActive,
		CompanyID: demo.CompanyZTEST, Currency: currency, CustomProperties: `{}`,
		CreatedBy: demo.UserEmail("ztest", maker), CreatedAt: now, UpdatedAt: now, Version: 1, RequestID: "FAULT"}
	if err := f.store.PutWallet(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	f.deposit(t, demo.CompanyZTEST, w.ID, currency, amount)
	return w.ID
}

// amounts are one currency's balances of a wallet: available, ledger, pendingOut, pendingIn.
type amounts [4]string

// balances reads the four wallets of the fixture from trading's database.
func (f venueFixture) balances(t *testing.T) map[string]amounts {
	t.Helper()
	out := map[string]amounts{}
	for _, w := range []struct{ name, company, id string }{
		{"client BTC", demo.CompanyZTEST, f.btc}, {"client ETH", demo.CompanyZTEST, f.eth},
		{"venue BTC", trading.VenueCompanyID(f.venue), trading.VenueWalletID(f.venue, "BTC")},
		{"venue ETH", trading.VenueCompanyID(f.venue), trading.VenueWalletID(f.venue, "ETH")},
	} {
		got, err := f.store.Wallet(t.Context(), w.company, w.id)
		if errors.Is(err, apperr.ErrNotFound) {
			out[w.name] = amounts{"0", "0", "0", "0"} // a venue wallet is created by its first entry
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		b := got.Balances[0]
		out[w.name] = amounts{b.Available, b.Ledger, b.PendingOut, b.PendingIn}
	}
	return out
}

// totals adds up each balance kind of the fixture's wallets per currency, exactly.
func (f venueFixture) totals(t *testing.T) map[string]amounts {
	t.Helper()
	b := f.balances(t)
	sum := func(xs ...amounts) amounts {
		var out amounts
		for k := range out {
			total := new(big.Rat)
			for _, x := range xs {
				r, ok := new(big.Rat).SetString(x[k])
				if !ok {
					t.Fatalf("balance %q is not a decimal", x[k])
				}
				total.Add(total, r)
			}
			out[k] = total.RatString()
		}
		return out
	}
	return map[string]amounts{"BTC": sum(b["client BTC"], b["venue BTC"]), "ETH": sum(b["client ETH"], b["venue ETH"])}
}

// operatorClient signs as the venue's operator (a company-level call).
func (f venueFixture) operatorClient(t *testing.T) *signing.Client {
	return signedAs(t, f.suite.stack.GatewayURL, f.operator, company, demo.VenueOperatorKeys)
}

// settlementStatus reads the settlement's status through the gateway, as c's company.
func (f venueFixture) settlementStatus(t *testing.T, c *signing.Client, requestID string) string {
	t.Helper()
	var got struct {
		Status string `json:"status"`
	}
	mustOK(t, call(c, http.MethodPost, settlementStatusPath, mustJSON(t, map[string]string{"settlementRequestId": requestID})), &got)
	return got.Status
}

func legOf(wallet, currency, ledgerCode, amount string) map[string]any {
	return map[string]any{"counterparty": map[string]any{"type": "WALLET_ID", "value": wallet}, "currency": currency,
		"ledger": ledgerCode, "amount": amount, "externalSettlementId": "EXT-" + uuid.NewString()[:8], "executionDate": "2026-11-21"}
}

// instructionBody is an endpoint 3 body at venue.
func instructionBody(requestID, venue string, legs []map[string]any, nets ...map[string]any) map[string]any {
	return map[string]any{
		"header": map[string]any{"venueId": venue, "settlementRequestId": requestID, "status": "SETTLEMENT_RECEIVED",
			"requestDateTime": "2026-11-21T10:15:30.123Z", "instructionCount": len(legs), "errors": "",
			"receivableAddresses": []map[string]any{{"address": "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", "ledger": "XRP", "destinationTag": 2147483647, "memo": "desk"}}},
		"settlements": legs, "netSettlements": nets,
	}
}

// settlementEngine advances settlements as the settlement engine, straight to interchange.
// Its calls wait for interchange to be up (as a settlement engine retrying would).
type settlementEngine struct {
	client interchangev1.SettlementEngineServiceClient
	ctx    func() context.Context
	opts   []grpc.CallOption
}

func newSettlementEngine(t *testing.T, s *suite) settlementEngine {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(s.dir, "keys", "settlement-engine.pem"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(s.stack.Services["interchange"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer := principal.NewSigner("settlement-engine", key, time.Minute)
	return settlementEngine{client: interchangev1.NewSettlementEngineServiceClient(conn), opts: []grpc.CallOption{grpc.WaitForReady(true)}, ctx: func() context.Context {
		ctx, err := signer.OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
		if err != nil {
			panic(err)
		}
		return ctx
	}}
}

func (e settlementEngine) advance(trackingID, to string) (string, error) {
	ctx, cancel := context.WithTimeout(e.ctx(), 15*time.Second)
	defer cancel()
	resp, err := e.client.AdvanceSettlement(ctx, &interchangev1.AdvanceSettlementRequest{SettlementTrackingId: trackingID, ToStatus: to, Reason: "fault test"}, e.opts...)
	return resp.GetStatus(), err
}

type advanced struct {
	status string
	err    error
}

// advanceAsync asks for a transition in the background.
func (e settlementEngine) advanceAsync(trackingID, to string) <-chan advanced {
	out := make(chan advanced, 1)
	go func() {
		st, err := e.advance(trackingID, to)
		out <- advanced{st, err}
	}()
	return out
}

// instruct records an instruction for ZTEST as the venue's side and returns its tracking id.
func (e settlementEngine) instruct(t *testing.T, body map[string]any) string {
	t.Helper()
	var req interchangev1.CreateSettlementRequest
	if err := protojson.Unmarshal(mustJSON(t, body), &req); err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.InstructSettlement(e.ctx(), &interchangev1.InstructSettlementRequest{CompanyId: demo.CompanyZTEST, Instruction: &req}, e.opts...)
	if err != nil {
		t.Fatalf("InstructSettlement: %v", err)
	}
	return resp.GetResult().GetSettlementTrackingId()
}

func (e settlementEngine) mustAdvance(t *testing.T, trackingID, to, want string) {
	t.Helper()
	if got, err := e.advance(trackingID, to); err != nil || got != want {
		t.Fatalf("advance %s to %s = %q, %v; want %s", trackingID, to, got, err, want)
	}
}

// grpcERCode returns the ER code a gRPC error carries in its ErrorInfo.
func grpcERCode(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(interface{ GetReason() string }); ok {
			return info.GetReason()
		}
	}
	return ""
}
