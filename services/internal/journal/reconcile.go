package journal

import (
	"context"
	"fmt"
	"slices"

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
// applied twice to a holder, a rejected entry must be undone wherever it was applied, no
// counter may be negative and no constrained account's available balance either; and per
// currency the trial balance (all accounts, system and clearing ones included, plus the
// legs of entries in flight) must be zero on both the pending and the posted side.
func (j *Journal) Reconcile(ctx context.Context) (Report, error) {
	r := Report{Totals: map[string]Counters{}}
	watched, err := j.watchedEntries(ctx)
	if err != nil {
		return r, err
	}
	seen := map[string]map[string]bool{} // holder → markers of watched entries present
	for _, col := range append(slices.Clone(j.cfg.Collections), j.accts.Name()) {
		if err := j.reconcileCollection(ctx, j.cfg.DB.Collection(col), &r, watched, seen); err != nil {
			return r, err
		}
	}
	if err := j.checkWatched(watched, seen, &r); err != nil {
		return r, err
	}
	for cur, t := range r.Totals {
		if !t.DebitsPosted.Equal(t.CreditsPosted) || !t.DebitsPending.Equal(t.CreditsPending) {
			r.violate("trial balance of %s is off: %s", cur, t)
		}
	}
	return r, nil
}

// watchedEntries returns the entries whose application the trial balance must look at:
// those in flight and those rejected.
func (j *Journal) watchedEntries(ctx context.Context) (map[string]entryDoc, error) {
	cur, err := j.entries.Find(ctx, bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateRecorded, StateCompensating, StateRejected}}}}})
	if err != nil {
		return nil, fmt.Errorf("find entries in flight: %w", err)
	}
	var docs []entryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("find entries in flight: %w", err)
	}
	out := make(map[string]entryDoc, len(docs))
	for _, d := range docs {
		out[d.ID] = d
	}
	return out, nil
}

func (j *Journal) reconcileCollection(ctx context.Context, col *mongo.Collection, r *Report, watched map[string]entryDoc, seen map[string]map[string]bool) error {
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
		postings, err := j.postingsOf(ctx, doc)
		if err != nil {
			return err
		}
		j.checkHolder(doc, postings, r, watched, seen)
	}
	return cur.Err()
}

// postingsOf returns the holder's postings 1..seq: its history rows and its markers.
func (j *Journal) postingsOf(ctx context.Context, doc holderDoc) ([]markerDoc, error) {
	cur, err := j.history.Find(ctx, bson.D{{Key: "holder", Value: doc.ID}, {Key: "seq", Value: bson.D{{Key: "$lte", Value: doc.Seq}}}},
		options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", doc.ID, err)
	}
	var rows []historyDoc
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read history of %s: %w", doc.ID, err)
	}
	out := make([]markerDoc, 0, len(rows)+len(doc.Markers))
	for _, h := range rows {
		out = append(out, markerDoc{K: h.Entry, Seq: h.Seq, At: h.At, Postings: h.Postings})
	}
	out = append(out, doc.Markers...)
	slices.SortStableFunc(out, func(a, b markerDoc) int { return int(a.Seq - b.Seq) })
	return out, nil
}

func (j *Journal) checkHolder(doc holderDoc, postings []markerDoc, r *Report, watched map[string]entryDoc, seen map[string]map[string]bool) {
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
		if _, ok := watched[entryOf(m.K)]; ok {
			if seen[doc.ID] == nil {
				seen[doc.ID] = map[string]bool{}
			}
			seen[doc.ID][m.K] = true
		}
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

// checkWatched adds the legs of entries in flight to the totals as if they had finished,
// and checks that a rejected entry is undone wherever it was applied.
func (j *Journal) checkWatched(watched map[string]entryDoc, seen map[string]map[string]bool, r *Report) error {
	for id, d := range watched {
		e, err := d.entry()
		if err != nil {
			return err
		}
		if d.State != StateRejected {
			r.InFlight++
		}
		for h, per := range e.deltas() {
			applied, undone := seen[h][id], seen[h][compensation(id)]
			switch {
			case d.State == StateRecorded && !applied && !undone:
				addAll(r.Totals, per, false)
			case d.State == StateCompensating && applied && !undone:
				addAll(r.Totals, per, true)
			case d.State == StateRejected && applied && !undone:
				r.violate("%s carries rejected entry %s without its compensation", h, id)
			}
		}
	}
	return nil
}

func addAll(totals map[string]Counters, per map[string]Delta, inverse bool) {
	for cur, d := range per {
		if inverse {
			d = d.Neg()
		}
		totals[cur] = totals[cur].Add(d)
	}
}
