package store_test

import (
	"os"
	"testing"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/custody/store"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes), the
// relay's and the reads of the log the events tests relay to included.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(store.Indexes(), events.LogIndexes("events")...), map[string]string{
		"wallets find range(ledgerSeq)":          "the journal's Reconcile reads every holder that took an entry",
		"journal_accounts find range(ledgerSeq)": "the journal's Reconcile reads every holder that took an entry",
	}))
}
