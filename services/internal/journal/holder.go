package journal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// holderFields is the journal's part of a holder document: reads leave the rest out.
var holderFields = bson.D{{Key: "accounts", Value: 1}, {Key: "ledgerVersion", Value: 1}, {Key: "ledgerSeq", Value: 1}, {Key: "ledgerMarkers", Value: 1},
	{Key: "companyId", Value: 1}}

// readHolder reads the journal fields of holder h, creating a system holder on first use.
func (j *Journal) readHolder(ctx context.Context, h string) (holderDoc, error) {
	col, policy := j.holderCollection(h)
	var doc holderDoc
	err := col.FindOne(ctx, bson.D{{Key: "_id", Value: h}}, options.FindOne().SetProjection(holderFields)).Decode(&doc)
	if err == nil {
		return doc, nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return holderDoc{}, fmt.Errorf("read account holder %s: %w", h, err)
	}
	if !policy.Create {
		return holderDoc{}, &AccountError{Holder: h}
	}
	fresh := bson.D{{Key: "_id", Value: h}, {Key: "accounts", Value: bson.D{}}, {Key: "ledgerVersion", Value: int64(0)},
		{Key: "ledgerSeq", Value: int64(0)}, {Key: "ledgerMarkers", Value: bson.A{}}}
	if _, err := col.InsertOne(ctx, fresh); err != nil && !mongo.IsDuplicateKeyError(err) {
		return holderDoc{}, fmt.Errorf("create account holder %s: %w", h, err)
	}
	if err := col.FindOne(ctx, bson.D{{Key: "_id", Value: h}}, options.FindOne().SetProjection(holderFields)).Decode(&doc); err != nil {
		return holderDoc{}, fmt.Errorf("read account holder %s: %w", h, err)
	}
	return doc, nil
}

// change is one holder update: the marker k it carries and the counters it adds.
type change struct {
	holder string
	k      string
	delta  map[string]Delta
	// check refuses the change when a constrained account's available balance would fall
	// below zero.
	check bool
	// mode says what the marker is and when it may be written (admit).
	mode mode
}

// mode is the kind of marker a holder update writes.
type mode int

const (
	// modeApply writes an entry's own marker E with its change: only while E is recorded and
	// the holder is not blocked (E~).
	modeApply mode = iota
	// modeUndo writes E~ with the inverse of E's posting on the holder: only while E is
	// compensating and the holder carries E. The delta is taken from E's marker as read.
	modeUndo
	// modeBlock writes E~ with no change on a holder that lacks E, so that no runner can apply
	// E there any more: only while E is recorded.
	modeBlock
)

// applyChange writes c to its holder once: one version-guarded update that changes the
// counters and records the marker (pruning markers of final entries in the same write). A
// holder that has the marker already is left alone. Before every write the entry's state is
// read after the holder (admit), so a late runner writes nothing once the entry is final. It
// returns the marker as stored and the holder's company.
func (j *Journal) applyChange(ctx context.Context, c change) (markerDoc, string, error) {
	return j.applyChangeFrom(ctx, c, nil)
}

// snapshot is a holder as read, and its entry as read after it: apply reads a batch of
// holders, then the entry once, and each holder's first attempt starts from them.
type snapshot struct {
	doc   holderDoc
	entry entryDoc
	found bool
}

// applyChangeFrom is applyChange whose first attempt starts from first (nil: read).
func (j *Journal) applyChangeFrom(ctx context.Context, c change, first *snapshot) (markerDoc, string, error) {
	_, policy := j.holderCollection(c.holder)
	for attempt := range j.cfg.MaxAttempts {
		var doc holderDoc
		var err error
		if attempt == 0 && first != nil {
			doc = first.doc
		} else if doc, err = j.readHolder(ctx, c.holder); err != nil {
			return markerDoc{}, "", err
		}
		if m, ok := doc.marker(c.k); ok {
			return m, doc.Company, nil
		}
		if attempt == 0 && first != nil {
			err = admitLocal(doc, c.mode, entryOf(c.k))
			if err == nil {
				err = admitState(c.mode, entryOf(c.k), first.entry, first.found)
			}
		} else {
			err = j.admit(ctx, doc, c.mode, entryOf(c.k))
		}
		if err != nil {
			return markerDoc{}, "", err
		}
		if c.mode == modeUndo {
			if c.delta, err = doc.inverse(entryOf(c.k)); err != nil {
				return markerDoc{}, "", err
			}
		}
		m, err := j.nextMarker(doc, c, policy.Constrained)
		if err != nil {
			return markerDoc{}, "", err
		}
		kept, err := j.keptMarkers(ctx, doc)
		if err != nil {
			return markerDoc{}, "", err
		}
		if len(kept) < j.cfg.MaxMarkers {
			ok, err := j.writeHolder(ctx, doc, m, kept)
			if err != nil || ok {
				return m, doc.Company, err
			}
		}
		backoff(ctx, attempt)
	}
	return markerDoc{}, "", fmt.Errorf("apply %s to %s: %w", c.k, c.holder, ErrTooManyConflicts)
}

// admit decides whether a marker of mode m for entry id may be written on the holder doc,
// read without that marker. The entry's state is read after the holder: a marker is pruned
// only once its entry is final, so an entry not final after this read had its markers on
// the holder as read, and the version-guarded write that follows changes the holder at
// most once. A final entry is never written again:
//   - applied: errAppliedElsewhere (nothing may be undone or blocked, and its own marker
//     was pruned);
//   - rejected: errPreviouslyCompleted (its compensation was done on every holder).
//
// Otherwise an apply needs the entry recorded and the holder not blocked; an undo needs it
// compensating and the holder carrying E (errNothingHere otherwise); a block needs the
// holder without E (errAppliedHere) and the entry recorded (errBlockedElsewhere when it is
// already compensating: then no runner can apply it anywhere any more).
func (j *Journal) admit(ctx context.Context, doc holderDoc, m mode, id string) error {
	if err := admitLocal(doc, m, id); err != nil {
		return err
	}
	j.stateReads.Add(1)
	d, found, err := j.lookup(ctx, id)
	if err != nil {
		return err
	}
	return admitState(m, id, d, found)
}

// admitLocal is what the holder alone decides: an apply on a blocked holder, an undo where
// the entry is not, a block where it is.
func admitLocal(doc holderDoc, m mode, id string) error {
	_, has := doc.marker(id)
	_, undone := doc.marker(compensation(id))
	switch {
	case m == modeApply && undone:
		return errPreviouslyCompleted
	case m == modeUndo && !has:
		return errNothingHere
	case m == modeBlock && has:
		return errAppliedHere
	}
	return nil
}

// admitState is what the entry's state, read after the holder, decides (see admit).
func admitState(m mode, id string, d entryDoc, found bool) error {
	switch {
	case !found:
		return fmt.Errorf("%w: entry %s is gone", ErrInvariant, id)
	case d.State == StateApplied:
		return errAppliedElsewhere
	case d.State == StateRejected:
		return errPreviouslyCompleted
	case m == modeApply && d.State != StateRecorded:
		return errPreviouslyCompleted
	case m == modeBlock && d.State == StateCompensating:
		return errBlockedElsewhere
	case m == modeUndo && d.State != StateCompensating:
		return fmt.Errorf("%w: undo of %s while it is %s", ErrInvariant, id, d.State)
	}
	return nil
}

// inverse is the change that undoes entry id's posting on the holder (it carries E).
func (d holderDoc) inverse(id string) (map[string]Delta, error) {
	m, ok := d.marker(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s has no marker of %s to undo", ErrInvariant, d.ID, id)
	}
	out := make(map[string]Delta, len(m.Postings))
	for _, p := range m.Postings {
		c, err := p.Delta.counters()
		if err != nil {
			return nil, err
		}
		out[p.Currency] = c.Neg()
	}
	return out, nil
}

// nextMarker computes the holder's counters after c and the marker recording it.
func (j *Journal) nextMarker(doc holderDoc, c change, constrained bool) (markerDoc, error) {
	m := markerDoc{K: c.k, Seq: doc.Seq + 1, At: j.now()}
	currencies := make([]string, 0, len(c.delta))
	for cur := range c.delta {
		currencies = append(currencies, cur)
	}
	slices.Sort(currencies)
	for _, cur := range currencies {
		before, err := doc.counters(cur)
		if err != nil {
			return markerDoc{}, err
		}
		d := c.delta[cur]
		after := before.Add(d)
		if err := after.checkNonNegative(); err != nil {
			return markerDoc{}, fmt.Errorf("apply %s to %s %s: %w", c.k, c.holder, cur, err)
		}
		if c.check && constrained && d.Available().Sign() < 0 && after.Available().Sign() < 0 {
			return markerDoc{}, &InsufficientError{Entry: c.k, Holder: c.holder, Currency: cur}
		}
		m.Postings = append(m.Postings, postingDoc{Currency: cur, Delta: toCountersDoc(d), After: toCountersDoc(after)})
	}
	return m, nil
}

// writeHolder sets the counters of m's postings, the next version and the marker list, kept
// (doc's markers less those pruned) followed by m, if the holder is still at doc's version.
// When nothing was pruned, m is pushed rather than the list written again: a smaller write.
// It reports whether it wrote.
func (j *Journal) writeHolder(ctx context.Context, doc holderDoc, m markerDoc, kept []markerDoc) (bool, error) {
	col, _ := j.holderCollection(doc.ID)
	set := bson.D{{Key: "ledgerVersion", Value: doc.Version + 1}, {Key: "ledgerSeq", Value: m.Seq}}
	for _, p := range m.Postings {
		set = append(set, bson.E{Key: "accounts." + p.Currency, Value: p.After})
	}
	update := bson.D{{Key: "$set", Value: set}}
	if len(kept) == len(doc.Markers) && len(kept) > 0 {
		update = append(update, bson.E{Key: "$push", Value: bson.D{{Key: "ledgerMarkers", Value: m}}})
	} else {
		update[0].Value = append(set, bson.E{Key: "ledgerMarkers", Value: append(slices.Clip(kept), m)})
	}
	res, err := col.UpdateOne(ctx, versionFilter(doc), update)
	if err != nil {
		return false, fmt.Errorf("apply %s to %s: %w", m.K, doc.ID, err)
	}
	if res.MatchedCount == 1 {
		j.holderWrites.Add(1)
		return true, nil
	}
	j.conflicts.Add(1)
	return false, nil
}

// versionFilter matches the holder at doc's version (a document the journal never touched
// has no version field yet).
func versionFilter(doc holderDoc) bson.D {
	if doc.Version == 0 {
		return bson.D{{Key: "_id", Value: doc.ID}, {Key: "$or", Value: bson.A{
			bson.D{{Key: "ledgerVersion", Value: int64(0)}}, bson.D{{Key: "ledgerVersion", Value: bson.D{{Key: "$exists", Value: false}}}}}}}
	}
	return bson.D{{Key: "_id", Value: doc.ID}, {Key: "ledgerVersion", Value: doc.Version}}
}

// keptMarkers returns the holder's markers less those that may go: once the list is half
// full, a marker whose entry is final is copied into the history (a duplicate row means it
// is there already) and left out of the next write. A marker is never dropped otherwise.
func (j *Journal) keptMarkers(ctx context.Context, doc holderDoc) ([]markerDoc, error) {
	if len(doc.Markers) < j.cfg.MaxMarkers/2 {
		return doc.Markers, nil
	}
	final, err := j.finalEntries(ctx, doc.Markers)
	if err != nil {
		return nil, err
	}
	var kept []markerDoc
	var rows []historyDoc
	for _, m := range doc.Markers {
		e, ok := final[entryOf(m.K)]
		if !ok {
			kept = append(kept, m)
			continue
		}
		rows = append(rows, historyRow(doc.ID, m, e))
	}
	if err := j.insertHistory(ctx, rows); err != nil {
		return nil, err
	}
	return kept, nil
}

// finalEntries returns the entries of markers that are final (applied or rejected), by id:
// their markers may be pruned once their history rows exist, since every runner checks the
// entry's state before it writes a marker (admit).
func (j *Journal) finalEntries(ctx context.Context, markers []markerDoc) (map[string]entryDoc, error) {
	ids := make([]string, 0, len(markers))
	for _, m := range markers {
		ids = append(ids, entryOf(m.K))
	}
	cur, err := j.entries.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateApplied, StateRejected}}}}},
		options.Find().SetProjection(bson.D{{Key: "code", Value: 1}, {Key: "businessKey", Value: 1}, {Key: "state", Value: 1}, {Key: "updatedAt", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read entries of markers: %w", err)
	}
	var docs []entryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read entries of markers: %w", err)
	}
	out := make(map[string]entryDoc, len(docs))
	for _, d := range docs {
		out[d.ID] = d
	}
	return out, nil
}

// entryOf is the entry id of a marker (an entry's own, or its compensation's).
func entryOf(k string) string {
	if len(k) > 0 && k[len(k)-1] == '~' {
		return k[:len(k)-1]
	}
	return k
}

func historyRow(holder string, m markerDoc, e entryDoc) historyDoc {
	return historyDoc{ID: historyID(holder, m.Seq), Holder: holder, Seq: m.Seq, Entry: m.K, Code: e.Code, BusinessKey: e.BusinessKey,
		At: m.At, Postings: m.Postings}
}

// insertHistory inserts rows, unordered; rows already there are fine.
func (j *Journal) insertHistory(ctx context.Context, rows []historyDoc) error {
	if len(rows) == 0 {
		return nil
	}
	docs := make([]any, 0, len(rows))
	for _, r := range rows {
		docs = append(docs, r)
	}
	_, err := j.history.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil || onlyDuplicates(err) {
		return nil
	}
	return fmt.Errorf("insert history: %w", err)
}

// onlyDuplicates reports whether every write error of a bulk insert is a duplicate key.
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return mongo.IsDuplicateKeyError(err)
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 {
			return false
		}
	}
	return true
}

// backoff waits a jittered, growing moment before a retry of a lost race.
func backoff(ctx context.Context, attempt int) {
	d := time.Duration(rand.IntN(min(attempt+1, 20))+1) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
