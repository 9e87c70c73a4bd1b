package journal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/journal"
)

// back names the amount an account of the original gets back.
func back(holder, cur, a string) journal.Leg {
	return journal.Leg{Holder: holder, Currency: cur, Amount: amt(a)}
}

// TestReverse: a reversal is a new single entry naming the entry it reverses, with its legs'
// sides swapped, for at most its amounts in total over all its reversals.
func TestReverse(t *testing.T) {
	t.Parallel()
	type step struct {
		id      string
		amounts []journal.Leg // nil: in full
		want    error
	}
	tests := []struct {
		name   string
		steps  []step
		wantW1 string // W1 after the steps (W1 paid 1 of its 5 to W2 in t-1)
		wantW2 string
	}{
		{name: "full", steps: []step{{id: "rev-1"}}, wantW1: "5/5/0/0", wantW2: "0/0/0/0"},
		{name: "partial", steps: []step{{id: "rev-1", amounts: []journal.Leg{back("W1", "BTC", "0.4"), back("W2", "BTC", "0.4")}}},
			wantW1: "4.4/4.4/0/0", wantW2: "0.6/0.6/0/0"},
		{name: "two partials up to the total", steps: []step{
			{id: "rev-1", amounts: []journal.Leg{back("W1", "BTC", "0.4"), back("W2", "BTC", "0.4")}},
			{id: "rev-2", amounts: []journal.Leg{back("W2", "BTC", "0.6"), back("W1", "BTC", "0.6")}},
			{id: "rev-3", amounts: []journal.Leg{back("W1", "BTC", "0.00000001"), back("W2", "BTC", "0.00000001")}, want: journal.ErrReversalExceeds},
		}, wantW1: "5/5/0/0", wantW2: "0/0/0/0"},
		{name: "full after a partial", steps: []step{
			{id: "rev-1", amounts: []journal.Leg{back("W1", "BTC", "0.4"), back("W2", "BTC", "0.4")}},
			{id: "rev-2", want: journal.ErrReversalExceeds},
		}, wantW1: "4.4/4.4/0/0", wantW2: "0.6/0.6/0/0"},
		{name: "over the original", steps: []step{
			{id: "rev-1", amounts: []journal.Leg{back("W1", "BTC", "1.1"), back("W2", "BTC", "1.1")}, want: journal.ErrReversalExceeds},
		}, wantW1: "4/4/0/0", wantW2: "1/1/0/0"},
		{name: "unbalanced", steps: []step{
			{id: "rev-1", amounts: []journal.Leg{back("W1", "BTC", "0.5"), back("W2", "BTC", "0.4")}, want: journal.ErrUnbalanced},
		}, wantW1: "4/4/0/0", wantW2: "1/1/0/0"},
		{name: "an account outside the original", steps: []step{
			{id: "rev-1", amounts: []journal.Leg{back("W3", "BTC", "0.5"), back("W2", "BTC", "0.5")}, want: journal.ErrInvalidEntry},
		}, wantW1: "4/4/0/0", wantW2: "1/1/0/0"},
		{name: "nothing given back", steps: []step{
			{id: "rev-1", amounts: []journal.Leg{back("W1", "BTC", "0"), back("W2", "BTC", "0")}, want: journal.ErrInvalidEntry},
		}, wantW1: "4/4/0/0", wantW2: "1/1/0/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "W1", "W2", "W3")
			f.deposit("dep-1", "W1", "BTC", "5")
			if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "1")); err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.steps {
				if _, err := f.j.Reverse(f.ctx, s.id, "t-1", s.amounts, "test.reversal"); !errors.Is(err, s.want) {
					t.Fatalf("%s: %v, want %v", s.id, err, s.want)
				}
				if s.want != nil {
					continue
				}
				if res, err := f.j.Reverse(f.ctx, s.id, "t-1", s.amounts, "test.reversal"); err != nil || !res.Replayed {
					t.Fatalf("retry of %s = %+v, %v; want a replay", s.id, res, err)
				}
			}
			if got := f.balance("W1", "BTC"); got != tt.wantW1 {
				t.Errorf("W1 = %s, want %s", got, tt.wantW1)
			}
			if got := f.balance("W2", "BTC"); got != tt.wantW2 {
				t.Errorf("W2 = %s, want %s", got, tt.wantW2)
			}
			f.reconciled()
		})
	}
}

// A reversal's history rows and its link: the statement names the reversal entry, and the
// link names the entry it reverses; a retry with other amounts names the field.
func TestReversalLinkAndRetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "BTC", "5")
	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	part := []journal.Leg{back("W1", "BTC", "0.25"), back("W2", "BTC", "0.25")}
	if _, err := f.j.Reverse(f.ctx, "rev-1", "t-1", part, "test.reversal"); err != nil {
		t.Fatal(err)
	}
	var exists *journal.ExistsError
	other := []journal.Leg{back("W1", "BTC", "0.3"), back("W2", "BTC", "0.3")}
	if _, err := f.j.Reverse(f.ctx, "rev-1", "t-1", other, "test.reversal"); !errors.As(err, &exists) || exists.Field != "legs[0].amount" {
		t.Errorf("retry with other amounts: %v; want ExistsError naming legs[0].amount", err)
	}
	if _, err := f.j.Reverse(f.ctx, "rev-1", "dep-1", nil, "test.reversal"); !errors.As(err, &exists) {
		t.Errorf("the id reversing another entry: %v; want ExistsError", err)
	}
	lookalike := journal.Entry{ID: "rev-1", Kind: journal.Single, Code: "test.reversal", BusinessKey: "t-1", Legs: []journal.Leg{
		{Holder: "W1", Currency: "BTC", Side: journal.Credit, Amount: amt("0.25")},
		{Holder: "W2", Currency: "BTC", Side: journal.Debit, Amount: amt("0.25")}}}
	if _, err := f.j.Record(f.ctx, lookalike); !errors.As(err, &exists) || exists.Field != "reverses" {
		t.Errorf("a transfer like the reversal under its id: %v; want ExistsError naming reverses", err)
	}
	hist, err := f.j.History(f.ctx, journal.HistoryQuery{Holder: "W2", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	var ids []string
	for _, p := range hist {
		rows = append(rows, fmt.Sprintf("%s:%s:%s", p.Entry, p.BusinessKey, p.Delta.Ledger()))
		ids = append(ids, p.Entry)
	}
	if fmt.Sprint(rows) != "[t-1:t-1:1 rev-1:t-1:-0.25]" {
		t.Errorf("W2's statement = %v; want the transfer and its reversal under the transfer's reference", rows)
	}
	links, err := f.j.ReversalLinks(f.ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(links) != "map[rev-1:t-1]" {
		t.Errorf("links = %v, want rev-1 → t-1", links)
	}
	left, err := f.j.Reversible(f.ctx, "t-1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range left {
		got = append(got, fmt.Sprintf("%s:%s:%s", l.Holder, l.Side, l.Amount))
	}
	if fmt.Sprint(got) != "[W1:D:0.75 W2:C:0.75]" {
		t.Errorf("still reversible = %v", got)
	}
	// An entry naming another it reverses is recorded by Reverse only.
	forged := transfer("forged", "W2", "W1", "BTC", "0.75")
	forged.Reverses = "t-1"
	if _, err := f.j.Record(f.ctx, forged); !errors.Is(err, journal.ErrInvalidEntry) {
		t.Errorf("Record of a reversal: %v, want ErrInvalidEntry", err)
	}
	f.reconciled()
}

// Only applied single and post entries are reversed; a partial post gives back what it
// posted; a reversal can fail on funds, which frees what it claimed.
func TestReversalRefusals(t *testing.T) {
	t.Parallel()
	const D, C = journal.Debit, journal.Credit
	f := newFixture(t, "W1", "W2", "W3")
	f.deposit("dep-1", "W1", "BTC", "5")
	if _, err := f.j.Record(f.ctx, transfer("t-over", "W2", "W1", "BTC", "1")); !errors.Is(err, journal.ErrInsufficient) {
		t.Fatalf("overdraft: %v", err)
	}
	if _, err := f.j.Record(f.ctx, hold("h-1", "W1", "sys:out", "BTC", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Record(f.ctx, hold("h-2", "W1", "sys:out", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Resolve(f.ctx, "h-2:void", "h-2", journal.Void, "test.void"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, original string
		want           error
	}{
		{"rejected entry", "t-over", journal.ErrNotReversible},
		{"hold", "h-1", journal.ErrNotReversible},
		{"void", "h-2:void", journal.ErrNotReversible},
		{"unknown entry", "t-none", journal.ErrEntryNotFound},
	}
	for _, tt := range tests {
		if _, err := f.j.Reverse(f.ctx, "rev:"+tt.original, tt.original, nil, "test.reversal"); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		if _, err := f.j.PlanReversal(f.ctx, tt.original, nil, "test.reversal"); !errors.Is(err, tt.want) {
			t.Errorf("plan of %s: %v, want %v", tt.name, err, tt.want)
		}
	}

	// A withdrawal of 2 posted for 1.5: its reversal gives back 1.5 at most.
	if _, err := f.j.ResolvePartial(f.ctx, "h-1:post", "h-1", []journal.Leg{posted("W1", "BTC", D, "1.5"), posted("sys:out", "BTC", C, "1.5")}, "test.post"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Reverse(f.ctx, "rev:h-1:post", "h-1:post", []journal.Leg{back("W1", "BTC", "2"), back("sys:out", "BTC", "2")}, "test.reversal"); !errors.Is(err, journal.ErrReversalExceeds) {
		t.Errorf("reversal of more than posted: %v, want ErrReversalExceeds", err)
	}
	if _, err := f.j.Reverse(f.ctx, "rev:h-1:post", "h-1:post", nil, "test.reversal"); err != nil {
		t.Fatalf("reversal of the partial post: %v", err)
	}
	if got, want := f.balance("W1", "BTC"), "5/5/0/0"; got != want {
		t.Errorf("W1 after the reversal of the withdrawal = %s, want %s", got, want)
	}

	// W1 → W3, W3 spends it, the reversal lacks funds: recorded rejected, its claim freed.
	if _, err := f.j.Record(f.ctx, transfer("t-3", "W1", "W3", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Record(f.ctx, transfer("t-spent", "W3", "W2", "BTC", "0.9")); err != nil {
		t.Fatal(err)
	}
	var short *journal.InsufficientError
	if _, err := f.j.Reverse(f.ctx, "rev:t-3", "t-3", nil, "test.reversal"); !errors.As(err, &short) || short.Holder != "W3" {
		t.Fatalf("reversal without the funds: %v; want InsufficientError on W3", err)
	}
	if _, err := f.j.Reverse(f.ctx, "rev:t-3", "t-3", nil, "test.reversal"); !errors.As(err, &short) {
		t.Fatalf("its retry: %v; want the same refusal", err)
	}
	if _, err := f.j.Reverse(f.ctx, "rev:t-3:a", "t-3", []journal.Leg{back("W1", "BTC", "0.1"), back("W3", "BTC", "0.1")}, "test.reversal"); err != nil {
		t.Fatalf("a reversal that fits, after the refused one: %v", err)
	}
	if left, err := f.j.Reversible(f.ctx, "t-3"); err != nil || len(left) != 2 || left[0].Amount.String() != "0.9" {
		t.Errorf("still reversible of t-3 = %v, %v; want 0.9 per account (the refused reversal claims nothing)", left, err)
	}
	f.reconciled()
}

// Racing reversals of one entry that together exceed it: exactly those that fit pass.
func TestConcurrentReversalsNeverExceed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "ETH", "10")
	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "ETH", "1")); err != nil {
		t.Fatal(err)
	}
	const racers = 8 // 0.3 each: three fit in 1
	var wg sync.WaitGroup
	errs := make([]error, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			_, errs[i] = f.j.Reverse(f.ctx, fmt.Sprintf("rev-%d", i), "t-1", []journal.Leg{back("W1", "ETH", "0.3"), back("W2", "ETH", "0.3")}, "test.reversal")
		})
	}
	close(start)
	wg.Wait()
	passed := 0
	for i, err := range errs {
		switch {
		case err == nil:
			passed++
		case !errors.Is(err, journal.ErrReversalExceeds):
			t.Errorf("rev-%d: %v, want success or ErrReversalExceeds", i, err)
		}
	}
	if passed != 3 {
		t.Errorf("%d reversals of 0.3 passed, want 3 (of an entry of 1)", passed)
	}
	if got, want := f.balance("W2", "ETH"), "0.1/0.1/0/0"; got != want {
		t.Errorf("W2 = %s, want %s", got, want)
	}
	f.reconciled()
}

// A claim whose entry never came (its runner stopped between the claim and the entry) holds
// back allowance until a lease has passed: then a reversal that needs it blocks the claim's
// id and takes its place; the late runner can no longer record it.
func TestAbandonedReversalClaim(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	failInsert := false
	j := journal.New(journal.Config{DB: db, Policy: policy, Collections: []string{"wallets"},
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Step: func(_ context.Context, op journal.Op) error {
			mu.Lock()
			defer mu.Unlock()
			if failInsert && !op.After && op.Command == "InsertOne" && op.Collection == "journal_entries" {
				return errors.New("runner stopped")
			}
			return nil
		}})
	f := &fixture{t: t, ctx: t.Context(), db: db, j: j, now: now}
	if err := j.EnsureIndexes(f.ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"W1", "W2"} {
		if _, err := db.Collection("wallets").InsertOne(f.ctx, bson.D{{Key: "_id", Value: w}}); err != nil {
			t.Fatal(err)
		}
	}
	f.deposit("dep-1", "W1", "BTC", "5")
	if _, err := j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "1")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	failInsert = true
	mu.Unlock()
	if _, err := j.Reverse(f.ctx, "rev-lost", "t-1", nil, "test.reversal"); err == nil {
		t.Fatal("the reversal whose entry insert fails succeeded")
	}
	mu.Lock()
	failInsert = false
	mu.Unlock()
	if _, err := j.Reverse(f.ctx, "rev-2", "t-1", nil, "test.reversal"); !errors.Is(err, journal.ErrReversalExceeds) {
		t.Fatalf("a reversal while the claim is young: %v, want ErrReversalExceeds", err)
	}
	mu.Lock()
	now = now.Add(journal.DefaultLease + time.Second)
	mu.Unlock()
	if _, err := j.Reverse(f.ctx, "rev-2", "t-1", nil, "test.reversal"); err != nil {
		t.Fatalf("a reversal once the claim is abandoned: %v", err)
	}
	if _, err := j.Reverse(f.ctx, "rev-lost", "t-1", nil, "test.reversal"); !errors.Is(err, journal.ErrEntryExists) {
		t.Fatalf("the late runner of the abandoned claim: %v, want ErrEntryExists (its id is blocked)", err)
	}
	if got, want := f.balance("W2", "BTC"), "0/0/0/0"; got != want {
		t.Errorf("W2 = %s, want %s (reversed once)", got, want)
	}
	f.reconciled()
}

// The event of an applied reversal names the entry it reverses.
func TestReversalEvent(t *testing.T) {
	t.Parallel()
	f := newEventsFixture(t, map[string]string{"W1": "ZA", "W2": "ZB"})
	f.deposit("dep-1", "W1", "BTC", "10")
	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "BTC", "2.5")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Reverse(f.ctx, "rev-1", "t-1", nil, "test.reversal"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t-1", "rev-1"} {
		for _, e := range f.staged(id) {
			var d struct {
				EntryID  string  `json:"entryId"`
				Reverses *string `json:"reverses"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			switch {
			case id == "t-1" && d.Reverses != nil:
				t.Errorf("the event of t-1 names reverses %q", *d.Reverses)
			case id == "rev-1" && (d.Reverses == nil || *d.Reverses != "t-1"):
				t.Errorf("the event of rev-1 to %s: reverses %v, want t-1", e.CompanyID, d.Reverses)
			}
		}
	}
	f.reconciled()
}
