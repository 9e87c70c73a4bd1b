package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// RecoveryBatch bounds what one recovery pass takes of each kind.
const RecoveryBatch = 100

// Recovery counts what a recovery pass did.
type Recovery struct {
	Applied, Rejected, Resolved, Expired int
}

// Recover completes what runners left: entries still recorded or compensating whose
// runner's lease has run out are applied or undone (by this pass as their one runner; an
// entry whose lease is live is left to its runner, however long it takes), resolutions
// still open since before cutoff get their entry, and holds past their expiry are voided.
// Every step is the idempotent one the runners take, so several recovery passes (replicas)
// may run at once.
func (j *Journal) Recover(ctx context.Context, cutoff time.Time) (Recovery, error) {
	var r Recovery
	var errs []error
	now := j.now()
	stuck, err := j.findEntries(ctx, bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateRecorded, StateCompensating}}}},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: fieldLease, Value: bson.D{{Key: "$lt", Value: now}}}},
			bson.D{{Key: fieldLease, Value: bson.D{{Key: "$exists", Value: false}}}},
		}}})
	errs = append(errs, err)
	for _, d := range stuck {
		err := j.resume(ctx, d)
		switch {
		case errors.Is(err, errLeased):
			// taken by another runner since it was read
		case errors.Is(err, ErrInsufficient):
			r.Rejected++
		case err == nil:
			r.Applied++
		default:
			errs = append(errs, err)
		}
	}
	n, err := j.finishResolutions(ctx, cutoff)
	r.Resolved, errs = n, append(errs, err)
	n, err = j.expireHolds(ctx)
	r.Expired, errs = n, append(errs, err)
	return r, errors.Join(errs...)
}

func (j *Journal) findEntries(ctx context.Context, filter bson.D) ([]entryDoc, error) {
	cur, err := j.entries.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "createdAt", Value: 1}}).SetLimit(RecoveryBatch))
	if err != nil {
		return nil, fmt.Errorf("find entries to recover: %w", err)
	}
	var docs []entryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find entries to recover: %w", err)
	}
	return docs, nil
}

// resume carries a stored entry on from where it stands.
func (j *Journal) resume(ctx context.Context, d entryDoc) error {
	e, err := d.entry()
	if err != nil {
		return err
	}
	if _, err := j.takeOver(ctx, e, d, false); err != nil {
		return err
	}
	if e.Kind == Post || e.Kind == Void {
		return j.closeHold(ctx, e.HoldRef)
	}
	return nil
}

// finishResolutions writes the entry of resolutions inserted before cutoff and never done.
func (j *Journal) finishResolutions(ctx context.Context, cutoff time.Time) (int, error) {
	cur, err := j.resolutions.Find(ctx, bson.D{{Key: "state", Value: "open"}, {Key: "at", Value: bson.D{{Key: "$lt", Value: cutoff}}}},
		options.Find().SetLimit(RecoveryBatch))
	if err != nil {
		return 0, fmt.Errorf("find open resolutions: %w", err)
	}
	var open []resolutionDoc
	if err := cur.All(ctx, &open); err != nil {
		return 0, fmt.Errorf("find open resolutions: %w", err)
	}
	// One bad resolution never stops the others: each is tried, the errors are joined.
	n := 0
	var errs []error
	now := j.now()
	for _, r := range open {
		if d, found, err := j.lookup(ctx, r.By); err != nil {
			errs = append(errs, err)
			continue
		} else if found && (d.State == StateRecorded || d.State == StateCompensating) && d.LeaseUntil.After(now) {
			continue // its runner is at work: it closes the resolution
		}
		if _, err := j.finishResolution(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("resolution of %s by %s: %w", r.HoldID, r.By, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// expireHolds voids the holds whose expiry has passed.
func (j *Journal) expireHolds(ctx context.Context) (int, error) {
	docs, err := j.findEntries(ctx, bson.D{{Key: "openUntil", Value: bson.D{{Key: "$lte", Value: j.now()}}}})
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, d := range docs {
		_, err := j.Resolve(ctx, ExpiryID(d.ID), d.ID, Void, d.Code+".expire")
		switch {
		case errors.Is(err, ErrHoldAlreadyPosted), errors.Is(err, ErrHoldAlreadyVoided), errors.Is(err, ErrHoldNotFound):
			// Resolved by another, whose entry may still be missing: only the expiry ends
			// here; finishResolutions completes the other's resolution.
			errs = append(errs, j.unexpire(ctx, d.ID))
		case err != nil:
			errs = append(errs, fmt.Errorf("expire %s: %w", d.ID, err))
		default:
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Sweep returns one recovery pass for a service's background loop: entries left to their
// runners for grace are completed; what it did is logged, a failure is a warning (the next
// pass tries again).
func (j *Journal) Sweep(grace time.Duration, logger *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		r, err := j.Recover(ctx, j.cfg.Now().Add(-grace))
		if err != nil && ctx.Err() == nil {
			logger.WarnContext(ctx, "journal recovery", "error", err.Error())
		}
		if r.Applied+r.Rejected+r.Resolved+r.Expired > 0 {
			logger.InfoContext(ctx, "journal recovered", "applied", r.Applied, "rejected", r.Rejected, "resolved", r.Resolved, "expired", r.Expired)
		}
	}
}
