package journal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/amount"
)

// Regression tests of the late runners a review found (issue "Ledger assurance"): a runner
// that read a holder or an entry, paused, and wrote after another runner had finished the
// entry and the holder had pruned its markers. Each steps the late runner by hand through
// the very write it makes.

// lateFixture is a journal with tiny marker lists (markers are pruned after two writes), a
// constrained wallet collection and unconstrained system accounts.
type lateFixture struct {
	t   *testing.T
	ctx context.Context
	j   *Journal
}

func newLateFixture(t *testing.T, wallets ...string) *lateFixture {
	t.Helper()
	ctx := context.Background()
	db := testdb.New(t)
	j := New(Config{DB: db, MaxMarkers: 4, Collections: []string{"wallets"}, Policy: func(h string) HolderPolicy {
		if strings.HasPrefix(h, "W") {
			return HolderPolicy{Collection: "wallets", Constrained: true}
		}
		return HolderPolicy{Collection: "journal_accounts", Create: true}
	}})
	if err := j.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range wallets {
		if _, err := db.Collection("wallets").InsertOne(ctx, bson.D{{Key: "_id", Value: w}}); err != nil {
			t.Fatal(err)
		}
	}
	return &lateFixture{t: t, ctx: ctx, j: j}
}

func btc(h string, side Side, a string) Leg {
	return Leg{Holder: h, Currency: "BTC", Side: side, Amount: amount.MustStored(a)}
}

func (f *lateFixture) record(e Entry) error {
	f.t.Helper()
	if e.Kind == "" {
		e.Kind = Single
	}
	_, err := f.j.Record(f.ctx, e)
	return err
}

func (f *lateFixture) mustRecord(e Entry) {
	f.t.Helper()
	if err := f.record(e); err != nil {
		f.t.Fatalf("record %s: %v", e.ID, err)
	}
}

// churn records n deposits from the world to h, enough to prune h's markers of final entries.
func (f *lateFixture) churn(prefix, h string, n int) {
	f.t.Helper()
	for i := range n {
		f.mustRecord(Entry{ID: prefix + string(rune('a'+i)), Legs: []Leg{btc("sys:churn", Debit, "1"), btc(h, Credit, "1")}})
	}
}

func (f *lateFixture) holder(h string) holderDoc {
	f.t.Helper()
	doc, err := f.j.readHolder(f.ctx, h)
	if err != nil {
		f.t.Fatal(err)
	}
	return doc
}

func (f *lateFixture) counters(h string) Counters {
	f.t.Helper()
	c, err := f.holder(h).counters("BTC")
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *lateFixture) reconciled() {
	f.t.Helper()
	r, err := f.j.Reconcile(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if !r.Clean() {
		f.t.Errorf("reconciliation found differences:\n%s", strings.Join(r.Violations, "\n"))
	}
}

// TestLateCompensatingRunnerUndoesNothingTwice: runner A refused E on W2 and undid it on W1
// (E is rejected); W1 then pruned both of E's markers. A late runner B, which had read W1
// carrying E and not yet E~, writes its undo: it must write nothing. Before the fix its
// inverse was written whenever W1 lacked E~, crediting the payer a second time (available
// 4 → 7 here).
func TestLateCompensatingRunnerUndoesNothingTwice(t *testing.T) {
	t.Parallel()
	f := newLateFixture(t, "W1", "W2")
	f.mustRecord(Entry{ID: "fund", Legs: []Leg{btc("sys:world", Debit, "7"), btc("W1", Credit, "7")}})
	f.mustRecord(Entry{ID: "spent", Legs: []Leg{btc("W1", Debit, "3"), btc("sys:out", Credit, "3")}})
	e := Entry{ID: "E", Kind: Single, Legs: []Leg{btc("W1", Debit, "3"), btc("W2", Debit, "1"), btc("sys:out", Credit, "4")}}
	if err := e.validate(f.j.cfg.MaxLegs); err != nil {
		t.Fatal(err)
	}
	// Runner A: the precheck passes W1 and finds W2 short, so the refusal would be recorded at
	// once; to get the applied-then-compensated path, A is stepped by hand: E recorded, W1
	// applied, W2 refused (blocked, compensating, W1 undone, rejected).
	if _, fresh, err := f.j.storedOrNew(f.ctx, e); err != nil || !fresh {
		t.Fatalf("insert E: fresh %v, %v", fresh, err)
	}
	if err := f.j.apply(f.ctx, e); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("runner A: %v, want insufficient", err)
	}
	w1 := f.holder("W1")
	applied, hasE := w1.marker("E")
	if _, hasUndo := w1.marker("E~"); !hasE || !hasUndo {
		t.Fatalf("W1 markers %v: want E applied then undone", w1.Markers)
	}
	if got := f.counters("W1").Available().String(); got != "4" {
		t.Fatalf("W1 available after A = %s, want 4", got)
	}
	f.churn("late-c-", "W1", 4)
	w1 = f.holder("W1")
	if _, still := w1.marker("E~"); still {
		t.Fatal("E~ was not pruned from W1: the test proves nothing")
	}
	// Runner B read W1 with E and without E~, and now writes the inverse of E's posting.
	inverse := map[string]Delta{}
	for _, p := range applied.Postings {
		d, err := p.Delta.counters()
		if err != nil {
			t.Fatal(err)
		}
		inverse[p.Currency] = d.Neg()
	}
	_, _, err := f.j.applyChange(f.ctx, change{holder: "W1", k: compensation("E"), delta: inverse, mode: modeUndo})
	if err != nil && !errors.Is(err, errPreviouslyCompleted) && !errors.Is(err, errNothingHere) {
		t.Fatalf("late undo: %v", err)
	}
	if got := f.counters("W1").Available().String(); got != "8" { // 4 back from E, plus 4 of churn
		t.Errorf("W1 available after the late undo = %s, want 8 (E undone once)", got)
	}
	f.reconciled()
}

// TestLateRefusingRunnerUndoesNoAppliedEntry: runner A read W1 short of E's amount and paused;
// runner B then applied E everywhere (funds had arrived) and W1 pruned E's marker. A's
// refusal must move nothing and leave no marker. Before the fix, A blocked W1 with a stray
// E~ and its compensation undid E where its marker was still kept (sys:out's credit went
// from 3 to 0 and the trial balance was off).
func TestLateRefusingRunnerUndoesNoAppliedEntry(t *testing.T) {
	t.Parallel()
	f := newLateFixture(t, "W1")
	f.mustRecord(Entry{ID: "fund", Legs: []Leg{btc("sys:world", Debit, "3"), btc("W1", Credit, "3")}})
	e := Entry{ID: "E", Kind: Single, Legs: []Leg{btc("W1", Debit, "3"), btc("sys:out", Credit, "3")}}
	f.mustRecord(e) // runner B
	f.churn("late-r-", "W1", 4)
	if _, still := f.holder("W1").marker("E"); still {
		t.Fatal("E was not pruned from W1: the test proves nothing")
	}
	if _, kept := f.holder("sys:out").marker("E"); !kept {
		t.Fatal("sys:out lost E's marker: the test proves nothing")
	}
	err := f.j.refuse(f.ctx, e, "W1", &InsufficientError{Entry: "E", Holder: "W1", Currency: "BTC"})
	if err != nil {
		t.Errorf("late refusal of an applied entry: %v, want nil (E stands)", err)
	}
	if got := f.counters("sys:out").CreditsPosted.String(); got != "3" {
		t.Errorf("sys:out credits after the late refusal = %s, want 3", got)
	}
	if _, stray := f.holder("W1").marker("E~"); stray {
		t.Error("the late refusal left a stray E~ marker on W1")
	}
	if d, _, _ := f.j.lookup(f.ctx, "E"); d.State != StateApplied {
		t.Errorf("E is %s, want applied", d.State)
	}
	f.reconciled()
}

// TestResolutionUnderATakenIDLocksNothing: a resolution whose entry id is taken by another
// entry is refused without claiming the hold, so the hold can still be voided; and a
// resolution left open under a taken id (written before the fix) neither locks its hold for
// good nor stops the recovery pass from finishing the resolutions after it.
func TestResolutionUnderATakenIDLocksNothing(t *testing.T) {
	t.Parallel()
	f := newLateFixture(t, "W1")
	now := time.Now()
	f.mustRecord(Entry{ID: "fund", Legs: []Leg{btc("sys:world", Debit, "9"), btc("W1", Credit, "9")}})
	f.mustRecord(Entry{ID: "taken", Legs: []Leg{btc("sys:world", Debit, "1"), btc("sys:other", Credit, "1")}})
	for _, h := range []string{"H1", "H2", "H3"} {
		f.mustRecord(Entry{ID: h, Kind: Pending, Legs: []Leg{btc("W1", Debit, "1"), btc("sys:out", Credit, "1")}})
	}
	_, err := f.j.Resolve(f.ctx, "taken", "H1", Post, "test.post")
	if !errors.Is(err, ErrEntryExists) {
		t.Fatalf("post under a taken id: %v, want ErrEntryExists", err)
	}
	if _, err := f.j.Resolve(f.ctx, "H1:void", "H1", Void, "test.void"); err != nil {
		t.Errorf("void after the refused post: %v; the hold must not be locked", err)
	}
	// A claim under the taken id left by an earlier version, listed first, then a crashed void
	// of H3 (its claim, no entry).
	for _, r := range []resolutionDoc{
		{HoldID: "H2", By: "taken", Kind: Post, Code: "test.post", State: "open", At: now.Add(-time.Hour)},
		{HoldID: "H3", By: "H3:void", Kind: Void, Code: "test.void", State: "open", At: now.Add(-time.Hour)},
	} {
		if _, err := f.j.resolutions.InsertOne(f.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.j.Recover(f.ctx, now); err != nil {
		t.Logf("recovery reported: %v", err)
	}
	if state, by, err := f.j.HoldState(f.ctx, "H3"); err != nil || state != "void" || by != "H3:void" {
		t.Errorf("H3 after recovery: %q by %q (%v); want the crashed void finished", state, by, err)
	}
	if _, err := f.j.Resolve(f.ctx, "H2:void", "H2", Void, "test.void"); err != nil {
		t.Errorf("void of H2 after recovery: %v; the bad claim must be released", err)
	}
	if got := f.counters("W1").DebitsPending.String(); got != "0" {
		t.Errorf("W1 still holds %s, want every hold released", got)
	}
	f.reconciled()
}
