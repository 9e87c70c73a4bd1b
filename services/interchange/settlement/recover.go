package settlement

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/services/apperr"
)

// RecoveryBatch bounds how many withdrawals, and how many settlements, one sweep recovers.
const RecoveryBatch = 50

// recoverTimeout bounds the recovery of one withdrawal or settlement.
const recoverTimeout = 30 * time.Second

// Sweeper completes money steps that were cut short and that nobody asks for again (the
// process crashed, the caller gave up): the money step of a decided withdrawal, and a
// settlement transition whose claim's lease ran out. It drives the very steps the calls
// drive, which are idempotent (movement ids) and guarded (conditional updates), so sweepers
// of several replicas may run at once: a withdrawal's movements apply once, and of the
// sweepers resuming a transition exactly one wins its claim.
type Sweeper struct {
	svc *Service
	// grace is how long a step is left to the call that started it.
	grace time.Duration
}

// Sweeper returns the recovery sweeper of the service; grace is how long a decided
// withdrawal, or a transition whose lease ran out, is left to its caller.
func (s *Service) Sweeper(grace time.Duration) *Sweeper { return &Sweeper{svc: s, grace: grace} }

// Once runs one sweep.
func (w *Sweeper) Once(ctx context.Context) {
	cutoff := w.svc.deps.Now().Add(-w.grace)
	w.withdrawals(ctx, cutoff)
	w.settlements(ctx, cutoff)
}

// withdrawals completes the decided withdrawals decided before cutoff whose money step is
// not recorded done.
func (w *Sweeper) withdrawals(ctx context.Context, cutoff time.Time) {
	stalled, err := w.svc.store.stalledWithdrawals(ctx, cutoff, RecoveryBatch)
	if err != nil {
		w.warn(ctx, "sweep withdrawals", err)
		return
	}
	var done []string
	for _, wd := range stalled {
		err := w.run(ctx, func(ctx context.Context) error { return w.svc.finishWithdrawal(ctx, wd) })
		if err != nil {
			w.warn(ctx, "recover withdrawal", err, "transfer_id", wd.TransferID)
			continue
		}
		done = append(done, wd.TransferID)
	}
	if len(done) > 0 {
		w.svc.deps.Logger.InfoContext(ctx, "withdrawals recovered", "count", len(done), "transfer_ids", done)
	}
}

// settlements resumes the pending transitions whose lease ran out before cutoff. Each is
// resumed from the settlement as read, so one finished or taken over meanwhile is a lost race
// (409), never a new transition.
func (w *Sweeper) settlements(ctx context.Context, cutoff time.Time) {
	stalled, err := w.svc.store.stalledSettlements(ctx, cutoff, RecoveryBatch)
	if err != nil {
		w.warn(ctx, "sweep settlements", err)
		return
	}
	var done []string
	for _, s := range stalled {
		err := w.run(ctx, func(ctx context.Context) error {
			_, _, err := w.svc.carry(ctx, s, s.Pending.To, s.Pending.Reason)
			return err
		})
		if lostRace(err) {
			w.svc.deps.Logger.DebugContext(ctx, "settlement resumed by another", "tracking_id", s.TrackingID)
			continue
		}
		if err != nil {
			w.warn(ctx, "recover settlement", err, "tracking_id", s.TrackingID)
			continue
		}
		done = append(done, s.TrackingID)
	}
	if len(done) > 0 {
		w.svc.deps.Logger.InfoContext(ctx, "settlements recovered", "count", len(done), "tracking_ids", done)
	}
}

// warn logs a failed recovery, unless the sweep is stopping (the next start resumes it).
func (w *Sweeper) warn(ctx context.Context, msg string, err error, attrs ...any) {
	if ctx.Err() != nil {
		return
	}
	w.svc.deps.Logger.WarnContext(ctx, msg, append(attrs, "code", status.Code(err).String(), "error", err.Error())...)
}

// run runs one recovery with its own deadline.
func (w *Sweeper) run(ctx context.Context, step func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	return step(ctx)
}

// lostRace reports whether err is a 409 of ours: another call or sweeper holds or changed the
// settlement first.
func lostRace(err error) bool {
	var e *apperr.Error
	return errors.As(err, &e) && e.Status == codes.Aborted
}
