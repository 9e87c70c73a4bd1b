package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/server"
)

// system is the context of a call by an internal system whose token issuer is issuer.
func system(name, issuer string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: name, Issuer: issuer})
}

func leg(companyID, account, currency string, side tradingv1.LegSide, amount string) *tradingv1.JournalLeg {
	return &tradingv1.JournalLeg{CompanyId: companyID, Account: account, Currency: currency, Side: side, Amount: amount}
}

const (
	debit  = tradingv1.LegSide_LEG_SIDE_DEBIT
	credit = tradingv1.LegSide_LEG_SIDE_CREDIT
)

// TestJournalThroughTheLedgerAPI: a deposit, a hold that pays into a clearing account, its
// post, and the refusals and replays the settlement side relies on; the wallet's balances
// on endpoint 2 follow, and trading's journal reconciles.
func TestJournalThroughTheLedgerAPI(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	w := f.create(t, "R-W1", "Payer", "BTC")
	other := f.create(t, "R-W2", "Payer 2", "BTC")
	engine, ix := system("settlement-engine", "settlement-engine"), system("interchange", "interchange")
	dep := &tradingv1.RecordDepositRequest{DepositId: "D1", CompanyId: company, WalletId: w, Currency: "BTC", Amount: "5"}
	for _, want := range []tradingv1.EntryOutcome{tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED, tradingv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED} {
		if got, err := ledger.RecordDeposit(engine, dep); err != nil || got.GetOutcome() != want {
			t.Fatalf("RecordDeposit = %v, %v; want %s", got, err, want)
		}
	}
	hold := func(id, amount string) *tradingv1.RecordEntryRequest {
		return &tradingv1.RecordEntryRequest{EntryId: id, Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD, Code: "settlement.payin", BusinessKey: "S1",
			Legs: []*tradingv1.JournalLeg{leg(company, w, "BTC", debit, amount), leg("", "clearing:S1", "BTC", credit, amount)}}
	}
	steps := []struct {
		name        string
		give        *tradingv1.RecordEntryRequest
		wantOutcome tradingv1.EntryOutcome
		wantCode    codes.Code
		wantField   string
	}{
		{"hold", hold("S1:payin", "2"), tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED, codes.OK, ""},
		{"hold again", hold("S1:payin", "2"), tradingv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED, codes.OK, ""},
		{"same id, other amount", hold("S1:payin", "2.5"), 0, codes.AlreadyExists, "legs[0].amount"},
		{"beyond available", hold("S2:payin", "3.00000001"), tradingv1.EntryOutcome_ENTRY_OUTCOME_INSUFFICIENT_FUNDS, codes.OK, ""},
		{"finer than a satoshi", hold("S3:payin", "0.000000001"), 0, codes.InvalidArgument, "legs[0].amount"},
		{"another company's wallet", &tradingv1.RecordEntryRequest{EntryId: "X1", Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
			Legs: []*tradingv1.JournalLeg{leg("ZACME", other, "BTC", debit, "1"), leg("", "world:withdrawals", "BTC", credit, "1")}}, 0, codes.NotFound, "legs[0].account"},
		{"an unknown system account", &tradingv1.RecordEntryRequest{EntryId: "X2", Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
			Legs: []*tradingv1.JournalLeg{leg("", "world:anything", "BTC", debit, "1"), leg(company, w, "BTC", credit, "1")}}, 0, codes.InvalidArgument, "legs[0].companyId"},
		{"unbalanced", &tradingv1.RecordEntryRequest{EntryId: "X3", Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER,
			Legs: []*tradingv1.JournalLeg{leg(company, w, "BTC", debit, "1"), leg("", "world:withdrawals", "BTC", credit, "0.9")}}, 0, codes.InvalidArgument, "legs"},
	}
	for _, s := range steps {
		got, err := ledger.RecordEntry(ix, s.give)
		if status.Code(err) != s.wantCode || got.GetOutcome() != s.wantOutcome || fieldOf(err) != s.wantField {
			t.Errorf("%s: %v, %v; want outcome %s, code %s, field %q", s.name, got, err, s.wantOutcome, s.wantCode, s.wantField)
		}
	}
	resolve := func(id string, kind tradingv1.ResolveKind) tradingv1.EntryOutcome {
		got, err := ledger.ResolveHold(ix, &tradingv1.ResolveHoldRequest{EntryId: id, HoldId: "S1:payin", Kind: kind, Code: "settlement.payout"})
		if err != nil {
			t.Fatalf("ResolveHold(%s) = %v", id, err)
		}
		return got.GetOutcome()
	}
	if got := resolve("S1:payin:post", tradingv1.ResolveKind_RESOLVE_KIND_POST); got != tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED {
		t.Errorf("post = %s", got)
	}
	if got := resolve("S1:payin:void", tradingv1.ResolveKind_RESOLVE_KIND_VOID); got != tradingv1.EntryOutcome_ENTRY_OUTCOME_HOLD_ALREADY_POSTED {
		t.Errorf("void after the post = %s, want HOLD_ALREADY_POSTED", got)
	}
	resp, err := f.server.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{Ids: []string{w}})
	if err != nil {
		t.Fatal(err)
	}
	b := resp.GetItems()[0].GetBalances()[0]
	if b.GetAvailableBalance().GetAmount() != "3" || b.GetLedgerBalance().GetAmount() != "3" || b.GetPendingOutBalance().GetAmount() != "0" {
		t.Errorf("wallet after the deposit of 5 and the posted hold of 2 = %v, want 3 available and ledger", b)
	}
	rec, err := ledger.Reconcile(engine, &tradingv1.ReconcileRequest{})
	if err != nil || len(rec.GetViolations()) != 0 || rec.GetPostings() < 4 {
		t.Errorf("Reconcile = %v, %v; want no violation", rec, err)
	}
}

func fieldOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(interface{ GetMetadata() map[string]string }); ok {
			return info.GetMetadata()["field"]
		}
	}
	return ""
}

// TestSetPricesValuesWallets: a refreshed price shows in the fiat values of endpoint 2 at
// once, and an invalid refresh stores nothing.
func TestSetPricesValuesWallets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	w := trading.Wallet{ID: "ZTEST-TW-EURC000001", VenueID: "BYBIT", Name: "EURC", Status: trading.StatusActive, CompanyID: company,
		Currency: "EURC", CustomProperties: `{}`}
	if err := f.store.PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	f.fund(t, w.ID, "EURC", "10")
	fiat := func() string {
		resp, err := f.server.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{Ids: []string{w.ID}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetItems()[0].GetBalances()[0].GetAvailableBalance().GetFiatValue()
	}
	if got := fiat(); got != "0" {
		t.Fatalf("fiat value without a price = %q, want 0", got)
	}
	ctx := system("settlement-engine", "settlement-engine")
	bad := &tradingv1.SetPricesRequest{Prices: []*tradingv1.Price{{Currency: "EURC", Usd: "1.0850"}, {Currency: "DOGE", Usd: "0.1"}}}
	if _, err := ledger.SetPrices(ctx, bad); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("SetPrices(DOGE) = %v, want InvalidArgument", err)
	}
	if got := fiat(); got != "0" {
		t.Errorf("an invalid refresh stored a price: fiat value %q", got)
	}
	resp, err := ledger.SetPrices(ctx, &tradingv1.SetPricesRequest{Prices: bad.GetPrices()[:1]})
	if err != nil || resp.GetUpdated() != 1 {
		t.Fatalf("SetPrices = %v, %v; want 1 updated", resp, err)
	}
	if got := fiat(); got != "10.8500" {
		t.Errorf("fiat value of 10 EURC at 1.0850 = %q, want 10.8500", got)
	}
}

// TestGetPricesAnswersTheTable: interchange reads the price table as it was set, each price
// with when it was set.
func TestGetPricesAnswersTheTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	ix := system("interchange", "interchange")
	if got, err := ledger.GetPrices(ix, &tradingv1.GetPricesRequest{}); err != nil || len(got.GetPrices()) != 0 {
		t.Fatalf("GetPrices of an empty table = %v, %v; want none", got, err)
	}
	set := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, p := range []trading.Price{{Currency: "ETH", Price: "3200.00", UpdatedAt: set}, {Currency: "BTC", Price: "65000.00", UpdatedAt: set.Add(time.Minute)}} {
		if err := f.store.PutPrice(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ledger.GetPrices(ix, &tradingv1.GetPricesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*tradingv1.PriceQuote{{Currency: "BTC", Usd: "65000.00", UpdatedAt: "2026-03-01T12:01:00Z"}, {Currency: "ETH", Usd: "3200.00", UpdatedAt: "2026-03-01T12:00:00Z"}}
	if diff := cmp.Diff(want, got.GetPrices(), protocmp.Transform()); diff != "" {
		t.Errorf("GetPrices mismatch (-want +got):\n%s", diff)
	}
}
