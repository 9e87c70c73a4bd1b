package journal_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
)

// leaseRole tells the Step hook of TestOneRunnerPerEntryHoweverLongItTakes whose call it sees
// (a context value under leaseRoleKey): the PAY_IN's runner or the caller's retry. The
// renewals of the runner's lease carry none (lease.go).
type leaseRole int

const (
	roleRunner leaseRole = iota + 1
	roleRetry
)

type leaseRoleKey struct{}

// TestOneRunnerPerEntryHoweverLongItTakes: a PAY_IN over many wallets takes many times the
// runner's lease; recovery passes run throughout, and a client retries the same entry
// meanwhile. The entry has exactly one runner: one run, one write and one state read per
// holder, no lost version race; the retry waits for the runner's outcome.
//
// The journal's clock is the test's. While the runner writes its wallets the clock moves a
// quarter of a lease at a time, each time once the lease the store holds runs a full lease
// past the clock (the runner renewed it, which it does in real time); recovery passes of two
// replicas run at every step. Once the clock is three leases on, the caller retries, and
// the runner goes on only once the retry has tried to take the entry.
func TestOneRunnerPerEntryHoweverLongItTakes(t *testing.T) {
	t.Parallel()
	const wallets = 120
	// The lease is of the test's clock, but the runner renews it every third of its length
	// of real time: a short lease keeps the test short.
	const lease = 300 * time.Millisecond
	// The clock moves a quarter of a lease at every eighth wallet the runner writes: 15
	// steps, 3.75 leases over the PAY_IN.
	const step, every = lease / 4, 8
	// How long a condition may take in real time on a loaded machine before the test fails.
	const patience = 30 * time.Second
	const entries = "journal_entries"
	ctx := context.Background()
	db := testdb.New(t)

	var clockMu sync.Mutex
	clock := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	advance := func(d time.Duration) time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		clock = clock.Add(d)
		return clock
	}

	renewed := make(chan struct{}, 1) // a write to the entries returned: perhaps a renewal of the lease
	retryTried := make(chan struct{}) // closed once the retry has tried to take the entry
	var triedOnce sync.Once
	var phase func() error // a step of the clock, at every eighth wallet the runner writes
	writes := 0            // the wallets the runner wrote so far (its goroutine only)
	hook := func(ctx context.Context, op journal.Op) error {
		role, _ := ctx.Value(leaseRoleKey{}).(leaseRole)
		switch {
		case op.Collection == entries && op.After && role == roleRetry:
			// The retry's one write: its attempt at the entry's lease.
			triedOnce.Do(func() { close(retryTried) })
		case op.Collection == entries && op.After:
			select {
			case renewed <- struct{}{}:
			default:
			}
		case role == roleRunner && op.Collection == "wallets" && op.Write && !op.After:
			writes++
			if (writes-1)%every == 0 {
				return phase()
			}
		}
		return nil
	}
	j := journal.New(journal.Config{DB: db, Policy: policy, Collections: []string{"wallets"}, Lease: lease, Now: now, Step: hook})
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

	// stored reads the PAY_IN's entry document as the store holds it.
	type entryState struct {
		State      journal.State `bson:"state"`
		LeaseUntil time.Time     `bson:"leaseUntil"`
	}
	stored := func() (entryState, error) {
		var d entryState
		err := db.Collection(entries).FindOne(ctx, bson.D{{Key: "_id", Value: payIn.ID}}).Decode(&d)
		return d, err
	}
	// leaseFresh waits until the lease the store holds runs a full lease past the clock,
	// which only a renewal made at the clock's present time achieves, after a step.
	leaseFresh := func() error {
		deadline := time.NewTimer(patience)
		defer deadline.Stop()
		for {
			d, err := stored()
			if err != nil {
				return fmt.Errorf("read the PAY_IN: %w", err)
			}
			if d.State != journal.StateRecorded {
				return fmt.Errorf("the PAY_IN is %s while its runner writes its wallets", d.State)
			}
			if !d.LeaseUntil.Before(now().Add(lease)) {
				return nil
			}
			select {
			case <-renewed:
			case <-deadline.C:
				return fmt.Errorf("the runner's lease was not renewed within %s: it runs until %s, the clock is at %s",
					patience, d.LeaseUntil.UTC().Format(time.RFC3339Nano), now().Format(time.RFC3339Nano))
			}
		}
	}

	// The caller's retry, after its first call seemed lost: once the clock is three leases
	// on. It answers only once the entry is final (the runner's outcome).
	retryCtx, cancelRetry := context.WithCancel(context.WithValue(ctx, leaseRoleKey{}, roleRetry))
	retryAt := make(chan struct{})
	var retryOnce sync.Once
	retry := func() { retryOnce.Do(func() { close(retryAt) }) }
	retryDone := make(chan struct{})
	var retryErr, retryEarly error
	var retried journal.Result
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(retryDone)
		<-retryAt
		retried, retryErr = j.Record(retryCtx, payIn)
		if d, err := stored(); err != nil || d.State != journal.StateApplied {
			retryEarly = fmt.Errorf("the retry answered while the PAY_IN was %q (%v)", d.State, err)
		}
	})
	defer func() { cancelRetry(); retry(); wg.Wait() }()

	start := now()
	passes := 0
	retrying := false
	phase = func() error {
		if err := leaseFresh(); err != nil {
			return err
		}
		at := advance(step) // under a lease: the one the store holds is still live
		for range 2 {       // recovery passes of two replicas
			if _, err := j.Recover(ctx, at); err != nil {
				t.Errorf("recovery pass at %s: %v", at.Sub(start), err)
			}
			passes++
		}
		if at.Sub(start) < 3*lease || retrying {
			return nil
		}
		retrying = true
		retry()
		select {
		case <-retryTried:
		case <-retryDone: // it answered without trying the entry: checked below
		case <-time.After(patience):
			return fmt.Errorf("the retry did not try the entry within %s", patience)
		}
		return nil
	}
	before := j.Stats()
	realStart := time.Now()
	if _, err := j.Record(context.WithValue(ctx, leaseRoleKey{}, roleRunner), payIn); err != nil {
		t.Fatalf("PAY_IN: %v", err)
	}
	took, wall := now().Sub(start), time.Since(realStart)
	// Recovery passes after the end too: a lease on, and two leases on, when every lease the
	// runner held has run out.
	for range 2 {
		at := advance(lease)
		for range 2 {
			if _, err := j.Recover(ctx, at); err != nil {
				t.Errorf("recovery pass after the end: %v", err)
			}
			passes++
		}
	}
	if took < 3*lease {
		t.Fatalf("the PAY_IN took %s of the clock, under three leases of %s: the test proves nothing", took, lease)
	}
	wg.Wait()
	after := j.Stats()
	if retryErr != nil || !retried.Replayed {
		t.Errorf("the retry answered %+v, %v; want the runner's outcome (replayed)", retried, retryErr)
	}
	if retryEarly != nil {
		t.Error(retryEarly)
	}
	select {
	case <-retryTried:
	default:
		t.Errorf("the retry never tried to take the entry while its runner worked")
	}
	got := journal.Stats{Runs: after.Runs - before.Runs, StateReads: after.StateReads - before.StateReads,
		HolderWrites: after.HolderWrites - before.HolderWrites, Conflicts: after.Conflicts - before.Conflicts}
	// One run; the entry's state read once per batch of holders, and once more for the
	// clearing account, made on first use and so read alone; one write per holder.
	batches := (wallets + 1 + journal.ApplyBatch - 1) / journal.ApplyBatch
	want := journal.Stats{Runs: 1, StateReads: int64(batches) + 1, HolderWrites: wallets + 1}
	if got != want {
		t.Errorf("the PAY_IN over %d wallets (%s of the clock, lease %s, %d recovery passes beside it): %+v; want one runner %+v", wallets, took, lease, passes, got, want)
	}
	t.Logf("PAY_IN over %d wallets took %s of the clock (%.2f leases), %s of real time, %d recovery passes beside it",
		wallets, took, float64(took)/float64(lease), wall.Round(time.Millisecond), passes)
	f := &fixture{t: t, ctx: ctx, db: db, j: j}
	f.reconciled()
}
