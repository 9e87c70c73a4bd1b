package e2e_test

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// Paths of the settlement endpoints and extensions.
const (
	settlementCreatePath = "/v3/api/interchange/settlement/create"
	settlementStatusPath = "/v3/api/interchange/settlement/status"
	settlementSearchPath = "/v3/api/interchange/settlement/search"
	withdrawalPath       = "/v3/api/interchange/withdrawal/confirm"
)

// venueFixture is a trading venue of its own (so no other test touches its balances), with
// ZTEST trading wallets written into trading's database (no REST call creates one without
// a service request) and funded by deposits through trading's ledger API, as the settlement
// engine records them; its operator is a company of its own (demo.OnboardVenueOperator), which
// instructs its settlements. Everything the tests assert goes through the gateway (and the
// internal gRPC methods the settlement engine calls); at the end trading's journal must
// reconcile.
type venueFixture struct {
	venue, operator    string
	btc, eth, inactive string // ZTEST wallets at the venue
	store              *tradingstore.Store
	db                 *mongo.Database // trading's
}

// newVenueFixture funds ZTEST's BTC and ETH wallets and the venue's BTC and ETH settlement
// wallets with the given amounts.
func newVenueFixture(t *testing.T, clientBTC, clientETH, venueBTC, venueETH string) venueFixture {
	t.Helper()
	client, err := mongodb.Connect(t.Context(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	suffix := strings.ToUpper(uuid.NewString()[:8])
	f := venueFixture{venue: "E2E-" + suffix, operator: "OP" + suffix, store: tradingstore.New(client.Database("trading")), db: client.Database("trading")}
	if err := demo.OnboardVenueOperator(t.Context(), client, f.operator, f.venue); err != nil {
		t.Fatal(err)
	}
	f.btc = f.put(t, "BTC", clientBTC, trading.StatusActive)
	f.eth = f.put(t, "ETH", clientETH, trading.StatusActive)
	f.inactive = f.put(t, "BTC", "1", trading.StatusDeactivated)
	for currency, amount := range map[string]string{"BTC": venueBTC, "ETH": venueETH} {
		deposit(t, trading.VenueCompanyID(f.venue), trading.VenueWalletID(f.venue, currency), currency, amount)
	}
	t.Cleanup(func() { reconciled(t) })
	return f
}

// deposit credits a wallet through trading's ledger API, as the settlement engine.
func deposit(t *testing.T, companyID, walletID, currency, amount string) {
	t.Helper()
	if amount == "0" {
		return
	}
	ledger, ctx := newPriceFeed(t)
	_, err := ledger.RecordDeposit(ctx(), &tradingv1.RecordDepositRequest{DepositId: "E2E-" + uuid.NewString(), CompanyId: companyID,
		WalletId: walletID, Currency: currency, Amount: amount})
	if err != nil {
		t.Fatalf("deposit %s %s into %s: %v", amount, currency, walletID, err)
	}
}

// reconciled fails the test unless trading's journal reconciles. Other tests move money
// meanwhile, which a reconciliation may see half-applied: a difference must persist over
// several attempts to count.
func reconciled(t *testing.T) {
	t.Helper()
	ledger, ctx := newPriceFeed(t)
	md, _ := metadata.FromOutgoingContext(ctx())
	bg := metadata.NewOutgoingContext(context.Background(), md) // the test's own context has ended
	var last []string
	for range 10 {
		resp, err := ledger.Reconcile(bg, &tradingv1.ReconcileRequest{})
		if err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		if last = resp.GetViolations(); len(last) == 0 {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Errorf("trading's journal does not reconcile:\n%s", strings.Join(last, "\n"))
}

// operatorClient signs as the venue's operator, the company (role company) or one of its
// users, with the keys demo.OnboardVenueOperator gave it (BYBIT's operator's).
func (f venueFixture) operatorClient(role string) *signing.Client {
	c := &signing.Client{BaseURL: env.stack.GatewayURL, Company: f.operator, Key: env.keys[demo.CompanyZBYBIT], HTTP: &http.Client{Timeout: 30 * time.Second}}
	if role != company {
		c.Submitter = demo.UserEmail(short(f.operator), role)
	}
	return c
}

func (f venueFixture) put(t *testing.T, currency, amount, status string) string {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	w := trading.Wallet{ID: trading.NewWalletID(demo.CompanyZTEST), VenueID: f.venue, Name: "E2E " + currency, Status: status,
		CompanyID: demo.CompanyZTEST, Currency: currency, CustomProperties: `{}`,
		CreatedBy: demo.UserEmail("ztest", maker), CreatedAt: now, UpdatedAt: now, Version: 1, RequestID: "E2E"}
	if err := f.store.PutWallet(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	deposit(t, demo.CompanyZTEST, w.ID, currency, amount)
	return w.ID
}

// amounts are one currency's balances of a wallet: available, ledger, pendingOut, pendingIn.
type amounts [4]string

// clientBalances reads ZTEST wallets through endpoint 2.
func clientBalances(t *testing.T, ids ...string) map[string]amounts {
	t.Helper()
	type amount struct {
		Amount string `json:"amount"`
	}
	var got struct {
		Items []struct {
			ID       string `json:"id"`
			Balances []struct {
				Available  amount `json:"availableBalance"`
				Ledger     amount `json:"ledgerBalance"`
				PendingOut amount `json:"pendingOutBalance"`
				PendingIn  amount `json:"pendingInBalance"`
			} `json:"balances"`
		} `json:"items"`
	}
	body := mustJSON(t, map[string]any{"ids": ids, "paginationLimit": len(ids)})
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/trading/wallets", body), &got)
	out := map[string]amounts{}
	for _, w := range got.Items {
		b := w.Balances[0]
		out[w.ID] = amounts{b.Available.Amount, b.Ledger.Amount, b.PendingOut.Amount, b.PendingIn.Amount}
	}
	return out
}

// venueBalance reads a venue settlement wallet (no company can read it through the API).
func (f venueFixture) venueBalance(t *testing.T, currency string) amounts {
	t.Helper()
	w, err := f.store.Wallet(t.Context(), trading.VenueCompanyID(f.venue), trading.VenueWalletID(f.venue, currency))
	if errors.Is(err, apperr.ErrNotFound) {
		return amounts{"0", "0", "0", "0"} // created by its first entry
	}
	if err != nil {
		t.Fatal(err)
	}
	b := w.Balances[0]
	return amounts{b.Available, b.Ledger, b.PendingOut, b.PendingIn}
}

// totals adds up each balance kind of every wallet of the fixture, per currency, exactly.
func (f venueFixture) totals(t *testing.T) map[string]amounts {
	t.Helper()
	client := clientBalances(t, f.btc, f.eth)
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
	return map[string]amounts{
		"BTC": sum(client[f.btc], f.venueBalance(t, "BTC")),
		"ETH": sum(client[f.eth], f.venueBalance(t, "ETH")),
	}
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

type settlementAnswer struct {
	SettlementRequestID  string            `json:"settlementRequestId"`
	SettlementTrackingID string            `json:"settlementTrackingId"`
	Status               string            `json:"status"`
	Errors               map[string]string `json:"errors"`
}

// createSettlement records an instruction through endpoint 3, as the venue's operator.
func (f venueFixture) createSettlement(t *testing.T, body map[string]any) settlementAnswer {
	t.Helper()
	var got settlementAnswer
	wantOK(t, do(t, f.operatorClient(company), http.MethodPost, settlementCreatePath, mustJSON(t, body)), &got)
	return got
}

// settlementStatus reads a settlement's status as c's company.
func settlementStatus(t *testing.T, c *signing.Client, requestID string) response {
	t.Helper()
	return do(t, c, http.MethodPost, settlementStatusPath, mustJSON(t, map[string]string{"settlementRequestId": requestID}))
}

// internalConn dials a service directly and returns a context maker signing as the
// settlement engine (the demo key the local stack trusts).
func internalConn(t *testing.T, service string) (*grpc.ClientConn, func() context.Context) {
	t.Helper()
	return internalConnAs(t, service, "settlement-engine", "settlement-engine.pem")
}

// internalConnAs is internalConn signing as system with its demo key file (in the stack's
// keys folder).
func internalConnAs(t *testing.T, service, system, keyFile string) (*grpc.ClientConn, func() context.Context) {
	t.Helper()
	key, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", keyFile))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(env.stack.Services[service], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	signer := principal.NewSigner(system, key, time.Minute)
	return conn, func() context.Context {
		ctx, err := signer.OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindSystem, System: system})
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
}

// settlementEngine advances settlements as the settlement engine.
type settlementEngine struct {
	client interchangev1.SettlementEngineServiceClient
	ctx    func() context.Context
}

func newSettlementEngine(t *testing.T) settlementEngine {
	t.Helper()
	conn, ctx := internalConn(t, "interchange")
	return settlementEngine{client: interchangev1.NewSettlementEngineServiceClient(conn), ctx: ctx}
}

func (e settlementEngine) advance(trackingID, to string) (string, error) {
	resp, err := e.client.AdvanceSettlement(e.ctx(), &interchangev1.AdvanceSettlementRequest{SettlementTrackingId: trackingID, ToStatus: to, Reason: "e2e"})
	return resp.GetStatus(), err
}

func (e settlementEngine) mustAdvance(t *testing.T, trackingID, to, want string) {
	t.Helper()
	if got, err := e.advance(trackingID, to); err != nil || got != want {
		t.Fatalf("advance %s to %s = %q, %v; want %s", trackingID, to, got, err, want)
	}
}

// newPriceFeed returns trading's ledger API as the settlement engine.
func newPriceFeed(t *testing.T) (tradingv1.TradingLedgerServiceClient, func() context.Context) {
	t.Helper()
	conn, ctx := internalConn(t, "trading")
	return tradingv1.NewTradingLedgerServiceClient(conn), ctx
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
