package journal

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// completenessBatch is how many entries completeness reads the postings of in one query.
const completenessBatch = 200

// checkCompleteness compares the postings with the entries' legs (Stripe's completeness
// check): every entry applied before start appears on every holder it names, exactly once,
// with exactly its legs' change, and nowhere else; a rejected one is undone wherever it was
// applied (its compensation carries the inverse), and a compensation without the entry is
// only a block (no change). Entries changed since start are still moving and are left to the
// next pass. holders are the snapshots the fold read (after start): their markers are the
// postings whose history row may not be written yet. One query per batch of entries.
func (j *Journal) checkCompleteness(ctx context.Context, holders map[string]holderDoc, start time.Time, r *Report) error {
	cur, err := j.entries.Find(ctx, bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{StateApplied, StateRejected}}}},
		{Key: "updatedAt", Value: bson.D{{Key: "$lt", Value: start}}}},
		options.Find().SetProjection(bson.D{{Key: "kind", Value: 1}, {Key: "legs", Value: 1}, {Key: "state", Value: 1}, {Key: "holdRef", Value: 1},
			{Key: "fp", Value: 1}}))
	if err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	defer cur.Close(ctx)
	batch := make([]entryDoc, 0, completenessBatch)
	for cur.Next(ctx) {
		var d entryDoc
		if err := cur.Decode(&d); err != nil {
			return fmt.Errorf("read entry: %w", err)
		}
		if d.Fingerprint == blocked || len(d.Legs) == 0 {
			continue // a hold id taken by a void: no legs, nothing posted
		}
		if batch = append(batch, d); len(batch) == completenessBatch {
			if err := j.completeBatch(ctx, batch, holders, r); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read entries: %w", err)
	}
	return j.completeBatch(ctx, batch, holders, r)
}

func (j *Journal) completeBatch(ctx context.Context, batch []entryDoc, holders map[string]holderDoc, r *Report) error {
	if len(batch) == 0 {
		return nil
	}
	keys := make(bson.A, 0, 2*len(batch))
	for _, d := range batch {
		keys = append(keys, d.ID, compensation(d.ID))
	}
	cur, err := j.history.Find(ctx, bson.D{{Key: "entry", Value: bson.D{{Key: "$in", Value: keys}}}})
	if err != nil {
		return fmt.Errorf("read postings of entries: %w", err)
	}
	var rows []historyDoc
	if err := cur.All(ctx, &rows); err != nil {
		return fmt.Errorf("read postings of entries: %w", err)
	}
	// postings[entry marker][holder] → the posting, by sequence (a row and a marker of the
	// same posting are one).
	postings := map[string]map[string]map[int64]markerDoc{}
	add := func(h string, m markerDoc) {
		by := postings[m.K]
		if by == nil {
			by = map[string]map[int64]markerDoc{}
			postings[m.K] = by
		}
		if by[h] == nil {
			by[h] = map[int64]markerDoc{}
		}
		by[h][m.Seq] = m
	}
	for _, row := range rows {
		add(row.Holder, markerDoc{K: row.Entry, Seq: row.Seq, Postings: row.Postings})
	}
	wanted := map[string]bool{}
	for _, k := range keys {
		wanted[k.(string)] = true
	}
	for h, doc := range holders {
		for _, m := range doc.Markers {
			if wanted[m.K] {
				add(h, m)
			}
		}
	}
	for _, d := range batch {
		e, err := d.entry()
		if err != nil {
			r.violate("%v", err)
			continue
		}
		j.completeEntry(e, d.State, postings[e.ID], postings[compensation(e.ID)], r)
	}
	return nil
}

// completeEntry checks one final entry's postings (own: its marker's, by holder; undone: its
// compensation's).
func (j *Journal) completeEntry(e Entry, state State, own, undone map[string]map[int64]markerDoc, r *Report) {
	deltas := e.deltas()
	for h, by := range own {
		if _, named := deltas[h]; !named {
			r.violate("entry %s is posted on %s, which it does not name", e.ID, h)
			continue
		}
		if len(by) > 1 {
			r.violate("entry %s is posted %d times on %s", e.ID, len(by), h)
		}
	}
	for h, by := range undone {
		_, applied := own[h]
		for _, m := range by {
			if !applied && len(m.Postings) > 0 {
				r.violate("entry %s is undone on %s where it was never posted", e.ID, h)
			}
		}
		if state == StateApplied {
			r.violate("applied entry %s carries a compensation on %s", e.ID, h)
		}
	}
	for h, per := range deltas {
		switch {
		case state == StateApplied && len(own[h]) == 0:
			r.violate("applied entry %s is missing on %s", e.ID, h)
		case state == StateApplied:
			for _, m := range own[h] {
				if !postsExactly(m.Postings, per) {
					r.violate("entry %s on %s posted %s, its legs say %s", e.ID, h, changesOf(m.Postings), per)
				}
			}
		case len(own[h]) > 0:
			if len(undone[h]) != 1 {
				r.violate("rejected entry %s is posted on %s and undone %d times", e.ID, h, len(undone[h]))
				continue
			}
			for _, u := range undone[h] {
				for _, m := range own[h] {
					if !postsExactly(u.Postings, inverseOfPostings(m.Postings)) {
						r.violate("rejected entry %s on %s: its compensation %s does not undo %s", e.ID, h, changesOf(u.Postings), changesOf(m.Postings))
					}
				}
			}
		}
	}
}

// postsExactly reports whether postings change exactly the accounts of per by its deltas.
func postsExactly(postings []postingDoc, per map[string]Delta) bool {
	if len(postings) != len(per) {
		return false
	}
	for _, p := range postings {
		d, err := p.Delta.counters()
		want, ok := per[p.Currency]
		if err != nil || !ok || !d.Equal(want) {
			return false
		}
	}
	return true
}

func inverseOfPostings(postings []postingDoc) map[string]Delta {
	out := make(map[string]Delta, len(postings))
	for _, p := range postings {
		if d, err := p.Delta.counters(); err == nil {
			out[p.Currency] = d.Neg()
		}
	}
	return out
}

func changesOf(postings []postingDoc) string {
	out := make(map[string]string, len(postings))
	for _, p := range postings {
		d, err := p.Delta.counters()
		if err != nil {
			out[p.Currency] = "unreadable"
			continue
		}
		out[p.Currency] = d.String()
	}
	return fmt.Sprint(out)
}
