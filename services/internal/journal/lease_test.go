package journal_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
)

// TestOneRunnerPerEntryHoweverLongItTakes: a PAY_IN over many wallets takes many times the
// runner's lease; recovery passes run throughout, and a client retries the same entry
// meanwhile. The entry has exactly one runner: one run, one write and one state read per
// holder, no lost version race; the retry waits for the runner's outcome.
func TestOneRunnerPerEntryHoweverLongItTakes(t *testing.T) {
	t.Parallel()
	const wallets = 120
	const lease = 2 * time.Second
	ctx := context.Background()
	db := testdb.New(t)
	// During the PAY_IN the runner writes a wallet every 60 ms at least, so it lasts three
	// leases or more whatever the machine; the renewals, every third of a lease, have room to
	// land on a loaded one.
	var slowing atomic.Bool
	slow := func(ctx context.Context, op journal.Op) error {
		if slowing.Load() && op.Write && !op.After && op.Collection == "wallets" {
			time.Sleep(60 * time.Millisecond)
		}
		return nil
	}
	j := journal.New(journal.Config{DB: db, Policy: policy, Collections: []string{"wallets"}, Lease: lease, Step: slow})
	if err := j.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, wallets)
	legs := make([]journal.Leg, 0, wallets+1)
	for i := range wallets {
		w := fmt.Sprintf("W%04d", i)
		// Funded as a wallet document carrying its accounts already (the journal's fields as a
		// deposit writes them): the test is about the PAY_IN, not about funding.
		docs[i] = bson.D{{Key: "_id", Value: w}}
		legs = append(legs, journal.Leg{Holder: w, Currency: "BTC", Side: journal.Debit, Amount: amt("1")})
	}
	if _, err := db.Collection("wallets").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	fund := journal.Entry{ID: "fund", Kind: journal.Single, Code: "test.deposit", Legs: []journal.Leg{
		{Holder: "sys:external", Currency: "BTC", Side: journal.Debit, Amount: amount.MustStored(fmt.Sprint(wallets))}}}
	for _, l := range legs {
		fund.Legs = append(fund.Legs, journal.Leg{Holder: l.Holder, Currency: "BTC", Side: journal.Credit, Amount: l.Amount})
	}
	if _, err := j.Record(ctx, fund); err != nil {
		t.Fatal(err)
	}
	payIn := journal.Entry{ID: "stl:S1:payin", Kind: journal.Pending, Code: "settlement.payin", BusinessKey: "S1",
		Legs: append(legs, journal.Leg{Holder: "clr:S1", Currency: "BTC", Side: journal.Credit, Amount: amount.MustStored(fmt.Sprint(wallets))})}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	passes := 0
	wg.Go(func() { // recovery passes of two replicas, throughout
		for {
			select {
			case <-stop:
				return
			case <-time.After(lease / 5):
			}
			for range 2 {
				if _, err := j.Recover(ctx, time.Now()); err != nil {
					t.Errorf("recovery pass: %v", err)
				}
				passes++
			}
		}
	})
	var retryErr error
	var retried journal.Result
	wg.Go(func() { // the caller's retry, after its first call seemed lost
		time.Sleep(3 * lease)
		retried, retryErr = j.Record(ctx, payIn)
	})
	slowing.Store(true)
	before := j.Stats()
	start := time.Now()
	if _, err := j.Record(ctx, payIn); err != nil {
		t.Fatalf("PAY_IN: %v", err)
	}
	took := time.Since(start)
	time.Sleep(2 * lease) // recovery passes after the end too
	close(stop)
	wg.Wait()
	after := j.Stats()
	if took < 3*lease {
		t.Fatalf("the PAY_IN took %s, under three leases of %s: the test proves nothing", took, lease)
	}
	if retryErr != nil || !retried.Replayed {
		t.Errorf("the retry answered %+v, %v; want the runner's outcome (replayed)", retried, retryErr)
	}
	got := journal.Stats{Runs: after.Runs - before.Runs, StateReads: after.StateReads - before.StateReads,
		HolderWrites: after.HolderWrites - before.HolderWrites, Conflicts: after.Conflicts - before.Conflicts}
	// One run; the entry's state read once per batch of holders, and once more for the
	// clearing account, made on first use and so read alone; one write per holder.
	batches := (wallets + 1 + journal.ApplyBatch - 1) / journal.ApplyBatch
	want := journal.Stats{Runs: 1, StateReads: int64(batches) + 1, HolderWrites: wallets + 1}
	if got != want {
		t.Errorf("the PAY_IN over %d wallets (%s, lease %s, %d recovery passes beside it): %+v; want one runner %+v", wallets, took.Round(time.Millisecond), lease, passes, got, want)
	}
	t.Logf("PAY_IN over %d wallets took %s (%.0f leases), %d recovery passes beside it", wallets, took.Round(time.Millisecond), float64(took)/float64(lease), passes)
	f := &fixture{t: t, ctx: ctx, db: db, j: j}
	f.reconciled()
}
