package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
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
	// Limit counts rows (sequence numbers), not postings: a row that changed two currencies
	// is two postings of one sequence number, and a block (a compensation marker written
	// where the entry was refused) is a row of none.
	Limit int
}

// HistoryPage is one page of a holder's statement.
type HistoryPage struct {
	// Postings of the page's rows in sequence order, one per currency a row changed (with
	// HistoryQuery.Currency, that currency's only).
	Postings []Posting
	// Last is the sequence number of the page's last row (AfterSeq when the page is empty):
	// the AfterSeq of the next page. Every matching posting at or before it is in this page
	// or an earlier one, however many postings its rows carry.
	Last int64
	// More reports that more rows matched than the page holds: the next page starts after
	// Last. Without it the page is the last one so far (a later page may find postings
	// applied since).
	More bool
}

// History returns the postings of q's page (HistoryPage) alone. A caller that pages by the
// last posting's Seq sees every posting, but may stop early when a page holds only blocks
// (rows without postings): the statement extensions page by HistoryPage's Last and More.
func (j *Journal) History(ctx context.Context, q HistoryQuery) ([]Posting, error) {
	page, err := j.HistoryPage(ctx, q)
	return page.Postings, err
}

// HistoryPage returns up to q.Limit rows of q.Holder's statement matching q, in sequence
// order, as postings. Postings whose history row is not written yet (a marker still on the
// holder) are included, so no posting the filter matches is ever behind the cursor without
// being shown:
//
//   - the holder is read before its rows, and the rows are read up to the holder's sequence
//     as read: a posting up to it is either a marker on the holder as read, or its marker
//     was pruned before that read, which happens only once its row exists. (Reading the rows
//     first lost a posting whose row came and whose marker went between the two reads,
//     while a later posting's marker moved the cursor past it.)
//   - a marker carries no business key: with a BusinessKey filter, the keys of the markers'
//     entries are read from the entries (markersOf).
func (j *Journal) HistoryPage(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	if q.Limit < 1 {
		return HistoryPage{}, fmt.Errorf("history of %s: a page needs a limit", q.Holder)
	}
	doc, found, err := j.statementHolder(ctx, q.Holder)
	if err != nil {
		return HistoryPage{}, err
	}
	seq := bson.D{{Key: "$gt", Value: q.AfterSeq}}
	if found {
		seq = append(seq, bson.E{Key: "$lte", Value: doc.Seq})
	}
	filter := bson.D{{Key: "holder", Value: q.Holder}, {Key: "seq", Value: seq}}
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
	// One row more than the page tells whether another page follows.
	rows, err := mongodb.FindPage[historyDoc](ctx, j.history.Collection, mongodb.Query{Filter: filter, Sort: bson.D{{Key: "seq", Value: 1}}, Limit: int64(q.Limit) + 1})
	if err != nil {
		return HistoryPage{}, fmt.Errorf("read history of %s: %w", q.Holder, err)
	}
	markers, err := j.markersOf(ctx, q, doc, rows)
	if err != nil {
		return HistoryPage{}, err
	}
	rows = append(rows, markers...)
	slices.SortFunc(rows, func(a, b historyDoc) int { return cmp.Compare(a.Seq, b.Seq) })
	page := HistoryPage{Last: q.AfterSeq}
	if len(rows) > q.Limit {
		rows, page.More = rows[:q.Limit], true
	}
	if len(rows) > 0 {
		page.Last = rows[len(rows)-1].Seq
	}
	page.Postings, err = postingsOfRows(rows, q.Currency)
	return page, err
}

// statementHolder reads the journal's fields of holder; found is false when it does not exist.
func (j *Journal) statementHolder(ctx context.Context, holder string) (holderDoc, bool, error) {
	col, _ := j.holderCollection(holder)
	var doc holderDoc
	err := col.FindOne(ctx, bson.D{{Key: "_id", Value: holder}}, options.FindOne().SetProjection(holderFields)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return holderDoc{}, false, nil
	}
	if err != nil {
		return holderDoc{}, false, fmt.Errorf("read account holder %s: %w", holder, err)
	}
	return doc, true, nil
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

// markersOf returns, as rows, the markers of the holder doc after q.AfterSeq that match q and
// whose rows are not among rows. A marker names neither its entry's business key nor its
// code: with a BusinessKey filter they are read from the markers' entries (one find by _id,
// only when such markers exist; an entry's key never changes). We chose that over stopping
// the page before the first marker without a row (an entry in flight for minutes would hold
// up every client paging by reference) and over writing the key into every marker (a
// bigger holder document on every write, for a filter few pages use).
func (j *Journal) markersOf(ctx context.Context, q HistoryQuery, doc holderDoc, rows []historyDoc) ([]historyDoc, error) {
	have := make(map[int64]bool, len(rows))
	for _, r := range rows {
		have[r.Seq] = true
	}
	var out []historyDoc
	for _, m := range doc.Markers {
		if !have[m.Seq] && m.Seq > q.AfterSeq && markerMatches(m, q) {
			out = append(out, historyDoc{Holder: q.Holder, Seq: m.Seq, Entry: m.K, At: m.At, Postings: m.Postings})
		}
	}
	if q.BusinessKey == "" || len(out) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(out))
	for _, r := range out {
		ids = append(ids, entryOf(r.Entry))
	}
	cur, err := j.entries.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(bson.D{{Key: "code", Value: 1}, {Key: "businessKey", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read entries of markers: %w", err)
	}
	var entries []entryDoc
	if err := cur.All(ctx, &entries); err != nil {
		return nil, fmt.Errorf("read entries of markers: %w", err)
	}
	byID := make(map[string]entryDoc, len(entries))
	for _, e := range entries {
		byID[e.ID] = e
	}
	for i := range out {
		e := byID[entryOf(out[i].Entry)]
		out[i].Code, out[i].BusinessKey = e.Code, e.BusinessKey
	}
	return slices.DeleteFunc(out, func(r historyDoc) bool { return r.BusinessKey != q.BusinessKey }), nil
}

// markerMatches reports whether marker m passes q's time and currency filters (its business
// key is its entry's: markersOf).
func markerMatches(m markerDoc, q HistoryQuery) bool {
	if (!q.From.IsZero() && m.At.Before(q.From)) || (!q.To.IsZero() && !m.At.Before(q.To)) {
		return false
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

// Balance is one account's counters as of a time: those after Seq, the account's last
// posting applied at or before that time (At), or zero counters (Seq 0) before its first.
type Balance struct {
	Currency string
	Seq      int64
	At       time.Time
	Counters Counters
}

// BalancesAt returns holder's accounts in currencies as of t, sorted by currency; with no
// currency, every account the holder has. Each account's counters are those its last
// posting at or before t left (zero counters, Seq 0, before its first), whether that
// posting's history row is written or it is still a marker on the holder.
//
// The holder is read first, then per currency one indexed query (holder_cur_at: holder,
// currency, then at and seq read backwards, limit 1) for the last row at or before t up to
// the holder's sequence as read; the holder's markers are compared with it (a marker is
// pruned only once its row exists, so the two reads miss none). Rows hold the counters
// after each posting, so nothing is folded. A holder that does not exist is an
// *AccountError.
func (j *Journal) BalancesAt(ctx context.Context, holder string, t time.Time, currencies ...string) ([]Balance, error) {
	doc, found, err := j.statementHolder(ctx, holder)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &AccountError{Holder: holder}
	}
	if len(currencies) == 0 {
		currencies = slices.Collect(maps.Keys(doc.Accounts))
	}
	currencies = slices.Compact(slices.Sorted(slices.Values(currencies)))
	out := make([]Balance, 0, len(currencies))
	for _, cur := range currencies {
		b, err := j.balanceAt(ctx, doc, cur, t)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// balanceAt is currency's account of the holder doc as of t (BalancesAt).
func (j *Journal) balanceAt(ctx context.Context, doc holderDoc, currency string, t time.Time) (Balance, error) {
	filter := bson.D{{Key: "holder", Value: doc.ID}, {Key: "p.cur", Value: currency}, {Key: "at", Value: bson.D{{Key: "$lte", Value: t}}},
		{Key: "seq", Value: bson.D{{Key: "$lte", Value: doc.Seq}}}}
	rows, err := mongodb.FindPage[historyDoc](ctx, j.history.Collection, mongodb.Query{Filter: filter,
		Sort: bson.D{{Key: "at", Value: -1}, {Key: "seq", Value: -1}}, Limit: 1})
	if err != nil {
		return Balance{}, fmt.Errorf("read history of %s: %w", doc.ID, err)
	}
	// The row found and the holder's markers (postings whose rows may not exist yet): the
	// last of them by time, then sequence, that changed the account.
	candidates := rows
	for _, m := range doc.Markers {
		candidates = append(candidates, historyDoc{Seq: m.Seq, At: m.At, Postings: m.Postings})
	}
	last, after := Balance{Currency: currency}, countersDoc{}
	for _, r := range candidates {
		if r.At.After(t) || r.Seq > doc.Seq || (last.Seq != 0 && (r.At.Before(last.At) || r.At.Equal(last.At) && r.Seq <= last.Seq)) {
			continue
		}
		if i := slices.IndexFunc(r.Postings, func(p postingDoc) bool { return p.Currency == currency }); i >= 0 {
			last.Seq, last.At, after = r.Seq, r.At.UTC(), r.Postings[i].After
		}
	}
	if last.Seq == 0 {
		return last, nil
	}
	c, err := after.counters()
	if err != nil {
		return Balance{}, fmt.Errorf("account %s %s: %w", doc.ID, currency, err)
	}
	last.Counters = c
	return last, nil
}
