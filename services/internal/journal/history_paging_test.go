package journal_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zcustody/suite/services/internal/journal"
)

// Regression tests of the statement's paging (issue "Ledger assurance", item 6): a client
// that pages a holder's history by the cursor (the last sequence number it saw) must see
// every posting that matches its filter, including postings still in flight (applied to the
// holder, their history row not written yet).

var errStalled = errors.New("stalled before the history rows")

// hooked returns a journal on f's database with markers pruned as soon as maxMarkers/2 are
// kept (0: the default) whose runners stop before they write history rows while stall is
// set (their entries stay recorded, their markers on the holders and no row), and which
// calls onHolderRead, once, before the next read of a wallet document once it is set.
func (f *fixture) hooked(maxMarkers int, stall *atomic.Bool, onHolderRead *atomic.Pointer[func()]) *journal.Journal {
	return journal.New(journal.Config{DB: f.db, Policy: policy, Collections: []string{"wallets"}, MaxMarkers: maxMarkers,
		Now: func() time.Time { return f.now }, Step: func(_ context.Context, op journal.Op) error {
			if stall != nil && stall.Load() && op.Collection == "journal_history" && op.Command == "InsertMany" && !op.After {
				return errStalled
			}
			if onHolderRead != nil && op.Collection == "wallets" && op.Command == "FindOne" {
				if fn := onHolderRead.Swap(nil); fn != nil {
					(*fn)()
				}
			}
			return nil
		}})
}

// deposit of a into w under business key key.
func keyed(id, key, w, a string) journal.Entry {
	e := transfer(id, "sys:external", w, "BTC", a)
	e.Code, e.BusinessKey = "test.deposit", key
	return e
}

// pageAll pages q's statement by the cursor the way the history extension does (the next
// page starts after the last sequence number seen) and returns the entries seen.
func pageAll(t *testing.T, j *journal.Journal, q journal.HistoryQuery) []string {
	t.Helper()
	var seen []string
	for range 50 {
		page, err := j.History(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return seen
		}
		for _, p := range page {
			seen = append(seen, fmt.Sprintf("%d:%s", p.Seq, p.Entry))
		}
		q.AfterSeq = page[len(page)-1].Seq
	}
	t.Fatalf("history of %s does not end", q.Holder)
	return nil
}

// TestHistoryByReferenceSeesPostingsInFlight: a posting of business object K whose history
// row is not written yet (its marker alone on the holder, and a marker names no business
// key) is on the statement of K, and the cursor never passes it. Before the fix the marker
// was left out of every page filtered by reference while the pages' cursor moved past it.
func TestHistoryByReferenceSeesPostingsInFlight(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1")
	var stall atomic.Bool
	stalling := f.hooked(0, &stall, nil)
	f.mustRecord(keyed("k-1", "K", "W1", "1"))
	stall.Store(true)
	if _, err := stalling.Record(f.ctx, keyed("k-2", "K", "W1", "2")); !errors.Is(err, errStalled) {
		t.Fatalf("record k-2 = %v, want it stalled before its history rows", err)
	}
	stall.Store(false)
	f.mustRecord(keyed("other", "L", "W1", "4"))
	f.mustRecord(keyed("k-3", "K", "W1", "8"))

	want := "[1:k-1 2:k-2 4:k-3]"
	for _, limit := range []int{1, 2, 10} {
		if got := pageAll(t, f.j, journal.HistoryQuery{Holder: "W1", BusinessKey: "K", Limit: limit}); fmt.Sprint(got) != want {
			t.Errorf("statement of K paged by %d = %v, want %s (k-2 in flight)", limit, got, want)
		}
	}
	page, err := f.j.History(f.ctx, journal.HistoryQuery{Holder: "W1", BusinessKey: "K", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range page {
		if p.BusinessKey != "K" || p.Code != "test.deposit" {
			t.Errorf("posting %d (%s) of K's statement shows reference %q and type %q, want K and test.deposit", p.Seq, p.Entry, p.BusinessKey, p.Code)
		}
	}
	// Once k-2 is finished (its row written), the statement is the same.
	f.mustRecord(keyed("k-2", "K", "W1", "2"))
	if got := pageAll(t, f.j, journal.HistoryQuery{Holder: "W1", BusinessKey: "K", Limit: 1}); fmt.Sprint(got) != want {
		t.Errorf("statement of K once k-2 is finished = %v, want %s", got, want)
	}
	f.reconciled()
}

// TestHistoryPageLosesNoPostingFinishedBetweenItsReads: a page reads the holder's history
// rows and its markers. A posting in flight whose row is written and whose marker is pruned
// between the two reads is in the page (or a later one): before the fix the rows were read
// first, so such a posting was in neither read while later postings' markers were, and the
// cursor passed it.
func TestHistoryPageLosesNoPostingFinishedBetweenItsReads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1")
	var stall atomic.Bool
	var onRead atomic.Pointer[func()]
	j := f.hooked(4, &stall, &onRead) // markers of final entries are pruned once two are kept
	record := func(e journal.Entry) {
		t.Helper()
		if _, err := j.Record(f.ctx, e); err != nil {
			t.Fatalf("record %s: %v", e.ID, err)
		}
	}
	record(keyed("dep", "D", "W1", "1"))
	stall.Store(true)
	if _, err := j.Record(f.ctx, keyed("slow", "S", "W1", "2")); !errors.Is(err, errStalled) {
		t.Fatalf("record slow = %v, want it stalled before its history rows", err)
	}
	stall.Store(false)
	// While a page is read, "slow" is finished and three more entries prune its marker.
	finish := func() {
		record(keyed("slow", "S", "W1", "2"))
		for i := range 3 {
			record(keyed(fmt.Sprintf("later-%d", i), "L", "W1", "1"))
		}
	}
	onRead.Store(&finish)
	got := pageAll(t, j, journal.HistoryQuery{Holder: "W1", Limit: 10})
	if onRead.Load() != nil {
		t.Fatal("the page never read the holder")
	}
	if want := "[1:dep 2:slow 3:later-0 4:later-1 5:later-2]"; fmt.Sprint(got) != want {
		t.Errorf("statement read while slow finished = %v, want %s", got, want)
	}
	f.reconciled()
}

func (f *fixture) mustRecord(e journal.Entry) {
	f.t.Helper()
	if _, err := f.j.Record(f.ctx, e); err != nil {
		f.t.Fatalf("record %s: %v", e.ID, err)
	}
}
