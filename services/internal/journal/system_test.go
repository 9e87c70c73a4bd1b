package journal_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/internal/journal"
)

func TestSystemAccounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "W1", "W2")
	f.deposit("dep-1", "W1", "BTC", "10")
	f.deposit("dep-2", "W1", "ETH", "3")
	f.deposit("dep-3", "W2", "BTC", "0.5")
	if _, err := f.j.Record(f.ctx, hold("h-1", "W1", "clr:S1", "BTC", "2.5")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.j.Record(f.ctx, transfer("t-1", "W1", "W2", "ETH", "1")); err != nil {
		t.Fatal(err)
	}
	got, err := f.j.SystemAccounts(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The wallets W1 and W2 are not system accounts: only clr:S1 and sys:external are listed,
	// by holder then currency.
	want := []journal.AccountCounters{
		{Holder: "clr:S1", Currency: "BTC", Counters: journal.Counters{CreditsPending: amt("2.5")}},
		{Holder: "sys:external", Currency: "BTC", Counters: journal.Counters{DebitsPosted: amt("10.5")}},
		{Holder: "sys:external", Currency: "ETH", Counters: journal.Counters{DebitsPosted: amt("3")}},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b journal.Counters) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("SystemAccounts() mismatch (-want +got):\n%s", diff)
	}
	f.reconciled()
}

func TestSystemAccountsOfAnEmptyJournal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got, err := f.j.SystemAccounts(f.ctx)
	if err != nil || len(got) != 0 {
		t.Errorf("SystemAccounts() of an empty journal = %v, %v; want none", got, err)
	}
}
