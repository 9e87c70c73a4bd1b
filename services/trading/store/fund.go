package store

import (
	"context"
	"fmt"

	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
)

// Fund gives wallet w the balance b through the journal, under entry ids derived from key
// (the same key records nothing twice): a deposit of the ledger balance, a hold of the
// pending-out part for a withdrawal, and a deposit still arriving (pending in). It is how
// demo data and tests fund wallets; nothing else writes a balance.
func (s *Store) Fund(ctx context.Context, key string, w trading.Wallet, b trading.Balance) error {
	ledger, err := amount.FromStored(b.Ledger)
	if err != nil {
		return err
	}
	if ledger.Sign() > 0 {
		if _, err := s.Deposit(ctx, key, w.CompanyID, w.ID, b.Currency, ledger); err != nil {
			return fmt.Errorf("fund %s: %w", key, err)
		}
	}
	holds := []struct{ suffix, amount, from, to string }{
		{":held", b.PendingOut, w.ID, trading.WorldWithdrawals},
		{":arriving", b.PendingIn, trading.WorldDeposits, w.ID},
	}
	for _, h := range holds {
		a, err := amount.FromStored(h.amount)
		if err != nil || a.Sign() <= 0 {
			continue
		}
		e := journal.Entry{ID: key + h.suffix, Kind: journal.Pending, Code: "fund", BusinessKey: key, Legs: []journal.Leg{
			{Holder: h.from, Currency: b.Currency, Side: journal.Debit, Amount: a},
			{Holder: h.to, Currency: b.Currency, Side: journal.Credit, Amount: a}}}
		if _, err := s.RecordEntry(ctx, e, []WalletRef{{CompanyID: w.CompanyID, WalletID: w.ID, Currency: b.Currency, Field: "walletId"}}); err != nil {
			return fmt.Errorf("fund %s: %w", e.ID, err)
		}
	}
	return nil
}

// Reconcile recomputes every balance of trading's journal; the report lists any difference.
func (s *Store) Reconcile(ctx context.Context) (violations []string, err error) {
	r, err := s.journal.Reconcile(ctx)
	return r.Violations, err
}
