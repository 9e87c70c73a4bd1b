package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Report is what reconciliation found.
type Report struct {
	// Holders is the number of holder documents checked, Postings the postings folded.
	Holders, Postings int
	// InFlight counts entries still recorded or compensating (their legs are added to the
	// trial balance as if they had finished).
	InFlight int
	// Totals are the counters per currency over every account, in-flight legs included.
	Totals map[string]Counters
	// Violations lists every difference found; none means the ledger reconciles.
	Violations []string
}

// Clean reports whether reconciliation found no difference.
func (r Report) Clean() bool { return len(r.Violations) == 0 }

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Reconcile recomputes every account from the journal: each holder's counters must equal
// the fold of its postings (history rows and markers merged by their contiguous sequence),
// each posting's recorded balance after must equal the running fold, no entry may be
// applied twice to a holder, no counter may be negative and no constrained account's available balance either; and per
// currency the trial balance (all accounts, system and clearing ones included) must be zero
// on both the pending and the posted side (which also catches an entry applied on some of
// its holders only, a rejected one left undone somewhere among them). Completeness compares
// the postings with the entries' legs: every entry final before the scan is on every holder
// it names, once, with its legs' change, and a rejected one is undone wherever it was
// posted (completeness.go).
//
// It needs no quiet moment: holders are read one after the other while entries are applied,
// so every entry that was in flight or changed since shortly before the scan is brought to
// its outcome in the totals (its legs added where a holder's snapshot lacks it, or its
// undoing where a snapshot still carries it).
func (j *Journal) Reconcile(ctx context.Context) (Report, error) {
	r := Report{Totals: map[string]Counters{}}
	start := j.now().Add(-reconcileMargin)
	holders := map[string]holderDoc{}
	for _, col := range append(slices.Clone(j.cfg.Collections), j.accts.Name()) {
		if err := j.snapshotHolders(ctx, j.collection(col), holders); err != nil {
			return r, err
		}
	}
	if err := j.foldHistory(ctx, holders, &r); err != nil {
		return r, err
	}
	if err := j.checkCompleteness(ctx, holders, start, &r); err != nil {
		return r, err
	}
	snapshots := make(map[string]int64, len(holders)) // holder → sequence read
	for id, doc := range holders {
		snapshots[id] = doc.Seq
	}
	moving, err := j.movingEntries(ctx, start)
	if err != nil {
		return r, err
	}
	for _, d := range moving {
		if err := j.settleInTotals(ctx, d, snapshots, &r); err != nil {
			return r, err
		}
	}
	for cur, t := range r.Totals {
		if !t.DebitsPosted.Equal(t.CreditsPosted) || !t.DebitsPending.Equal(t.CreditsPending) {
			r.violate("trial balance of %s is off: %s", cur, t)
		}
	}
	return r, nil
}

// reconcileMargin is how long before a scan an entry counts as possibly moving during it.
const reconcileMargin = time.Minute

// movingEntries returns the entries in flight, and those changed since start.
func (j *Journal) movingEntries(ctx context.Context, start time.Time) ([]entryDoc, error) {
	filter := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateRecorded, StateCompensating}}}}},
		bson.D{{Key: "updatedAt", Value: bson.D{{Key: "$gte", Value: start}}}},
	}}}
	cur, err := j.entries.Find(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("find entries in flight: %w", err)
	}
	var docs []entryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find entries in flight: %w", err)
	}
	return docs, nil
}

// settleInTotals brings entry d to its outcome in the totals: an entry recorded or applied
// counts as applied on every holder, one compensating or rejected as undone. A recorded
// entry that a refusal blocked on one of its holders (E~ without E) is on its way to
// rejected (no runner can apply it there any more), so it counts as undone.
func (j *Journal) settleInTotals(ctx context.Context, d entryDoc, snapshots map[string]int64, r *Report) error {
	e, err := d.entry()
	if err != nil {
		return err
	}
	if d.State == StateRecorded || d.State == StateCompensating {
		r.InFlight++
	}
	type seen struct{ has, undone bool }
	deltas := e.deltas()
	on := make(map[string]seen, len(deltas))
	blocked := false
	for h := range deltas {
		has, undone, err := j.inSnapshot(ctx, h, e.ID, snapshots[h])
		if err != nil {
			return err
		}
		on[h] = seen{has, undone}
		blocked = blocked || (undone && !has)
	}
	applied := d.State == StateApplied || (d.State == StateRecorded && !blocked)
	for h, per := range deltas {
		switch s := on[h]; {
		case applied && !s.has && !s.undone:
			addAll(r.Totals, per, false)
		case !applied && s.has && !s.undone:
			addAll(r.Totals, per, true)
		}
	}
	return nil
}

// inSnapshot reports whether the holder's postings up to seq carry entry id, and its
// compensation (from the history rows, then the holder's markers).
func (j *Journal) inSnapshot(ctx context.Context, h, id string, seq int64) (has, undone bool, err error) {
	cur, err := j.history.Find(ctx, bson.D{{Key: "entry", Value: bson.D{{Key: "$in", Value: bson.A{id, compensation(id)}}}}, {Key: "holder", Value: h}})
	if err != nil {
		return false, false, fmt.Errorf("read history of %s: %w", id, err)
	}
	var rows []historyDoc
	if err := cur.All(ctx, &rows); err != nil {
		return false, false, fmt.Errorf("read history of %s: %w", id, err)
	}
	postings := map[string]int64{}
	for _, row := range rows {
		postings[row.Entry] = row.Seq
	}
	if len(postings) < 2 {
		doc, err := j.readHolderIfAny(ctx, h)
		if err != nil {
			return false, false, err
		}
		for _, m := range doc.Markers {
			if m.K == id || m.K == compensation(id) {
				postings[m.K] = m.Seq
			}
		}
	}
	in := func(k string) bool { s, ok := postings[k]; return ok && s <= seq }
	return in(id), in(compensation(id)), nil
}

// readHolderIfAny reads a holder's journal fields; a missing holder has none.
func (j *Journal) readHolderIfAny(ctx context.Context, h string) (holderDoc, error) {
	col, _ := j.holderCollection(h)
	var doc holderDoc
	err := col.FindOne(ctx, bson.D{{Key: "_id", Value: h}}, options.FindOne().SetProjection(holderFields)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return holderDoc{ID: h}, nil
	}
	if err != nil {
		return holderDoc{}, fmt.Errorf("read account holder %s: %w", h, err)
	}
	return doc, nil
}

// snapshotHolders reads every holder document of col that took an entry (the snapshots the
// totals are made of).
func (j *Journal) snapshotHolders(ctx context.Context, col coll, into map[string]holderDoc) error {
	cur, err := col.Find(ctx, bson.D{{Key: "ledgerSeq", Value: bson.D{{Key: "$gt", Value: 0}}}}, options.Find().SetProjection(holderFields))
	if err != nil {
		return fmt.Errorf("read holders of %s: %w", col.Name(), err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc holderDoc
		if err := cur.Decode(&doc); err != nil {
			return fmt.Errorf("read holder of %s: %w", col.Name(), err)
		}
		into[doc.ID] = doc
	}
	return cur.Err()
}

// foldHistory streams the history in (holder, sequence) order, one pass for every holder,
// and checks each holder against its postings up to the sequence read (rows written since
// are later postings): the history rows, merged with the markers not copied yet.
func (j *Journal) foldHistory(ctx context.Context, holders map[string]holderDoc, r *Report) error {
	cur, err := j.history.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "holder", Value: 1}, {Key: "seq", Value: 1}}))
	if err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	defer cur.Close(ctx)
	done := map[string]bool{}
	var current string
	var rows []markerDoc
	flush := func() {
		if doc, ok := holders[current]; ok && !done[current] {
			done[current] = true
			j.checkHolder(doc, merge(doc, rows), r)
		}
		rows = rows[:0]
	}
	for cur.Next(ctx) {
		var row historyDoc
		if err := cur.Decode(&row); err != nil {
			return fmt.Errorf("read history: %w", err)
		}
		if row.Holder != current {
			flush()
			current = row.Holder
		}
		rows = append(rows, markerDoc{K: row.Entry, Seq: row.Seq, At: row.At, Postings: row.Postings})
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	flush()
	for id, doc := range holders {
		if !done[id] {
			j.checkHolder(doc, merge(doc, nil), r)
		}
	}
	return nil
}

// merge returns the holder's postings 1..seq: its history rows and its markers, by sequence.
func merge(doc holderDoc, rows []markerDoc) []markerDoc {
	out := make([]markerDoc, 0, len(rows)+len(doc.Markers))
	for _, row := range rows {
		if row.Seq <= doc.Seq {
			out = append(out, row)
		}
	}
	out = append(out, doc.Markers...)
	slices.SortStableFunc(out, func(a, b markerDoc) int { return int(a.Seq - b.Seq) })
	return out
}

func (j *Journal) checkHolder(doc holderDoc, postings []markerDoc, r *Report) {
	r.Holders++
	fold := map[string]Counters{}
	keys := map[string]bool{}
	next := int64(1)
	for _, m := range postings {
		if m.Seq < next {
			if prev := postings[slices.IndexFunc(postings, func(p markerDoc) bool { return p.Seq == m.Seq })]; prev.K != m.K {
				r.violate("%s posting %d is both %s and %s", doc.ID, m.Seq, prev.K, m.K)
			}
			continue // the same posting as a history row and a marker
		}
		if m.Seq != next {
			r.violate("%s postings jump from %d to %d", doc.ID, next-1, m.Seq)
		}
		next = m.Seq + 1
		if keys[m.K] {
			r.violate("%s carries %s twice", doc.ID, m.K)
		}
		keys[m.K] = true
		j.foldPosting(doc.ID, m, fold, r)
	}
	if next-1 != doc.Seq {
		r.violate("%s has postings up to %d, its sequence is %d", doc.ID, next-1, doc.Seq)
	}
	j.compareCounters(doc, fold, r)
}

func (j *Journal) foldPosting(holder string, m markerDoc, fold map[string]Counters, r *Report) {
	r.Postings++
	for _, p := range m.Postings {
		d, err1 := p.Delta.counters()
		after, err2 := p.After.counters()
		if err1 != nil || err2 != nil {
			r.violate("%s posting %d of %s: unreadable amounts", holder, m.Seq, m.K)
			continue
		}
		fold[p.Currency] = fold[p.Currency].Add(d)
		if !fold[p.Currency].Equal(after) {
			r.violate("%s %s after posting %d (%s): recorded %s, fold %s", holder, p.Currency, m.Seq, m.K, after, fold[p.Currency])
		}
	}
}

func (j *Journal) compareCounters(doc holderDoc, fold map[string]Counters, r *Report) {
	_, policy := j.holderCollection(doc.ID)
	for cur := range doc.Accounts {
		c, err := doc.counters(cur)
		if err != nil {
			r.violate("%s %s: %v", doc.ID, cur, err)
			continue
		}
		if !c.Equal(fold[cur]) {
			r.violate("%s %s: counters %s, journal %s", doc.ID, cur, c, fold[cur])
		}
		if c.checkNonNegative() != nil {
			r.violate("%s %s: negative counter %s", doc.ID, cur, c)
		}
		if policy.Constrained && c.Available().Sign() < 0 {
			r.violate("%s %s: available %s is negative", doc.ID, cur, c.Available())
		}
		r.Totals[cur] = r.Totals[cur].Add(c)
	}
	for cur := range fold {
		if _, ok := doc.Accounts[cur]; !ok {
			r.violate("%s %s: postings without an account", doc.ID, cur)
		}
	}
}

func addAll(totals map[string]Counters, per map[string]Delta, inverse bool) {
	for cur, d := range per {
		if inverse {
			d = d.Neg()
		}
		totals[cur] = totals[cur].Add(d)
	}
}
