package server_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/server"
)

// TestPartialPostThroughTheLedgerAPI: a POST naming amounts posts them and releases the rest
// of the hold in the same entry; amounts over the hold are refused on posted.
func TestPartialPostThroughTheLedgerAPI(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	w := f.create(t, "R-PP1", "Partial", "BTC")
	f.fund(t, w, "BTC", "5")
	ix := system("interchange", "interchange")
	if _, err := ledger.RecordEntry(ix, &tradingv1.RecordEntryRequest{EntryId: "WD1:hold", Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD, Code: "withdrawal.hold",
		BusinessKey: "WD1", Legs: []*tradingv1.JournalLeg{leg(company, w, "BTC", debit, "2"), leg("", trading.WorldWithdrawals, "BTC", credit, "2")}}); err != nil {
		t.Fatal(err)
	}
	post := func(kind tradingv1.ResolveKind, amount string) (*tradingv1.ResolveHoldResponse, error) {
		return ledger.ResolveHold(ix, &tradingv1.ResolveHoldRequest{EntryId: "WD1:post", HoldId: "WD1:hold", Kind: kind, Code: "withdrawal.post",
			Posted: []*tradingv1.JournalLeg{leg("", w, "BTC", debit, amount), leg("", trading.WorldWithdrawals, "BTC", credit, amount)}})
	}
	for _, tt := range []struct {
		name      string
		kind      tradingv1.ResolveKind
		amount    string
		wantCode  codes.Code
		wantField string
	}{
		{"over the hold", tradingv1.ResolveKind_RESOLVE_KIND_POST, "2.1", codes.InvalidArgument, "posted"},
		{"amounts on a void", tradingv1.ResolveKind_RESOLVE_KIND_VOID, "1", codes.InvalidArgument, "posted"},
		{"finer than a satoshi", tradingv1.ResolveKind_RESOLVE_KIND_POST, "1.000000001", codes.InvalidArgument, "posted[0].amount"},
	} {
		if _, err := post(tt.kind, tt.amount); status.Code(err) != tt.wantCode || fieldOf(err) != tt.wantField {
			t.Errorf("%s: %v; want %s on %s", tt.name, err, tt.wantCode, tt.wantField)
		}
	}
	for _, want := range []tradingv1.EntryOutcome{tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED, tradingv1.EntryOutcome_ENTRY_OUTCOME_REPLAYED} {
		if got, err := post(tradingv1.ResolveKind_RESOLVE_KIND_POST, "1.9"); err != nil || got.GetOutcome() != want {
			t.Fatalf("partial post = %v, %v; want %s", got, err, want)
		}
	}
	resp, err := f.server.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{Ids: []string{w}})
	if err != nil {
		t.Fatal(err)
	}
	if b := resp.GetItems()[0].GetBalances()[0]; b.GetAvailableBalance().GetAmount() != "3.1" || b.GetLedgerBalance().GetAmount() != "3.1" ||
		b.GetPendingOutBalance().GetAmount() != "0" {
		t.Errorf("wallet after a hold of 2 posted for 1.9 = %v, want 3.1 available and ledger, nothing pending", b)
	}
}

// TestLedgerReversalThroughThePlugin: the service desk's 0x0009-001 reverses an entry of
// trading's journal under the request's reversal id, and the wallet's statement links the
// reversal to the entry it reverses.
func TestLedgerReversalThroughThePlugin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.create(t, "R-REV1", "Reversed", "BTC")
	ledger := server.NewLedger(f.store)
	if _, err := ledger.RecordDeposit(system("settlement-engine", "settlement-engine"),
		&tradingv1.RecordDepositRequest{DepositId: "D-WRONG", CompanyId: company, WalletId: w, Currency: "BTC", Amount: "0.7"}); err != nil {
		t.Fatal(err)
	}
	r := request(t, "SERV-REQ-REV1", "0x0009-001", map[string]any{"journal": "trading", "entryId": trading.DepositEntryID("D-WRONG")})
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}); err != nil {
		t.Fatal(err)
	}
	hist, err := f.server.ListWalletHistory(user(company), &tradingv1.ListWalletHistoryRequest{WalletId: w})
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, p := range hist.GetItems() {
		links = append(links, p.GetEntryId()+"→"+p.GetReverses()+" "+p.GetLedgerBalance())
	}
	want := []string{"dep:D-WRONG→ 0.7", "SERV-REQ-REV1:reversal→dep:D-WRONG 0"}
	if len(links) != 2 || links[0] != want[0] || links[1] != want[1] {
		t.Errorf("statement = %v, want %v", links, want)
	}
	// Nothing is left to reverse: a second full reversal is 409 on amounts.
	again := request(t, "SERV-REQ-REV2", "0x0009-001", map[string]any{"journal": "trading", "entryId": trading.DepositEntryID("D-WRONG")})
	if _, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: again}); status.Code(err) != codes.FailedPrecondition || fieldOf(err) != "amounts" {
		t.Errorf("a second full reversal: %v; want FailedPrecondition on amounts", err)
	}
}
