package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/journal"
)

// TestStatementReads: the statement extensions' reads of a custody wallet (its currency ids,
// a page of its history, by reference too, and its balances as of a time), so that TestMain
// checks their queries against custody's indexes.
func TestStatementReads(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-STATEMENT", "eth-eth", "12.5")
	if err := st.PutWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	if got, err := st.WalletCurrencies(ctx, "ZT", w.ID); err != nil || fmt.Sprint(got) != "[eth-eth]" {
		t.Errorf("WalletCurrencies = %v, %v; want [eth-eth]", got, err)
	}
	if _, err := st.WalletCurrencies(ctx, "ZA", w.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another company's wallet: %v, want ErrNotFound", err)
	}
	for _, q := range []journal.HistoryQuery{
		{Holder: w.ID, Limit: 10},
		{Holder: w.ID, BusinessKey: "put:" + w.ID + ":eth-eth", Limit: 10},
	} {
		page, err := st.Journal().HistoryPage(ctx, q)
		if err != nil || len(page.Postings) != 1 || page.Postings[0].After.Ledger().String() != "12.5" {
			t.Errorf("HistoryPage(%+v) = %+v, %v; want the opening deposit", q, page, err)
		}
	}
	balances, err := st.Journal().BalancesAt(ctx, w.ID, time.Now().Add(time.Minute))
	if err != nil || len(balances) != 1 || balances[0].Currency != "eth-eth" || balances[0].Counters.Available().String() != "12.5" {
		t.Errorf("BalancesAt = %+v, %v; want 12.5 eth-eth", balances, err)
	}
}
