package settlement_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/principal"
	"github.com/zcustody/suite/services/testdb"
)

// Demo-shaped ids of the tests.
const (
	ztest     = "ZTEST"
	zacme     = "ZACME"
	venue     = "BYBIT"
	btcWallet = "ZTEST-TW-BTC0000001"
	ethWallet = "ZTEST-TW-ETH0000001"
	acmeBTC   = "ZACME-TW-BTC0000001"
)

// balance is one wallet's balances in the fake ledger.
type balance struct{ available, ledger, pendingOut decimal.Decimal }

// fakeLedger stands in for trading's ledger API: movements apply at most once per id, a
// negative balance is refused (FailedPrecondition), venue settlement wallets appear on their
// first movement. fail, when set, can make a movement fail before it applies.
type fakeLedger struct {
	tradingv1.TradingLedgerServiceClient
	mu      sync.Mutex
	wallets map[string]*balance // company/wallet → balances
	applied map[string]bool
	fail    func(movementID string) error // called outside the lock: it may call the service
}

func (l *fakeLedger) failure() func(string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail
}

func (l *fakeLedger) ApplyMovement(ctx context.Context, in *tradingv1.ApplyMovementRequest, _ ...grpc.CallOption) (*tradingv1.ApplyMovementResponse, error) {
	if fail := l.failure(); fail != nil {
		if err := fail(in.GetMovementId()); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := in.GetCompanyId() + "/" + in.GetWalletId()
	b, ok := l.wallets[key]
	if !ok && strings.HasPrefix(in.GetCompanyId(), "VENUE-") && strings.Contains(in.GetWalletId(), "-ISW-") {
		b = &balance{}
		l.wallets[key] = b
	}
	if b == nil {
		return nil, status.Error(codes.NotFound, "no wallet "+key)
	}
	if l.applied[in.GetMovementId()] {
		return &tradingv1.ApplyMovementResponse{MovementId: in.GetMovementId()}, nil
	}
	next := balance{add(b.available, in.GetAvailableDelta()), add(b.ledger, in.GetLedgerDelta()), add(b.pendingOut, in.GetPendingOutDelta())}
	if next.available.IsNegative() || next.ledger.IsNegative() || next.pendingOut.IsNegative() {
		return nil, status.Error(codes.FailedPrecondition, "insufficient funds in "+key)
	}
	*b = next
	l.applied[in.GetMovementId()] = true
	return &tradingv1.ApplyMovementResponse{MovementId: in.GetMovementId(), Applied: true}, nil
}

func add(d decimal.Decimal, delta string) decimal.Decimal {
	if delta == "" {
		return d
	}
	return d.Add(decimal.RequireFromString(delta))
}

// fund sets a wallet's available and ledger balance.
func (l *fakeLedger) fund(company, wallet, amount string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := decimal.RequireFromString(amount)
	l.wallets[company+"/"+wallet] = &balance{available: a, ledger: a}
}

// get returns a wallet's available/ledger/pendingOut as strings.
func (l *fakeLedger) get(company, wallet string) [3]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.wallets[company+"/"+wallet]
	if !ok {
		return [3]string{"0", "0", "0"}
	}
	return [3]string{b.available.String(), b.ledger.String(), b.pendingOut.String()}
}

// fakeWallets answers trading's wallet search with fixed wallets, scoped to the company of
// the principal in the context (in the service the caller's token is forwarded).
type fakeWallets struct {
	tradingv1.TradingServiceClient
	wallets []*tradingv1.Wallet
}

func (f fakeWallets) SearchWallets(ctx context.Context, in *tradingv1.SearchWalletsRequest, _ ...grpc.CallOption) (*tradingv1.SearchWalletsResponse, error) {
	out := &tradingv1.SearchWalletsResponse{}
	caller, _ := principal.FromContext(ctx)
	for _, w := range f.wallets {
		for _, id := range in.GetIds() {
			if w.GetId() == id && w.GetCompanyId() == caller.CompanyID {
				out.Items = append(out.Items, w)
			}
		}
	}
	return out, nil
}

type fixture struct {
	svc    *settlement.Service
	engine interchangev1.SettlementEngineServiceServer
	ledger *fakeLedger
	clock  *clock
	logs   *logLines
	db     *mongo.Database
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

func newFixture(t *testing.T) fixture {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLedger{wallets: map[string]*balance{}, applied: map[string]bool{}}
	wallets := fakeWallets{wallets: []*tradingv1.Wallet{
		{Id: btcWallet, CompanyId: ztest, VenueId: venue, Status: "ACTIVE", Currency: "BTC"},
		{Id: ethWallet, CompanyId: ztest, VenueId: venue, Status: "ACTIVE", Currency: "ETH"},
		{Id: "ZTEST-TW-DERIBIT001", CompanyId: ztest, VenueId: "DERIBIT", Status: "ACTIVE", Currency: "BTC"},
		{Id: "ZTEST-TW-CLOSED0001", CompanyId: ztest, VenueId: venue, Status: "DEACTIVATED", Currency: "BTC"},
		{Id: acmeBTC, CompanyId: zacme, VenueId: venue, Status: "ACTIVE", Currency: "BTC"},
	}}
	c := &clock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	logs, db := &logLines{}, testdb.New(t)
	svc, err := settlement.Setup(context.Background(), settlement.Deps{DB: db, Trading: l, Wallets: wallets,
		Signer: principal.NewSigner("interchange", key, time.Minute), Now: c.Now, Lease: 10 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{svc: svc, engine: svc.Engine(), ledger: l, clock: c, logs: logs, db: db}
}

// companyCtx is a company-level call of companyID, as the gateway forwards it.
func companyCtx(companyID string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindCompany, CompanyID: companyID, Issuer: "gateway"})
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
	resp, err := f.svc.CreateSettlement(companyCtx(ztest), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetSettlementTrackingId()
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
