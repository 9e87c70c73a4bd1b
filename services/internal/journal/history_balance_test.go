package journal_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zcustody/suite/services/internal/journal"
)

// twoCurrencies credits w from the world outside in BTC and ETH with one entry: one row of
// w's history, two postings.
func twoCurrencies(id, w, btc, eth string) journal.Entry {
	return journal.Entry{ID: id, Kind: journal.Single, Code: "test.deposit", BusinessKey: id, Legs: []journal.Leg{
		{Holder: "sys:external", Currency: "BTC", Side: journal.Debit, Amount: amt(btc)},
		{Holder: "sys:external", Currency: "ETH", Side: journal.Debit, Amount: amt(eth)},
		{Holder: w, Currency: "BTC", Side: journal.Credit, Amount: amt(btc)},
		{Holder: w, Currency: "ETH", Side: journal.Credit, Amount: amt(eth)},
	}}
}

// TestHistoryPageCountsRows: a page holds Limit rows (sequence numbers), a row of two
// currencies being two postings; Last is the page's last sequence and More tells whether
// another page follows, so that paging by Last sees every sequence once.
func TestHistoryPageCountsRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1")
	f.deposit("d1", "W1", "BTC", "1")
	f.mustRecord(twoCurrencies("both", "W1", "2", "3"))
	f.deposit("d3", "W1", "BTC", "4")
	show := func(p journal.HistoryPage) string {
		var s []string
		for _, x := range p.Postings {
			s = append(s, fmt.Sprintf("%d:%s", x.Seq, x.Currency))
		}
		return fmt.Sprintf("%v last=%d more=%t", s, p.Last, p.More)
	}
	tests := []struct {
		q    journal.HistoryQuery
		want string
	}{
		{journal.HistoryQuery{Holder: "W1", Limit: 1}, "[1:BTC] last=1 more=true"},
		{journal.HistoryQuery{Holder: "W1", Limit: 1, AfterSeq: 1}, "[2:BTC 2:ETH] last=2 more=true"},
		{journal.HistoryQuery{Holder: "W1", Limit: 1, AfterSeq: 2}, "[3:BTC] last=3 more=false"},
		{journal.HistoryQuery{Holder: "W1", Limit: 2}, "[1:BTC 2:BTC 2:ETH] last=2 more=true"},
		{journal.HistoryQuery{Holder: "W1", Limit: 3}, "[1:BTC 2:BTC 2:ETH 3:BTC] last=3 more=false"},
		{journal.HistoryQuery{Holder: "W1", Limit: 5, AfterSeq: 3}, "[] last=3 more=false"},
		{journal.HistoryQuery{Holder: "W1", Limit: 1, Currency: "ETH"}, "[2:ETH] last=2 more=false"},
		{journal.HistoryQuery{Holder: "W1", Limit: 1, Currency: "BTC", AfterSeq: 1}, "[2:BTC] last=2 more=true"},
	}
	for _, tt := range tests {
		p, err := f.j.HistoryPage(f.ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(p); got != tt.want {
			t.Errorf("HistoryPage(limit %d after %d %s) = %s, want %s", tt.q.Limit, tt.q.AfterSeq, tt.q.Currency, got, tt.want)
		}
	}
	if _, err := f.j.HistoryPage(f.ctx, journal.HistoryQuery{Holder: "W1"}); err == nil {
		t.Error("a page without a limit was read")
	}
}

// TestBalancesAtTheLastPostingAtOrBeforeATime: an account's balance as of a time is the one
// its last posting at or before that time left (of two at the same time, the later in
// sequence), zero before its first, a posting still in flight (its marker alone on the
// holder) included; each currency of a holder is its own account.
func TestBalancesAtTheLastPostingAtOrBeforeATime(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	var stall atomic.Bool
	stalling := f.hooked(0, &stall, nil)
	t0 := f.now
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	f.deposit("d1", "W1", "BTC", "5") // seq 1
	f.now = at(time.Minute)
	f.mustRecord(twoCurrencies("both", "W1", "0.5", "3")) // seq 2
	f.now = at(2 * time.Minute)
	if _, err := f.j.Record(f.ctx, hold("h1", "W1", "W2", "BTC", "2")); err != nil { // seq 3
		t.Fatal(err)
	}
	f.now = at(3 * time.Minute)
	f.deposit("x1", "W1", "BTC", "1") // seq 4
	f.deposit("x2", "W1", "BTC", "1") // seq 5, at the same time
	f.now = at(4 * time.Minute)
	stall.Store(true)
	if _, err := stalling.Record(f.ctx, transfer("late", "sys:external", "W1", "BTC", "10")); !errors.Is(err, errStalled) { // seq 6
		t.Fatalf("record late = %v, want it stalled before its history rows", err)
	}
	show := func(bs []journal.Balance) string {
		var s []string
		for _, b := range bs {
			c := b.Counters
			s = append(s, fmt.Sprintf("%s@%d %s/%s/%s/%s", b.Currency, b.Seq, c.Available(), c.Ledger(), c.PendingOut(), c.PendingIn()))
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		at         time.Time
		currencies []string
		want       string
	}{
		{at(-time.Millisecond), nil, "BTC@0 0/0/0/0 ETH@0 0/0/0/0"},
		{t0, nil, "BTC@1 5/5/0/0 ETH@0 0/0/0/0"},
		{at(time.Minute - time.Millisecond), nil, "BTC@1 5/5/0/0 ETH@0 0/0/0/0"},
		{at(90 * time.Second), nil, "BTC@2 5.5/5.5/0/0 ETH@2 3/3/0/0"},
		{at(2 * time.Minute), nil, "BTC@3 3.5/5.5/2/0 ETH@2 3/3/0/0"},
		{at(3 * time.Minute), []string{"BTC"}, "BTC@5 5.5/7.5/2/0"},
		{at(time.Hour), nil, "BTC@6 15.5/17.5/2/0 ETH@2 3/3/0/0"},
		{at(time.Hour), []string{"XRP", "ETH"}, "ETH@2 3/3/0/0 XRP@0 0/0/0/0"},
	}
	for _, tt := range tests {
		got, err := f.j.BalancesAt(f.ctx, "W1", tt.at, tt.currencies...)
		if err != nil {
			t.Fatal(err)
		}
		if show(got) != tt.want {
			t.Errorf("W1 as of %s %v = %s, want %s", tt.at.Format(time.RFC3339Nano), tt.currencies, show(got), tt.want)
		}
	}
	// The last posting's balance is the holder's now.
	if got := f.balance("W1", "BTC"); got != "15.5/17.5/2/0" {
		t.Errorf("W1 BTC now = %s, want what its last posting left", got)
	}
	if got, err := f.j.BalancesAt(f.ctx, "W1", at(time.Hour)); err != nil || got[0].At != at(4*time.Minute) {
		t.Errorf("W1's BTC as of an hour later = %+v, %v; want the time of its last posting", got, err)
	}
	if _, err := f.j.BalancesAt(f.ctx, "W9", t0); !errors.Is(err, journal.ErrAccountNotFound) {
		t.Errorf("balances of a holder that does not exist: %v, want ErrAccountNotFound", err)
	}
	stall.Store(false)
	f.mustRecord(transfer("late", "sys:external", "W1", "BTC", "10"))
	f.reconciled()
}
