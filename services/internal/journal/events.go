package journal

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
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

// postedView is applied entry e as one company's event shows it: rows are that company's
// statement rows of e.
func postedView(e Entry, rows []historyDoc) (*eventsv1.JournalEntryPostedEventData, error) {
	d := &eventsv1.JournalEntryPostedEventData{EntryId: e.ID, Type: e.Code, Reference: outbox.IfSet(e.BusinessKey), Kind: string(e.Kind),
		HoldId: outbox.IfSet(e.HoldRef), Reverses: outbox.IfSet(e.Reverses)}
	for _, r := range rows {
		postings, err := postingsOfRows([]historyDoc{r}, "")
		if err != nil {
			return nil, err
		}
		d.PostingCount += int32(len(postings))
		for _, p := range postings {
			if len(d.Postings) == MaxEventPostings {
				break
			}
			delta, after := p.Delta, p.After
			d.Postings = append(d.Postings, &eventsv1.JournalPosting{WalletId: r.Holder, Sequence: p.Seq, Currency: p.Currency,
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
	set, push, _, err := outbox.StageEach(0, now, drafts...)
	if err != nil {
		return false, err
	}
	return j.transition(ctx, e.ID, StateRecorded, StateApplied, now, set, push)
}

// Outbox is the collection whose documents (the entries) carry the journal's events, for the
// service's relay; nil when the journal stages none.
func (j *Journal) Outbox() *mongo.Collection {
	if j.cfg.EventEntity == "" {
		return nil
	}
	return j.entries.Collection
}
