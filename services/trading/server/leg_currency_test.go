package server_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading/server"
)

// TestLegInAnotherCurrencyThanItsWallet: a trading wallet holds one currency; a journal leg
// on it in another currency is refused, 400 ER-111 naming the leg's currency, and nothing
// moves. A deposit in another currency is refused the same way, naming currency.
func TestLegInAnotherCurrencyThanItsWallet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	w := f.create(t, "R-CUR", "BTC only", "BTC")
	f.fund(t, w, "BTC", "1")
	ix, engine := system("interchange", "interchange"), system("settlement-engine", "settlement-engine")
	entry := &tradingv1.RecordEntryRequest{EntryId: "CUR-1", Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER, Code: "test", BusinessKey: "CUR-1",
		Legs: []*tradingv1.JournalLeg{leg("", "world:deposits", "ETH", debit, "2"), leg(company, w, "ETH", credit, "2")}}
	_, err := ledger.RecordEntry(ix, entry)
	if status.Code(err) != codes.InvalidArgument || apiError(err) != "ER-111 legs[1].currency" {
		t.Errorf("an ETH leg on a BTC wallet: %v, want InvalidArgument ER-111 on legs[1].currency", err)
	}
	_, err = ledger.RecordDeposit(engine, &tradingv1.RecordDepositRequest{DepositId: "CUR-D", CompanyId: company, WalletId: w, Currency: "ETH", Amount: "2"})
	if status.Code(err) != codes.InvalidArgument || apiError(err) != "ER-111 currency" {
		t.Errorf("an ETH deposit into a BTC wallet: %v, want InvalidArgument ER-111 on currency", err)
	}
	if got := f.count(t, "journal_entries"); got != 1 {
		t.Errorf("%d journal entries, want the funding deposit alone", got)
	}
	if got := readHistory(t, f, w, 10); len(got) != 1 {
		t.Errorf("history = %v, want the funding deposit alone", got)
	}
	entry.Legs[0].Currency, entry.Legs[1].Currency = "BTC", "BTC"
	if got, err := ledger.RecordEntry(ix, entry); err != nil || got.GetOutcome() != tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED {
		t.Errorf("the same legs in BTC = %v, %v; want applied", got, err)
	}
}
