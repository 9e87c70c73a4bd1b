package journal

import (
	"context"
	"errors"
	"fmt"
)

// refuse handles a constrained account h that lacks the funds while entry e is applied.
// First h is blocked (its compensation marker, with no change, is written unless e's own
// marker got there meanwhile): every runner of e meets h in the same order and stops there,
// so no holder after h can ever carry e. Then e is marked compensating and what was applied
// before h is undone. A late runner moves nothing: if e was applied everywhere meanwhile, or
// rejected by another runner, the block writes nothing and the refusal ends there.
func (j *Journal) refuse(ctx context.Context, e Entry, h string, why *InsufficientError) error {
	err := j.block(ctx, h, e.ID)
	switch {
	case errors.Is(err, errAppliedHere):
		return j.apply(ctx, e) // another runner got h first: carry on after it
	case errors.Is(err, errAppliedElsewhere):
		return nil // applied everywhere: nothing may be undone
	case errors.Is(err, errPreviouslyCompleted):
		return j.outcome(ctx, e.ID)
	case err != nil && !errors.Is(err, errBlockedElsewhere):
		return err
	}
	return j.compensate(ctx, e, &failure{Holder: h, Currency: why.Currency})
}

// block writes entry id's compensation marker on h, with no change, unless id's own marker is
// there (errAppliedHere) or the entry is no longer recorded (see admit).
func (j *Journal) block(ctx context.Context, h, id string) error {
	_, _, err := j.applyChange(ctx, change{holder: h, k: compensation(id), mode: modeBlock})
	return err
}

// compensate undoes entry e on every holder that carries its marker and not yet its
// compensation (the inverse of what e's marker recorded, under the marker e~), then marks e
// rejected and answers its rejection. It stops as soon as e is found applied: then another
// runner applied it everywhere, and nothing may be undone.
func (j *Journal) compensate(ctx context.Context, e Entry, reason *failure) error {
	if _, err := j.setState(ctx, e.ID, StateRecorded, StateCompensating, reason); err != nil {
		return err
	}
	stored, err := j.entry(ctx, e.ID)
	if err != nil {
		return err
	}
	switch stored.State {
	case StateApplied:
		return nil
	case StateRejected:
		return stored.rejection()
	}
	for _, h := range holdersInOrder(e.deltas(), j.constrained) {
		if err := j.undo(ctx, h, e.ID); err != nil {
			return err
		}
	}
	if _, err := j.setState(ctx, e.ID, StateCompensating, StateRejected, nil); err != nil {
		return err
	}
	stored, err = j.entry(ctx, e.ID)
	if err != nil {
		return err
	}
	if stored.State != StateRejected {
		return fmt.Errorf("%w: entry %s is %s after its compensation", ErrInvariant, e.ID, stored.State)
	}
	return stored.rejection()
}

// outcome answers a finished entry: nil when applied, its rejection otherwise.
func (j *Journal) outcome(ctx context.Context, id string) error {
	stored, err := j.entry(ctx, id)
	if err != nil {
		return err
	}
	switch stored.State {
	case StateApplied:
		return nil
	case StateRejected:
		return stored.rejection()
	}
	return fmt.Errorf("%w: entry %s is still %s", ErrInvariant, id, stored.State)
}

// undo writes the inverse of entry id's change on h, once, if h carries it and the entry is
// still compensating (a rejected entry was undone everywhere: a late runner writes nothing).
func (j *Journal) undo(ctx context.Context, h, id string) error {
	_, _, err := j.applyChange(ctx, change{holder: h, k: compensation(id), mode: modeUndo})
	if errors.Is(err, errNothingHere) || errors.Is(err, errPreviouslyCompleted) {
		return nil
	}
	return err
}
