package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

// TestStatementReads: the statement extensions' reads of a trading wallet (its currency, a
// page of its history, by reference too, and its balances as of a time), so that TestMain
// checks their queries against trading's indexes; a leg in another currency than its
// wallet's is refused before the journal records anything.
func TestStatementReads(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	insert(t, st, wallet("ZT-TW-STATEMENT1", "ZT", "BYBIT", "Statement", trading.StatusActive, "BTC", "maker@zt", t0))
	if got, err := st.WalletCurrencies(ctx, "ZT", "ZT-TW-STATEMENT1"); err != nil || len(got) != 1 || got[0] != "BTC" {
		t.Errorf("WalletCurrencies = %v, %v; want [BTC]", got, err)
	}
	if _, err := st.WalletCurrencies(ctx, "ZA", "ZT-TW-STATEMENT1"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another company's wallet: %v, want ErrNotFound", err)
	}
	if _, err := st.Deposit(ctx, "DEP-1", "ZT", "ZT-TW-STATEMENT1", "BTC", amount.MustStored("1.5")); err != nil {
		t.Fatal(err)
	}
	_, err := st.Deposit(ctx, "DEP-2", "ZT", "ZT-TW-STATEMENT1", "ETH", amount.MustStored("1"))
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.CodeCurrency || e.Field != "currency" {
		t.Errorf("an ETH deposit into a BTC wallet: %v, want ER-111 on currency", err)
	}
	_, err = st.RecordEntry(ctx, journal.Entry{ID: "E-1", Kind: journal.Single, Code: "test", Legs: []journal.Leg{
		{Holder: trading.WorldDeposits, Currency: "ETH", Side: journal.Debit, Amount: amount.MustStored("1")},
		{Holder: "ZT-TW-STATEMENT1", Currency: "ETH", Side: journal.Credit, Amount: amount.MustStored("1")},
	}}, []store.WalletRef{{CompanyID: "ZT", WalletID: "ZT-TW-STATEMENT1", Currency: "ETH", Field: "legs[1].account", CurrencyField: "legs[1].currency"}})
	if !errors.As(err, &e) || e.Code != apperr.CodeCurrency || e.Field != "legs[1].currency" {
		t.Errorf("an ETH leg on a BTC wallet: %v, want ER-111 on legs[1].currency", err)
	}
	for _, q := range []journal.HistoryQuery{
		{Holder: "ZT-TW-STATEMENT1", Limit: 10},
		{Holder: "ZT-TW-STATEMENT1", BusinessKey: "DEP-1", Limit: 10, From: t0},
	} {
		page, err := st.Journal().HistoryPage(ctx, q)
		if err != nil || len(page.Postings) != 1 || page.More || page.Last != 1 {
			t.Errorf("HistoryPage(%+v) = %+v, %v; want the deposit alone", q, page, err)
		}
	}
	balances, err := st.Journal().BalancesAt(ctx, "ZT-TW-STATEMENT1", time.Now().Add(time.Minute), "BTC")
	if err != nil || len(balances) != 1 || balances[0].Seq != 1 || balances[0].Counters.Ledger().String() != "1.5" {
		t.Errorf("BalancesAt = %+v, %v; want 1.5 BTC after posting 1", balances, err)
	}
}
