package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
)

// Custody's journal: its accounts are the custody wallets (their documents carry them, one
// per currency id) and, in the journal's own collection, unconstrained and created on first
// use: the world outside (world:deposits pays deposits in, world:withdrawals receives
// withdrawals) and custody.TransitTrading, which pays the transfers from trading in.
const (
	worldDeposits    = custody.WorldPrefix + "deposits"
	worldWithdrawals = custody.WorldPrefix + "withdrawals"
)

// journalPrefix names the journal's collections.
const journalPrefix = "journal"

func newJournal(db *mongo.Database, now func() time.Time) *journal.Journal {
	var j *journal.Journal
	j = journal.New(journal.Config{DB: db, Prefix: journalPrefix, Collections: []string{colWallets}, Now: now, EventEntity: catalog.EntityCustodyEntry, Policy: func(h string) journal.HolderPolicy {
		if custody.IsSystemAccount(h) {
			return journal.HolderPolicy{Collection: j.SystemCollection(), Create: true}
		}
		return journal.HolderPolicy{Collection: colWallets, Constrained: true}
	}})
	return j
}

// Journal is custody's journal (recovery and reconciliation run on it).
func (s *Store) Journal() *journal.Journal { return s.journal }

// fund gives wallet id the balance b through the journal, under entry ids derived from key
// (the same key records nothing twice): a deposit of the ledger balance, a hold of the
// pending-out part for a withdrawal, and a deposit still arriving (pending in). The
// available balance must be the ledger balance less the pending-out part.
func (s *Store) fund(ctx context.Context, key, id string, b custody.AssetBalance) error {
	ledger, pendingOut := amount.MustStored(b.LedgerBalance), amount.MustStored(b.PendingOutBalance)
	if !ledger.Sub(pendingOut).Equal(amount.MustStored(b.AvailableBalance)) {
		return fmt.Errorf("fund %s %s: available %s is not ledger %s less pending out %s", id, b.CurrencyID, b.AvailableBalance, ledger, pendingOut)
	}
	steps := []struct {
		suffix   string
		kind     journal.Kind
		amount   amount.Amount
		from, to string
	}{
		{":deposit", journal.Single, ledger, worldDeposits, id},
		{":held", journal.Pending, pendingOut, id, worldWithdrawals},
		{":arriving", journal.Pending, amount.MustStored(b.PendingInBalance), worldDeposits, id},
	}
	for _, st := range steps {
		if st.amount.Sign() <= 0 {
			continue
		}
		e := journal.Entry{ID: key + st.suffix, Kind: st.kind, Code: "fund", BusinessKey: key, Legs: []journal.Leg{
			{Holder: st.from, Currency: b.CurrencyID, Side: journal.Debit, Amount: st.amount},
			{Holder: st.to, Currency: b.CurrencyID, Side: journal.Credit, Amount: st.amount}}}
		if _, err := s.journal.Record(ctx, e); err != nil {
			return fmt.Errorf("fund %s: %w", e.ID, err)
		}
	}
	return nil
}
