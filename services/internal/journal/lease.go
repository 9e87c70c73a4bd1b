package journal

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/services/internal/ids"
)

// One runner per entry, however long it takes. An entry is run under a lease: the runner
// that inserts it holds it from the start, a retry or the recovery pass takes it only once
// it has run out, and the runner renews it every third of its length while it works. A
// runner that stops before the entry is final (its caller gave up, an error) drops its lease
// so that the next retry or recovery pass resumes at once. The lease is what keeps a second
// runner away, not what keeps the money right: every marker write reads the entry's state
// (admit), so a runner that lost its lease while parked still moves nothing twice.

// DefaultLease is how long a runner holds its entry without renewing it (Config.Lease).
const DefaultLease = 30 * time.Second

// errLeased is a live lease of another runner, for a caller that does not wait (recovery).
var errLeased = errors.New("entry is being run by another runner")

// leaseDoc fields of an entry document.
const (
	fieldLease  = "leaseUntil"
	fieldRunner = "runner"
)

// Stats counts what a journal did since it was made: runs (an entry taken to work on by one
// runner), state reads before holder writes, holder writes, and lost version races. A test
// or a benchmark proves with them that an entry had exactly one runner.
type Stats struct {
	Runs, StateReads, HolderWrites, Conflicts int64
}

// Stats returns the journal's counts.
func (j *Journal) Stats() Stats {
	return Stats{Runs: j.runs.Load(), StateReads: j.stateReads.Load(), HolderWrites: j.holderWrites.Load(), Conflicts: j.conflicts.Load()}
}

func newToken() string { return ids.Random(16) }

func (j *Journal) leaseEnd() time.Time { return j.now().Add(j.cfg.Lease) }

// runHeld carries entry e on as the holder of its lease (token): applies it, or finishes its
// compensation, renewing the lease meanwhile, and drops the lease if it stops before e is
// final.
func (j *Journal) runHeld(ctx context.Context, e Entry, token string, state State, reason *failure) error {
	j.runs.Add(1)
	work, stop := j.keepLease(ctx, e.ID, token)
	var err error
	if state == StateCompensating {
		err = j.compensate(work, e, reason)
	} else {
		err = j.apply(work, e)
	}
	lost := stop()
	if err == nil || errors.Is(err, ErrInsufficient) {
		return err
	}
	if lost && ctx.Err() == nil {
		// Another runner took the entry over (a renewal came too late): its outcome is the
		// answer, as for a retry.
		d, rerr := j.entry(ctx, e.ID)
		if rerr != nil {
			return rerr
		}
		_, err = j.takeOver(ctx, e, d, true)
		return err
	}
	j.dropLease(ctx, e.ID, token)
	return err
}

// takeOver runs a stored entry that is not final: once its lease has run out (or was
// dropped) it takes it; while another runner holds it, it waits for that runner's outcome
// (wait) or answers errLeased. It reports whether the outcome is another runner's.
func (j *Journal) takeOver(ctx context.Context, e Entry, d entryDoc, wait bool) (theirs bool, err error) {
	poll := min(j.cfg.Lease/4, 250*time.Millisecond)
	for {
		switch d.State {
		case StateApplied:
			return true, nil
		case StateRejected:
			return true, d.rejection()
		}
		token := newToken()
		ok, err := j.takeLease(ctx, e.ID, token)
		if err != nil {
			return false, err
		}
		if ok {
			return false, j.runHeld(ctx, e, token, d.State, d.Reason)
		}
		if !wait {
			return false, errLeased
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, fmt.Errorf("wait for entry %s: %w", e.ID, ctx.Err())
		case <-t.C:
		}
		if d, err = j.entry(ctx, e.ID); err != nil {
			return false, err
		}
	}
}

// takeLease takes entry id's lease for token if the entry is not final and its lease has
// run out (or it has none: entries recorded before leases existed). One conditional update:
// of racing takers exactly one matches.
func (j *Journal) takeLease(ctx context.Context, id, token string) (bool, error) {
	now := j.now()
	filter := bson.D{{Key: "_id", Value: id}, {Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateRecorded, StateCompensating}}}},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: fieldLease, Value: bson.D{{Key: "$lt", Value: now}}}},
			bson.D{{Key: fieldLease, Value: bson.D{{Key: "$exists", Value: false}}}},
		}}}
	res, err := j.entries.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: fieldLease, Value: now.Add(j.cfg.Lease)}, {Key: fieldRunner, Value: token}}}})
	if err != nil {
		return false, fmt.Errorf("take lease of entry %s: %w", id, err)
	}
	return res.MatchedCount == 1, nil
}

// keepLease renews token's lease on entry id every third of its length until stop is
// called. The returned context ends if the lease is lost (another runner took it over
// after a renewal came too late): a runner without its lease stops. stop reports whether it
// was lost.
func (j *Journal) keepLease(ctx context.Context, id, token string) (context.Context, func() bool) {
	work, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stopped := make(chan struct{})
	var lost atomic.Bool
	go func() {
		defer close(stopped)
		t := time.NewTicker(max(j.cfg.Lease/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-work.Done():
				return
			case <-t.C:
			}
			// The renewal is the lease's own write, not the runner's step: it passes the
			// Step hook without the runner's context values.
			rctx, rcancel := context.WithTimeout(context.Background(), max(j.cfg.Lease/3, time.Second))
			res, err := j.entries.UpdateOne(rctx, bson.D{{Key: "_id", Value: id}, {Key: fieldRunner, Value: token},
				{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateRecorded, StateCompensating}}}}},
				bson.D{{Key: "$set", Value: bson.D{{Key: fieldLease, Value: j.leaseEnd()}}}})
			rcancel()
			if err == nil && res.MatchedCount == 0 {
				lost.Store(true)
				cancel() // final (the work is ending anyway) or taken over: stop
				return
			}
		}
	}()
	return work, func() bool {
		close(done)
		<-stopped
		cancel()
		return lost.Load()
	}
}

// dropLease ends token's lease on entry id at once, so that a retry or the recovery pass
// resumes the entry without waiting for it to run out. Best effort: a lease not dropped
// runs out by itself.
func (j *Journal) dropLease(ctx context.Context, id, token string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = j.entries.UpdateOne(dctx, bson.D{{Key: "_id", Value: id}, {Key: fieldRunner, Value: token}},
		bson.D{{Key: "$set", Value: bson.D{{Key: fieldLease, Value: j.now().Add(-time.Millisecond)}}}})
}
