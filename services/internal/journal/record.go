package journal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MaxRun bounds one call's work.
const MaxRun = 10 * time.Minute

// Result is the outcome of a recorded entry.
type Result struct {
	// Replayed is true when the entry had been applied before this call.
	Replayed bool
}

// Record records and applies a Single or Pending entry. An invalid entry or a missing
// account records nothing. A lack of funds is recorded, whether it is seen before applying
// (the accounts read first) or while applying (then the accounts applied so far are
// restored): an id that failed stays failed, and the same refusal is answered to every
// retry, so a slow runner of the same id can never apply it later. A new attempt takes a
// new id. The same id with other fields is an *ExistsError.
func (j *Journal) Record(ctx context.Context, e Entry) (Result, error) {
	if e.Kind != Single && e.Kind != Pending {
		return Result{}, fmt.Errorf("%w: Record takes single and pending entries; resolve holds with Resolve", ErrInvalidEntry)
	}
	if err := e.validate(j.cfg.MaxLegs); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, MaxRun)
	defer cancel()
	// A retry answers from the stored entry: the funds a first attempt held are not there
	// for a precheck any more.
	if stored, found, err := j.lookup(ctx, e.ID); err != nil || found {
		return j.continueStored(ctx, e, stored, err)
	}
	if err := j.precheck(ctx, e); err != nil {
		var short *InsufficientError
		if errors.As(err, &short) {
			return j.recordRefusal(ctx, e, short)
		}
		return Result{}, err
	}
	stored, fresh, err := j.storedOrNew(ctx, e)
	if err != nil || !fresh {
		return j.continueStored(ctx, e, stored, err)
	}
	return Result{}, j.runHeld(ctx, e, stored.Runner, StateRecorded, nil)
}

// recordRefusal stores e as rejected for lack of funds without applying anything, unless a
// runner of the same id recorded it first (then its outcome is the answer).
func (j *Journal) recordRefusal(ctx context.Context, e Entry, short *InsufficientError) (Result, error) {
	doc := toEntryDoc(e, j.now())
	doc.State, doc.Reason, doc.OpenUntil = StateRejected, &failure{Holder: short.Holder, Currency: short.Currency}, time.Time{}
	if _, err := j.entries.InsertOne(ctx, doc); err != nil {
		if !mongo.IsDuplicateKeyError(err) {
			return Result{}, fmt.Errorf("record refusal of %s: %w", e.ID, err)
		}
		stored, err := j.entry(ctx, e.ID)
		return j.continueStored(ctx, e, stored, err)
	}
	return Result{}, short
}

// lookup reads the entry stored under id, if any.
func (j *Journal) lookup(ctx context.Context, id string) (entryDoc, bool, error) {
	var d entryDoc
	err := j.entries.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return entryDoc{}, false, nil
	}
	if err != nil {
		return entryDoc{}, false, fmt.Errorf("read entry %s: %w", id, err)
	}
	return d, true, nil
}

// storedOrNew inserts e holding its lease (the returned document's Runner is the token), or
// returns the entry stored under its id (fresh false).
func (j *Journal) storedOrNew(ctx context.Context, e Entry) (entryDoc, bool, error) {
	doc := toEntryDoc(e, j.now())
	doc.LeaseUntil, doc.Runner = j.leaseEnd(), newToken()
	_, err := j.entries.InsertOne(ctx, doc)
	if err == nil {
		return doc, true, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		// The insert may have landed with its answer lost: the lease it took is dropped, so
		// that the caller's retry runs the entry at once instead of waiting for it to run out.
		j.dropLease(ctx, e.ID, doc.Runner)
		return entryDoc{}, false, fmt.Errorf("insert entry %s: %w", e.ID, err)
	}
	stored, err := j.entry(ctx, e.ID)
	return stored, false, err
}

// continueStored answers a retry of an entry recorded before: the stored outcome, or the
// rest of its application.
func (j *Journal) continueStored(ctx context.Context, e Entry, stored entryDoc, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	if stored.Fingerprint != e.fingerprint() {
		prev, perr := stored.entry()
		if perr != nil {
			return Result{}, perr
		}
		return Result{}, &ExistsError{ID: e.ID, Field: e.firstDifference(prev)}
	}
	switch stored.State {
	case StateApplied:
		return Result{Replayed: true}, nil
	case StateRejected:
		return Result{}, stored.rejection()
	}
	// Being run: by another runner while its lease lasts (its outcome is the answer), by
	// this call once it has run out.
	theirs, err := j.takeOver(ctx, e, stored, true)
	return Result{Replayed: theirs && err == nil}, err
}

func (d entryDoc) rejection() error {
	if d.Reason == nil {
		return &InsufficientError{Entry: d.ID}
	}
	return &InsufficientError{Entry: d.ID, Holder: d.Reason.Holder, Currency: d.Reason.Currency}
}

// entry reads a stored entry.
func (j *Journal) entry(ctx context.Context, id string) (entryDoc, error) {
	var d entryDoc
	err := j.entries.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if err != nil {
		return entryDoc{}, fmt.Errorf("read entry %s: %w", id, err)
	}
	return d, nil
}

// precheck reads every holder the entry needs to exist, and every constrained account whose
// available balance it lowers, in one find per collection.
func (j *Journal) precheck(ctx context.Context, e Entry) error {
	deltas := e.deltas()
	byCol := map[string][]string{}
	for h := range deltas {
		col, p := j.holderCollection(h)
		if !p.Create || (p.Constrained && anyReduces(deltas[h])) {
			byCol[col.Name()] = append(byCol[col.Name()], h)
		}
	}
	for col, holders := range byCol {
		docs, err := j.readHolders(ctx, col, holders)
		if err != nil {
			return err
		}
		for _, h := range holders {
			if err := j.prechecked(e.ID, h, docs, deltas[h]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (j *Journal) prechecked(id, h string, docs map[string]holderDoc, per map[string]Delta) error {
	_, p := j.holderCollection(h)
	doc, ok := docs[h]
	if !ok {
		if p.Create {
			doc = holderDoc{ID: h}
		} else {
			return &AccountError{Holder: h}
		}
	}
	if !p.Constrained {
		return nil
	}
	for cur, d := range per {
		c, err := doc.counters(cur)
		if err != nil {
			return err
		}
		if d.Available().Sign() < 0 && c.Add(d).Available().Sign() < 0 {
			return &InsufficientError{Entry: id, Holder: h, Currency: cur}
		}
	}
	return nil
}

func (j *Journal) readHolders(ctx context.Context, col string, ids []string) (map[string]holderDoc, error) {
	cur, err := j.collection(col).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(holderFields))
	if err != nil {
		return nil, fmt.Errorf("read account holders: %w", err)
	}
	var docs []holderDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read account holders: %w", err)
	}
	out := make(map[string]holderDoc, len(docs))
	for _, d := range docs {
		out[d.ID] = d
	}
	return out, nil
}

// apply applies a recorded entry to every holder it names, in order (those that can refuse
// first), then marks it applied and copies its history rows. Every step is idempotent:
// applying again skips holders that carry the entry's marker.
func (j *Journal) apply(ctx context.Context, e Entry) error {
	deltas := e.deltas()
	order := holdersInOrder(deltas, j.constrained)
	done := make([]applied, 0, len(order))
	var batch map[string]*snapshot
	for i, h := range order {
		if i%ApplyBatch == 0 {
			var err error
			if batch, err = j.snapshots(ctx, e.ID, order[i:min(i+ApplyBatch, len(order))]); err != nil {
				return err
			}
		}
		m, company, err := j.applyChangeFrom(ctx, change{holder: h, k: e.ID, delta: deltas[h], check: true}, batch[h])
		var insufficient *InsufficientError
		switch {
		case errors.As(err, &insufficient):
			return j.refuse(ctx, e, h, insufficient)
		case errors.Is(err, errPreviouslyCompleted):
			return j.compensate(ctx, e, nil)
		case errors.Is(err, errAppliedElsewhere):
			return nil // applied to every holder by another runner, and final
		case err != nil:
			return err
		}
		done = append(done, applied{company: company, row: historyDoc{ID: historyID(h, m.Seq), Holder: h, Seq: m.Seq, Entry: e.ID,
			Code: e.Code, BusinessKey: e.BusinessKey, At: m.At, Postings: m.Postings}})
	}
	// The history rows go in before the entry is marked applied: a crash in between leaves it
	// recorded, and the runner or the recovery pass that finishes it writes them again.
	rows := make([]historyDoc, len(done))
	for i, a := range done {
		rows[i] = a.row
	}
	if err := j.insertHistory(ctx, rows); err != nil {
		return err
	}
	ok, err := j.markApplied(ctx, e, done)
	if err != nil {
		return fmt.Errorf("mark entry %s applied: %w", e.ID, err)
	}
	if !ok {
		return j.afterLostState(ctx, e)
	}
	return nil
}

// ApplyBatch is how many holders an entry's runner reads at once: one read of the holders
// of each collection, then one read of the entry's state (after them, as admit requires),
// instead of both per holder. A holder whose version moved meanwhile is read again alone.
const ApplyBatch = 64

// snapshots reads holders (in one find per collection) and then entry id: the first attempt
// of each holder's change. A holder not there yet (a system account made on first use) has
// none and is read alone.
func (j *Journal) snapshots(ctx context.Context, id string, holders []string) (map[string]*snapshot, error) {
	byCol := map[string][]string{}
	for _, h := range holders {
		col, _ := j.holderCollection(h)
		byCol[col.Name()] = append(byCol[col.Name()], h)
	}
	docs := make(map[string]holderDoc, len(holders))
	for col, hs := range byCol {
		read, err := j.readHolders(ctx, col, hs)
		if err != nil {
			return nil, err
		}
		maps.Copy(docs, read)
	}
	j.stateReads.Add(1)
	d, found, err := j.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*snapshot, len(docs))
	for h, doc := range docs {
		out[h] = &snapshot{doc: doc, entry: d, found: found}
	}
	return out, nil
}

// afterLostState answers a runner whose entry changed state under it: applied by another
// runner (fine), or being rejected (help undo it).
func (j *Journal) afterLostState(ctx context.Context, e Entry) error {
	stored, err := j.entry(ctx, e.ID)
	if err != nil {
		return err
	}
	if stored.State == StateApplied {
		return nil
	}
	return j.compensate(ctx, e, stored.Reason)
}

func (j *Journal) constrained(h string) bool {
	_, p := j.holderCollection(h)
	return p.Constrained
}

// setState moves the entry from one state to another; it reports whether it did.
func (j *Journal) setState(ctx context.Context, id string, from, to State, why *failure) (bool, error) {
	var set bson.D
	if why != nil {
		set = bson.D{{Key: "reason", Value: why}}
	}
	return j.transition(ctx, id, from, to, j.now(), set, nil)
}

// transition moves entry id from state from to state to at now, with the extra $set fields
// set and $push push (nil: none) in the same update; it reports whether it did.
func (j *Journal) transition(ctx context.Context, id string, from, to State, now time.Time, set, push bson.D) (bool, error) {
	update := bson.D{{Key: "$set", Value: append(bson.D{{Key: "state", Value: to}, {Key: "updatedAt", Value: now}}, set...)}}
	if push != nil {
		update = append(update, bson.E{Key: "$push", Value: push})
	}
	res, err := j.entries.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "state", Value: from}}, update)
	if err != nil {
		return false, fmt.Errorf("mark entry %s %s: %w", id, to, err)
	}
	return res.MatchedCount == 1, nil
}
