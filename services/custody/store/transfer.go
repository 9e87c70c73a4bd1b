package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/journal"
)

// CreditTransfer records the credit of a transfer from trading (the caller checked the
// wallet, custody.CheckTransferCredit): one entry posted at once, custody.CreditEntryID, with
// the transfer id as business key, that debits custody.TransitTrading and credits the
// wallet's account in the asset's currency id. The same credit again moves nothing
// (Result.Replayed); the same transfer id with another wallet, currency or amount is a
// *journal.ExistsError naming the entry's first differing field.
func (s *Store) CreditTransfer(ctx context.Context, transferID string, c custody.Credit) (journal.Result, error) {
	cur := c.Currency.CurrencyID
	e := journal.Entry{ID: custody.CreditEntryID(transferID), Kind: journal.Single, Code: custody.CreditCode, BusinessKey: transferID,
		Legs: []journal.Leg{
			{Holder: custody.TransitTrading, Currency: cur, Side: journal.Debit, Amount: c.Amount},
			{Holder: c.WalletID, Currency: cur, Side: journal.Credit, Amount: c.Amount},
		}}
	res, err := s.journal.Record(ctx, e)
	if err != nil {
		return journal.Result{}, fmt.Errorf("credit transfer %s: %w", transferID, err)
	}
	return res, nil
}

// Reconcile recomputes every balance of custody's journal (journal.Journal.Reconcile), then
// reads the counters of its system accounts (world:…, custody.TransitTrading).
func (s *Store) Reconcile(ctx context.Context) (journal.Report, []journal.AccountCounters, error) {
	r, err := s.journal.Reconcile(ctx)
	if err != nil {
		return r, nil, fmt.Errorf("reconcile custody's journal: %w", err)
	}
	system, err := s.journal.SystemAccounts(ctx)
	if err != nil {
		return r, nil, err
	}
	return r, system, nil
}

// SystemAccount returns the counters of system account holder (custody.IsSystemAccount), one
// per currency id, by currency id, as stored; an account never used has none.
func (s *Store) SystemAccount(ctx context.Context, holder string) ([]journal.AccountCounters, error) {
	accounts, err := s.journal.Accounts(ctx, holder)
	if errors.Is(err, journal.ErrAccountNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]journal.AccountCounters, 0, len(accounts))
	for _, cur := range slices.Sorted(maps.Keys(accounts)) {
		out = append(out, journal.AccountCounters{Holder: holder, Currency: cur, Counters: accounts[cur]})
	}
	return out, nil
}
