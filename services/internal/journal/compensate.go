package journal

import (
	"context"
	"fmt"
)

// refuse handles a constrained account h that lacks the funds while entry e is applied.
// First h is blocked (its compensation marker, with no change, is written unless e's own
// marker got there meanwhile): every runner of e meets h in the same order and stops there,
// so no holder after h can ever carry e. Then e is marked compensating and what was applied
// before h is undone.
func (j *Journal) refuse(ctx context.Context, e Entry, h string, why *InsufficientError) error {
	blocked, err := j.block(ctx, h, e.ID)
	if err != nil {
		return err
	}
	if !blocked {
		return j.apply(ctx, e)
	}
	reason := &failure{Holder: h, Currency: why.Currency}
	if _, err := j.setState(ctx, e.ID, StateRecorded, StateCompensating, reason); err != nil {
		return err
	}
	return j.compensate(ctx, e, reason)
}

// block writes entry id's compensation marker on h, unless id's own marker is there; it
// reports whether h is blocked.
func (j *Journal) block(ctx context.Context, h, id string) (bool, error) {
	for attempt := range j.cfg.MaxAttempts {
		doc, err := j.readHolder(ctx, h)
		if err != nil {
			return false, err
		}
		if _, applied := doc.marker(id); applied {
			return false, nil
		}
		if _, blocked := doc.marker(compensation(id)); blocked {
			return true, nil
		}
		m := markerDoc{K: compensation(id), Seq: doc.Seq + 1, At: j.now()}
		kept, err := j.keptMarkers(ctx, doc)
		if err != nil {
			return false, err
		}
		if len(kept) < j.cfg.MaxMarkers {
			ok, err := j.writeHolder(ctx, doc, m, append(kept, m))
			if err != nil || ok {
				return ok, err
			}
		}
		backoff(ctx, attempt)
	}
	return false, fmt.Errorf("block %s on %s: %w", id, h, ErrTooManyConflicts)
}

// compensate undoes entry e on every holder that carries its marker and not yet its
// compensation (the inverse of what e's marker recorded, under the marker e~), then marks e
// rejected and answers its rejection.
func (j *Journal) compensate(ctx context.Context, e Entry, reason *failure) error {
	if _, err := j.setState(ctx, e.ID, StateRecorded, StateCompensating, reason); err != nil {
		return err
	}
	for _, h := range holdersInOrder(e.deltas(), j.constrained) {
		if err := j.undo(ctx, h, e.ID); err != nil {
			return err
		}
	}
	if _, err := j.setState(ctx, e.ID, StateCompensating, StateRejected, nil); err != nil {
		return err
	}
	stored, err := j.entry(ctx, e.ID)
	if err != nil {
		return err
	}
	if stored.State != StateRejected {
		return fmt.Errorf("%w: entry %s is %s after its compensation", ErrInvariant, e.ID, stored.State)
	}
	return stored.rejection()
}

// undo writes the inverse of entry id's change on h, once, if h carries it.
func (j *Journal) undo(ctx context.Context, h, id string) error {
	doc, err := j.readHolder(ctx, h)
	if err != nil {
		return err
	}
	m, applied := doc.marker(id)
	if _, undone := doc.marker(compensation(id)); !applied || undone {
		return nil
	}
	inverse := map[string]Delta{}
	for _, p := range m.Postings {
		d, err := p.Delta.counters()
		if err != nil {
			return err
		}
		inverse[p.Currency] = d.Neg()
	}
	_, _, err = j.applyChange(ctx, change{holder: h, k: compensation(id), delta: inverse})
	return err
}
