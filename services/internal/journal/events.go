package journal

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Journal postings as events (docs/decisions.md, "Events: journal postings"). They are read
// from the journal itself, never copied into the wallet documents: when Config.EventEntity
// is set, the update that marks an entry applied also stages, on the entry's own document,
// one event per company whose accounts the entry changed, carrying that company's postings
// only (system and clearing accounts belong to no company). The entry becomes final and
// its events are recorded in one single-document write, so an applied entry always has its
// events and a rejected one (its compensations included) has none; the service relays the
// entries collection like its other outboxes.

// EventPosted is the type of the event of an applied entry.
const EventPosted = "journal.entry.posted"

// MaxEventPostings bounds the postings one event carries (an entry may touch a thousand
// accounts of one company); postingCount says how many there are, and the account
// statements (the history endpoints) list them all.
const MaxEventPostings = 32

// postedData is an applied entry as one company's event shows it.
type postedData struct {
	EntryID      string `json:"entryId"`
	Type         string `json:"type"`
	Reference    string `json:"reference,omitempty"`
	Kind         Kind   `json:"kind"`
	HoldID       string `json:"holdId,omitempty"`
	PostingCount int    `json:"postingCount"`
	// Postings are as the account statement shows them, by wallet and currency.
	Postings []postedPosting `json:"postings"`
}

type postedPosting struct {
	WalletID          string `json:"walletId"`
	Sequence          int64  `json:"sequence,string"`
	Currency          string `json:"currency"`
	CreatedAt         string `json:"createdAt"`
	AvailableChange   string `json:"availableChange"`
	LedgerChange      string `json:"ledgerChange"`
	PendingOutChange  string `json:"pendingOutChange"`
	PendingInChange   string `json:"pendingInChange"`
	AvailableBalance  string `json:"availableBalance"`
	LedgerBalance     string `json:"ledgerBalance"`
	PendingOutBalance string `json:"pendingOutBalance"`
	PendingInBalance  string `json:"pendingInBalance"`
}

// EventEntityID is the entity id of entry id's event to company: each company's view is an
// entity of its own (the log keeps one event per entity version).
func EventEntityID(id, company string) string { return id + "@" + company }

// applied is what an entry did at one holder: the holder's row and its company.
type applied struct {
	row     historyDoc
	company string
}

// postedDrafts are the events of e, applied as done: one per company, in company order.
func (j *Journal) postedDrafts(ctx context.Context, e Entry, done []applied) ([]outbox.Draft, error) {
	if j.cfg.EventEntity == "" {
		return nil, nil
	}
	byCompany := map[string][]historyDoc{}
	for _, a := range done {
		if a.company != "" {
			byCompany[a.company] = append(byCompany[a.company], a.row)
		}
	}
	companies := make([]string, 0, len(byCompany))
	for c := range byCompany {
		companies = append(companies, c)
	}
	slices.Sort(companies)
	request := outbox.RequestID(ctx)
	drafts := make([]outbox.Draft, 0, len(companies))
	for _, c := range companies {
		data, err := postedView(e, byCompany[c])
		if err != nil {
			return nil, err
		}
		drafts = append(drafts, outbox.Draft{Type: EventPosted, CompanyID: c, EntityType: j.cfg.EventEntity,
			EntityID: EventEntityID(e.ID, c), Data: data, RequestID: request})
	}
	return drafts, nil
}

func postedView(e Entry, rows []historyDoc) (postedData, error) {
	d := postedData{EntryID: e.ID, Type: e.Code, Reference: e.BusinessKey, Kind: e.Kind, HoldID: e.HoldRef, Postings: []postedPosting{}}
	for _, r := range rows {
		postings, err := postingsOfRows([]historyDoc{r}, "")
		if err != nil {
			return postedData{}, err
		}
		d.PostingCount += len(postings)
		for _, p := range postings {
			if len(d.Postings) == MaxEventPostings {
				break
			}
			delta, after := p.Delta, p.After
			d.Postings = append(d.Postings, postedPosting{WalletID: r.Holder, Sequence: p.Seq, Currency: p.Currency,
				CreatedAt: apitime.Format(p.At), AvailableChange: delta.Available().String(), LedgerChange: delta.Ledger().String(),
				PendingOutChange: delta.PendingOut().String(), PendingInChange: delta.PendingIn().String(),
				AvailableBalance: after.Available().String(), LedgerBalance: after.Ledger().String(),
				PendingOutBalance: after.PendingOut().String(), PendingInBalance: after.PendingIn().String()})
		}
	}
	return d, nil
}

// markApplied moves entry e from recorded to applied and stages its events in the same
// update; it reports whether it did (another runner may have finished, or be undoing, e).
func (j *Journal) markApplied(ctx context.Context, e Entry, done []applied) (bool, error) {
	drafts, err := j.postedDrafts(ctx, e, done)
	if err != nil {
		return false, err
	}
	now := j.now()
	set := bson.D{{Key: "state", Value: StateApplied}, {Key: "updatedAt", Value: now}}
	seqSet, push, _, err := outbox.StageEach(0, now, drafts...)
	if err != nil {
		return false, err
	}
	update := bson.D{{Key: "$set", Value: append(set, seqSet...)}}
	if push != nil {
		update = append(update, bson.E{Key: "$push", Value: push})
	}
	res, err := j.entries.UpdateOne(ctx, bson.D{{Key: "_id", Value: e.ID}, {Key: "state", Value: StateRecorded}}, update)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// Outbox is the collection whose documents (the entries) carry the journal's events, for the
// service's relay; nil when the journal stages none.
func (j *Journal) Outbox() *mongo.Collection {
	if j.cfg.EventEntity == "" {
		return nil
	}
	return j.entries
}
