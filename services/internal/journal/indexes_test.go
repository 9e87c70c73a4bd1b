package journal_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/journal"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes); the
// tests' holders live in a "wallets" collection of their own, read by _id.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, journal.Indexes(""), map[string]string{
		"journal_accounts find range(ledgerSeq)":                                    "Reconcile reads every holder that took an entry",
		"wallets find range(ledgerSeq)":                                             "Reconcile reads every holder that took an entry",
		"journal_entries find range(openUntil) sort(createdAt)":                     "the holds past their expiry are few (each pass voids them): open_until bounds them, then they are sorted",
		"journal_history find eq(holder p.cur) range(seq) sort(seq)":                "a holder has few currencies: a statement of one reads the holder's postings in order (holder_seq)",
		"journal_history find eq(holder p.cur) range(at seq) sort(seq)":             "a holder has few currencies: a statement of one reads the holder's postings in order (holder_seq)",
		"journal_history find eq(businessKey holder p.cur) range(seq) sort(seq)":    "a business object's postings are few (holder_business_seq), then filtered by currency",
		"journal_history find eq(businessKey holder p.cur) range(at seq) sort(seq)": "a business object's postings are few (holder_business_seq), then filtered by currency",
		"journal_entries find {}":                                                   "the simulation reads every entry to check the outcome",
	}))
}

// TestEveryQueryShape sends a statement query with each combination of its filters, on an
// empty journal, so that TestMain checks every shape History can send.
func TestEveryQueryShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := journal.New(journal.Config{DB: testdb.New(t)})
	if err := j.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, currency := range []string{"", "BTC"} {
		for _, key := range []string{"", "order-1"} {
			for _, since := range []time.Time{{}, from} {
				q := journal.HistoryQuery{Holder: "W1", Currency: currency, BusinessKey: key, From: since, Limit: 10}
				if _, err := j.History(ctx, q); err != nil {
					t.Errorf("History(%+v): %v", q, err)
				}
			}
		}
	}
}
