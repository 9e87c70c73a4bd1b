package server_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/grpcserver"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
	tradingserver "github.com/zcustody/suite/services/trading/server"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// Demo-shaped ids of the tests.
const (
	ztest      = "ZTEST"
	zacme      = "ZACME"
	venue      = "BYBIT"
	zbybit     = "ZBYBIT"   // operates BYBIT
	zderibit   = "ZDERIBIT" // operates DERIBIT
	deribitBTC = "ZTEST-TW-DERIBIT001"
	// bybitOwn is a wallet of BYBIT's operator at another venue.
	bybitOwn   = "ZBYBIT-TW-DERIBIT01"
	btcWallet  = "ZTEST-TW-BTC0000001"
	btcWallet2 = "ZTEST-TW-BTC0000002"
	ethWallet  = "ZTEST-TW-ETH0000001"
	usdcWallet = "ZTEST-TW-USDC000001"
	acmeBTC    = "ZACME-TW-BTC0000001"
)

// ledger is trading for real: its store on the test database, its ledger and wallet
// servers behind its own interceptor chain (token verification, authz), reached over
// bufconn. fail, when set, makes a call fail before it reaches trading (a network fault);
// lose makes a call fail after trading answered (the answer lost on its way back).
type ledger struct {
	store *tradingstore.Store
	mu    sync.Mutex
	fail  func(entryID string) error
	lose  func(entryID string) error
	seq   atomic.Int64
	// afterRead, when set, runs once after trading answered a GetSystemAccount.
	afterRead atomic.Pointer[func()]
}

func (l *ledger) failure() (before, after func(string) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail, l.lose
}

func (l *ledger) setFail(f func(string) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = f
}

func (l *ledger) setLose(f func(string) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lose = f
}

// intercept fails the calls l.fail picks before they reach trading, and loses the answers
// of those l.lose picks, by the entry id they carry.
func (l *ledger) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method == tradingv1.TradingLedgerService_GetSystemAccount_FullMethodName {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if f := l.afterRead.Swap(nil); f != nil {
			(*f)()
		}
		return err
	}
	r, ok := req.(interface{ GetEntryId() string })
	if !ok {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	before, after := l.failure()
	if before != nil {
		if err := before(r.GetEntryId()); err != nil {
			return err
		}
	}
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return err
	}
	if after != nil {
		return after(r.GetEntryId())
	}
	return nil
}

// fund sets a wallet's ledger balance through trading's journal: a deposit of what is
// missing, or a withdrawal of what is too much.
func (l *ledger) fund(t *testing.T, company, wallet, currency, target string) {
	t.Helper()
	ctx := context.Background()
	have := amount.Zero
	if acc, err := l.store.Journal().Accounts(ctx, wallet); err == nil {
		have = acc[currency].Ledger()
	}
	diff := amount.MustStored(target).Sub(have)
	id := fmt.Sprintf("fund-%d", l.seq.Add(1))
	switch {
	case diff.Sign() > 0:
		if _, err := l.store.Deposit(ctx, id, company, wallet, currency, diff); err != nil {
			t.Fatal(err)
		}
	case diff.Sign() < 0:
		e := journal.Entry{ID: id, Kind: journal.Single, Legs: []journal.Leg{
			{Holder: wallet, Currency: currency, Side: journal.Debit, Amount: diff.Neg()},
			{Holder: "world:withdrawals", Currency: currency, Side: journal.Credit, Amount: diff.Neg()}}}
		if _, err := l.store.RecordEntry(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// get returns a wallet's available/ledger/pendingOut in currency as strings.
func (l *ledger) get(t *testing.T, wallet, currency string) [3]string {
	t.Helper()
	acc, err := l.store.Journal().Accounts(context.Background(), wallet)
	if errors.Is(err, journal.ErrAccountNotFound) {
		return [3]string{"0", "0", "0"}
	}
	if err != nil {
		t.Fatal(err)
	}
	c := acc[currency]
	return [3]string{c.Available().String(), c.Ledger().String(), c.PendingOut().String()}
}

// reconciled fails the test unless trading's journal reconciles.
func (l *ledger) reconciled(t *testing.T) {
	t.Helper()
	r, err := l.store.Journal().Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Fatalf("trading's journal does not reconcile:\n%s", strings.Join(r.Violations, "\n"))
	}
}

type fixture struct {
	custody *custodySide
	svc     *server.Server
	wired   *app.Wired
	engine  interchangev1.SettlementEngineServiceServer
	ledger  *ledger
	clock   *clock
	logs    *logLines
	db      *mongo.Database
	keys    keys
}

// logLines keeps the service's JSON log lines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// matching returns the lines that contain every one of parts.
func (l *logLines) matching(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.buf.String()) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			out = append(out, line)
		}
	}
	return out
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// Keys of the test: interchange signs its calls to trading, the gateway the callers'
// forwarded principals.
type keys struct {
	interchange, gateway *principal.Signer
	verifier             *principal.Verifier
}

func newKeys(t *testing.T) keys {
	t.Helper()
	ixPub, ixKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	gwPub, gwKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return keys{interchange: principal.NewSigner("interchange", ixKey, time.Minute), gateway: principal.NewSigner("gateway", gwKey, time.Minute),
		verifier: principal.NewVerifier(map[string]ed25519.PublicKey{"interchange": ixPub, "gateway": gwPub})}
}

// startTrading serves trading's real servers on db over bufconn and returns a connection.
func startTrading(t *testing.T, db *mongo.Database, k keys, l *ledger) *grpc.ClientConn {
	t.Helper()
	st := tradingstore.New(db)
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.store = st
	srv := grpcserver.New(slog.New(slog.DiscardHandler), k.verifier, tradingserver.Policy())
	tradingv1.RegisterTradingServiceServer(srv.GRPC, tradingserver.New(st))
	tradingv1.RegisterTradingLedgerServiceServer(srv.GRPC, tradingserver.NewLedger(st))
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.GRPC.Serve(lis) }()
	t.Cleanup(srv.GRPC.Stop)
	conn, err := grpc.NewClient("passthrough:///trading", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithUnaryInterceptor(l.intercept))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// The trading wallets of the tests.
var testWallets = []struct{ id, company, venue, status, currency string }{
	{btcWallet, ztest, venue, "ACTIVE", "BTC"},
	{btcWallet2, ztest, venue, "ACTIVE", "BTC"},
	{ethWallet, ztest, venue, "ACTIVE", "ETH"},
	{usdcWallet, ztest, venue, "ACTIVE", "USDC"},
	{deribitBTC, ztest, "DERIBIT", "ACTIVE", "BTC"},
	{bybitOwn, zbybit, "DERIBIT", "ACTIVE", "BTC"},
	{"ZTEST-TW-NOVENUE001", ztest, "", "ACTIVE", "BTC"}, // bad data: held at no venue
	{"ZTEST-TW-CLOSED0001", ztest, venue, "DEACTIVATED", "BTC"},
	{acmeBTC, zacme, venue, "ACTIVE", "BTC"},
}

// newFixture starts trading and the settlement service on a fresh database; options change
// the service's dependencies (a short lease, the real clock, other bounds).
func newFixture(t *testing.T, options ...func(*app.Parts)) fixture {
	t.Helper()
	k := newKeys(t)
	db := testdb.New(t)
	l := &ledger{}
	conn := startTrading(t, db, k, l)
	for _, w := range testWallets {
		tw := trading.Wallet{ID: w.id, CompanyID: w.company, VenueID: w.venue, Name: w.id, Status: w.status, Currency: w.currency, CustomProperties: `{}`, Version: 1}
		if _, err := l.store.InsertWallet(context.Background(), tw); err != nil {
			t.Fatal(err)
		}
	}
	cs := startCustody(t, k)
	c := &clock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	logs := &logLines{}
	parts := app.Parts{DB: db, Ledger: tradingv1.NewTradingLedgerServiceClient(conn), Custody: custodyv1.NewCustodyLedgerServiceClient(cs.conn),
		Wallets: tradingv1.NewTradingServiceClient(conn), Signer: k.interchange, Now: c.Now, Lease: 10 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, o := range options {
		o(&parts)
	}
	wired, err := app.Wire(context.Background(), parts)
	if err != nil {
		t.Fatal(err)
	}
	// Every test here ends with trading's journal reconciled, whatever it left pending.
	t.Cleanup(func() { l.reconciled(t) })
	svc := wired.Server
	return fixture{custody: cs, svc: svc, wired: wired, engine: svc.Engine(), ledger: l, clock: c, logs: logs, db: db, keys: k}
}

// sweeper is one recovery sweep of interchange's sweeper (withdrawals, then settlements).
type sweeper func(context.Context)

// Once runs the sweep.
func (s sweeper) Once(ctx context.Context) { s(ctx) }

// sweeper returns the sweep that leaves a cut-short step grace to its caller.
func (f fixture) sweeper(grace time.Duration) sweeper { return sweeper(f.wired.Sweeper(grace)) }

// companyCtx is a company-level call of companyID, as the gateway forwards it: the
// principal, and its token in the incoming metadata (interchange forwards it to trading).
func (f fixture) companyCtx(companyID string) context.Context {
	return f.callerCtx(principal.Principal{Kind: principal.KindCompany, CompanyID: companyID})
}

// venueCtx is a company-level call of BYBIT's operator, which instructs the settlements.
func (f fixture) venueCtx() context.Context { return f.operatorCtx(zbybit, venue) }

// operatorCtx is a company-level call of a company that operates venues.
func (f fixture) operatorCtx(companyID string, venues ...string) context.Context {
	return f.callerCtx(principal.Principal{Kind: principal.KindCompany, CompanyID: companyID, VenueIDs: venues})
}

// callerCtx is a call of p as the gateway forwards it.
func (f fixture) callerCtx(p principal.Principal) context.Context {
	token, err := f.keys.gateway.Sign(p)
	if err != nil {
		panic(err)
	}
	p.Issuer = "gateway"
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(principal.MetadataKey, token))
	return principal.NewContext(ctx, p)
}

// engineCtx is a call of the settlement engine.
func engineCtx() context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: "settlement-engine", Issuer: "settlement-engine"})
}

func leg(wallet, currency, ledgerCode, amount string) *interchangev1.Settlement {
	return &interchangev1.Settlement{Counterparty: &interchangev1.Counterparty{Type: "WALLET_ID", Value: wallet},
		Currency: currency, Ledger: ledgerCode, Amount: amount}
}

// instruction is a valid instruction at BYBIT with the given legs and nets.
func instruction(requestID string, legs []*interchangev1.Settlement, nets ...*interchangev1.NetSettlement) *interchangev1.CreateSettlementRequest {
	return &interchangev1.CreateSettlementRequest{
		Header: &interchangev1.SettlementHeader{VenueId: venue, SettlementRequestId: requestID, InstructionCount: int32(len(legs)),
			RequestDateTime: "2026-11-21T10:00:00.000Z"},
		Settlements: legs, NetSettlements: nets}
}

func (f fixture) create(t *testing.T, req *interchangev1.CreateSettlementRequest) string {
	t.Helper()
	resp, err := f.svc.CreateSettlement(f.venueCtx(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetSettlementTrackingId()
}

// instruct records req for company through the settlement engine (payables allowed) and
// returns its tracking id.
func (f fixture) instruct(t *testing.T, company string, req *interchangev1.CreateSettlementRequest) string {
	t.Helper()
	resp, err := f.engine.InstructSettlement(engineCtx(), &interchangev1.InstructSettlementRequest{CompanyId: company, Instruction: req})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetResult().GetSettlementTrackingId()
}

// advance asks the engine for a transition and returns the resulting status and error.
func (f fixture) advance(trackingID, to string) (string, error) {
	resp, err := f.engine.AdvanceSettlement(engineCtx(), &interchangev1.AdvanceSettlementRequest{SettlementTrackingId: trackingID,
		ToStatus: to, Reason: "test"})
	return resp.GetStatus(), err
}

func (f fixture) mustAdvance(t *testing.T, trackingID, to, want string) {
	t.Helper()
	got, err := f.advance(trackingID, to)
	if err != nil || got != want {
		t.Fatalf("advance %s to %s = %q, %v; want %s", trackingID, to, got, err, want)
	}
}
