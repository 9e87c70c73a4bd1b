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

	"github.com/zcustody/suite/platform/mongodb"
)

// Accounts returns the counters of every account of holder, by currency; a holder the
// journal never touched has none (ErrAccountNotFound when it does not exist at all).
func (j *Journal) Accounts(ctx context.Context, holder string) (map[string]Counters, error) {
	col, _ := j.holderCollection(holder)
	var doc holderDoc
	err := col.FindOne(ctx, bson.D{{Key: "_id", Value: holder}}, options.FindOne().SetProjection(holderFields)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, &AccountError{Holder: holder}
	}
	if err != nil {
		return nil, fmt.Errorf("read account holder %s: %w", holder, err)
	}
	return doc.accountCounters()
}

// accountCounters decodes the counters of a holder document.
func (d holderDoc) accountCounters() (map[string]Counters, error) {
	out := make(map[string]Counters, len(d.Accounts))
	for cur := range d.Accounts {
		c, err := d.counters(cur)
		if err != nil {
			return nil, err
		}
		out[cur] = c
	}
	return out, nil
}

// DecodeAccounts reads the counters a holder document stores under "accounts" (for owners
// that read their wallet documents themselves).
func DecodeAccounts(raw map[string]AccountFields) (map[string]Counters, error) {
	out := make(map[string]Counters, len(raw))
	for cur, f := range raw {
		c, err := countersDoc(f).counters()
		if err != nil {
			return nil, fmt.Errorf("account %s: %w", cur, err)
		}
		out[cur] = c
	}
	return out, nil
}

// AccountFields is one account's counters as a holder document stores them.
type AccountFields struct {
	DebitsPending  string `bson:"dPend"`
	DebitsPosted   string `bson:"dPost"`
	CreditsPending string `bson:"cPend"`
	CreditsPosted  string `bson:"cPost"`
}

// Posting is one row of an account's statement: what an entry changed on one account and
// the counters after it.
type Posting struct {
	Seq         int64
	Entry       string // the entry id; a compensation ends with "~"
	Code        string
	BusinessKey string
	At          time.Time
	Currency    string
	Delta       Counters
	After       Counters
}

// HistoryQuery selects a holder's postings, in sequence order after AfterSeq (a cursor that
// does not shift while the log grows).
type HistoryQuery struct {
	Holder      string
	Currency    string    // "" for every currency
	BusinessKey string    // "" for every business object
	From, To    time.Time // zero for no bound; To is exclusive
	AfterSeq    int64
	Limit       int
}

// History returns up to q.Limit postings of q.Holder matching q, in sequence order. Postings
// whose history row is not written yet (a marker still on the holder) are included.
func (j *Journal) History(ctx context.Context, q HistoryQuery) ([]Posting, error) {
	filter := bson.D{{Key: "holder", Value: q.Holder}, {Key: "seq", Value: bson.D{{Key: "$gt", Value: q.AfterSeq}}}}
	if q.BusinessKey != "" {
		filter = append(filter, bson.E{Key: "businessKey", Value: q.BusinessKey})
	}
	if q.Currency != "" {
		filter = append(filter, bson.E{Key: "p.cur", Value: q.Currency})
	}
	if r := timeRange(q.From, q.To); r != nil {
		filter = append(filter, bson.E{Key: "at", Value: r})
	}
	// A statement page is a search: bounded in server time like every other (mongodb.FindPage).
	rows, err := mongodb.FindPage[historyDoc](ctx, j.history.Collection, mongodb.Query{Filter: filter, Sort: bson.D{{Key: "seq", Value: 1}}, Limit: int64(q.Limit)})
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", q.Holder, err)
	}
	rows, err = j.withMarkers(ctx, q, rows)
	if err != nil {
		return nil, err
	}
	return postingsOfRows(rows, q.Currency)
}

func timeRange(from, to time.Time) bson.D {
	var r bson.D
	if !from.IsZero() {
		r = append(r, bson.E{Key: "$gte", Value: from})
	}
	if !to.IsZero() {
		r = append(r, bson.E{Key: "$lt", Value: to})
	}
	return r
}

// withMarkers adds the holder's markers that match q and have no row yet.
func (j *Journal) withMarkers(ctx context.Context, q HistoryQuery, rows []historyDoc) ([]historyDoc, error) {
	col, _ := j.holderCollection(q.Holder)
	var doc holderDoc
	err := col.FindOne(ctx, bson.D{{Key: "_id", Value: q.Holder}}, options.FindOne().SetProjection(holderFields)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return rows, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read account holder %s: %w", q.Holder, err)
	}
	have := map[int64]bool{}
	for _, r := range rows {
		have[r.Seq] = true
	}
	for _, m := range doc.Markers {
		if have[m.Seq] || m.Seq <= q.AfterSeq || !markerMatches(m, q) {
			continue
		}
		rows = append(rows, historyDoc{Holder: q.Holder, Seq: m.Seq, Entry: m.K, At: m.At, Postings: m.Postings})
	}
	slices.SortFunc(rows, func(a, b historyDoc) int { return int(a.Seq - b.Seq) })
	if q.Limit > 0 && len(rows) > q.Limit {
		rows = rows[:q.Limit]
	}
	return rows, nil
}

func markerMatches(m markerDoc, q HistoryQuery) bool {
	if (!q.From.IsZero() && m.At.Before(q.From)) || (!q.To.IsZero() && !m.At.Before(q.To)) || q.BusinessKey != "" {
		return false // a marker does not carry its business key: its row will
	}
	return q.Currency == "" || slices.ContainsFunc(m.Postings, func(p postingDoc) bool { return p.Currency == q.Currency })
}

func postingsOfRows(rows []historyDoc, currency string) ([]Posting, error) {
	var out []Posting
	for _, r := range rows {
		for _, p := range r.Postings {
			if currency != "" && p.Currency != currency {
				continue
			}
			d, err := p.Delta.counters()
			if err != nil {
				return nil, err
			}
			after, err := p.After.counters()
			if err != nil {
				return nil, err
			}
			out = append(out, Posting{Seq: r.Seq, Entry: r.Entry, Code: r.Code, BusinessKey: r.BusinessKey, At: r.At.UTC(),
				Currency: p.Currency, Delta: d, After: after})
		}
	}
	return out, nil
}
