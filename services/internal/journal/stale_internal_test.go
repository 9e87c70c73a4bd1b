package journal

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/amount"
)

// TestStaleRunnerAppliesNothingTwice: a runner that read an entry as recorded and comes back
// after another runner applied it everywhere and its markers were pruned into the history
// must not apply it again (it checks the entry's state before writing a marker).
func TestStaleRunnerAppliesNothingTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	j := New(Config{DB: db, MaxMarkers: 4})
	if err := j.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	leg := func(h string, side Side, a string) Leg {
		return Leg{Holder: h, Currency: "BTC", Side: side, Amount: amount.MustStored(a)}
	}
	e := Entry{ID: "t-stale", Kind: Single, Legs: []Leg{leg("sys:a", Debit, "1"), leg("sys:b", Credit, "1")}}
	if _, err := j.Record(ctx, e); err != nil {
		t.Fatal(err)
	}
	for i := range 6 { // enough writes on both holders to prune t-stale's markers
		id := "t-" + string(rune('a'+i))
		if _, err := j.Record(ctx, Entry{ID: id, Kind: Single, Legs: []Leg{leg("sys:a", Debit, "1"), leg("sys:b", Credit, "1")}}); err != nil {
			t.Fatal(err)
		}
	}
	var doc holderDoc
	if err := db.Collection("journal_accounts").FindOne(ctx, bson.D{{Key: "_id", Value: "sys:b"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, still := doc.marker("t-stale"); still {
		t.Fatal("t-stale's marker was not pruned: the test proves nothing")
	}
	if err := j.apply(ctx, e); err != nil { // the stale runner
		t.Fatal(err)
	}
	acc, err := j.Accounts(ctx, "sys:b")
	if err != nil || acc["BTC"].CreditsPosted.String() != "7" {
		t.Errorf("sys:b after a stale runner = %v, %v; want 7 credited (t-stale once)", acc, err)
	}
	if r, err := j.Reconcile(ctx); err != nil || !r.Clean() {
		t.Errorf("reconcile: %+v, %v", r.Violations, err)
	}
}

// TestExpiryLeavesAnotherResolutionToFinish: a void whose claim was inserted but whose entry
// never was (a crash) is not closed by the expiry of the same hold: the recovery pass
// finishes that void, and the hold is released once.
func TestExpiryLeavesAnotherResolutionToFinish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	j := New(Config{DB: db, Now: func() time.Time { return now }})
	if err := j.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	two := amount.MustStored("2")
	if _, err := j.Record(ctx, Entry{ID: "dep", Kind: Single, Legs: []Leg{{Holder: "sys:world", Currency: "BTC", Side: Debit, Amount: two}, {Holder: "sys:w1", Currency: "BTC", Side: Credit, Amount: two}}}); err != nil {
		t.Fatal(err)
	}
	hold := Entry{ID: "h", Kind: Pending, ExpiresAt: now.Add(time.Minute), Legs: []Leg{{Holder: "sys:w1", Currency: "BTC", Side: Debit, Amount: two}, {Holder: "sys:out", Currency: "BTC", Side: Credit, Amount: two}}}
	if _, err := j.Record(ctx, hold); err != nil {
		t.Fatal(err)
	}
	// The crashed void: its claim, no entry.
	if _, err := db.Collection("journal_resolutions").InsertOne(ctx, resolutionDoc{HoldID: "h", By: "h:void", Kind: Void, Code: "test.void", State: "open", At: now}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := j.Recover(ctx, now.Add(-time.Hour)); err != nil { // the claim is younger than the grace
		t.Fatal(err)
	}
	if _, err := j.Recover(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	state, by, err := j.HoldState(ctx, "h")
	acc, aerr := j.Accounts(ctx, "sys:w1")
	if err != nil || aerr != nil || state != "void" || by != "h:void" || !acc["BTC"].DebitsPending.IsZero() {
		t.Errorf("hold %q by %q, w1 %v (%v, %v); want the crashed void finished and nothing held", state, by, acc, err, aerr)
	}
	if _, found, _ := j.lookup(ctx, "h:void"); !found {
		t.Error("the void entry was never written")
	}
}
