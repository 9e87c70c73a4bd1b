package journal_test

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/services/internal/journal"
)

// TestReconcileComparesPostingsWithEntries: reconciliation finds what folding the postings
// alone cannot: an entry whose legs say something else than what was posted, and an entry
// marked applied that never reached one of its holders.
func TestReconcileComparesPostingsWithEntries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep", "W1", "BTC", "5")
	if _, err := f.j.Record(f.ctx, transfer("t1", "W1", "W2", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(2 * time.Minute) // the entries are final before the scan
	f.reconciled()

	// t1's legs rewritten behind the journal's back: the postings still fold, the trial
	// balance still holds.
	entries := f.db.Collection("journal_entries")
	if _, err := entries.UpdateOne(f.ctx, bson.D{{Key: "_id", Value: "t1"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "legs.0.amt", Value: "2"}, {Key: "legs.1.amt", Value: "2"}}}}); err != nil {
		t.Fatal(err)
	}
	// An entry recorded as applied that no holder ever took.
	ghost := transfer("ghost", "W2", "W1", "BTC", "1")
	if _, err := entries.InsertOne(f.ctx, bson.D{{Key: "_id", Value: ghost.ID}, {Key: "kind", Value: journal.Single}, {Key: "fp", Value: "x"},
		{Key: "state", Value: journal.StateApplied}, {Key: "code", Value: ghost.Code}, {Key: "businessKey", Value: ghost.BusinessKey},
		{Key: "legs", Value: bson.A{
			bson.D{{Key: "h", Value: "W2"}, {Key: "cur", Value: "BTC"}, {Key: "side", Value: journal.Debit}, {Key: "amt", Value: "1"}},
			bson.D{{Key: "h", Value: "W1"}, {Key: "cur", Value: "BTC"}, {Key: "side", Value: journal.Credit}, {Key: "amt", Value: "1"}}}},
		{Key: "createdAt", Value: f.now.Add(-time.Hour)}, {Key: "updatedAt", Value: f.now.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	r, err := f.j.Reconcile(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.Violations, "\n")
	for _, want := range []string{"entry t1 on W1 posted", "entry t1 on W2 posted", "applied entry ghost is missing on W1", "applied entry ghost is missing on W2"} {
		if !strings.Contains(got, want) {
			t.Errorf("reconciliation did not report %q; it found:\n%s", want, got)
		}
	}
}
