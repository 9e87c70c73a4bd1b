package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/webhook"
	"github.com/zcustody/suite/services/events"
)

const colSubscriptions = "subscriptions"

// SubscriptionIndexes are the indexes of the subscription queries: a company's list, and the
// dispatcher's pass over the delivering ones.
func SubscriptionIndexes() []mongodb.Index {
	return []mongodb.Index{
		{Collection: colSubscriptions, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		{Collection: colSubscriptions, Name: "status_enabled_id", Keys: mongodb.Keys("status", "enabled", "_id")},
		// The deletions a sweep finishes (FinishDeletions).
		{Collection: colSubscriptions, Name: "deleting", Keys: mongodb.Keys(fieldDeleting), Sparse: true},
	}
}

type secretDoc struct {
	Sealed webhook.Sealed `bson:"sealed"`
	Until  *time.Time     `bson:"until,omitempty"`
}

type changeDoc struct {
	Kind       string          `bson:"kind"`
	URL        string          `bson:"url,omitempty"`
	Types      []string        `bson:"types,omitempty"`
	Secret     *webhook.Sealed `bson:"secret,omitempty"`
	ProposedBy string          `bson:"proposedBy"`
	ProposedAt time.Time       `bson:"proposedAt"`
}

// subscriptionDoc is a subscription as stored.
type subscriptionDoc struct {
	ID              string         `bson:"_id"`
	CompanyID       string         `bson:"companyId"`
	URL             string         `bson:"url"`
	Types           []string       `bson:"types"`
	Enabled         bool           `bson:"enabled"`
	Status          string         `bson:"status"`
	SuspendedReason string         `bson:"suspendedReason,omitempty"`
	SuspendedAt     *time.Time     `bson:"suspendedAt,omitempty"`
	Secrets         []secretDoc    `bson:"secrets"`
	Seed            webhook.Sealed `bson:"seed"`
	PublicKey       string         `bson:"publicKey"`
	Pending         *changeDoc     `bson:"pending,omitempty"`
	Cursor          int64          `bson:"cursor"`
	FailingSince    *time.Time     `bson:"failingSince,omitempty"`
	EventSeq        int64          `bson:"eventSeq"`
	Missed          *missedDoc     `bson:"missed,omitempty"`
	CreatedBy       string         `bson:"createdBy"`
	UpdatedBy       string         `bson:"updatedBy"`
	CreatedAt       time.Time      `bson:"createdAt"`
	UpdatedAt       time.Time      `bson:"updatedAt"`
	Version         int64          `bson:"version"`
}

type missedDoc struct {
	From int64     `bson:"from"`
	To   int64     `bson:"to"`
	At   time.Time `bson:"at"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func toSubscriptionDoc(s events.Subscription) subscriptionDoc {
	d := subscriptionDoc{ID: s.ID, CompanyID: s.CompanyID, URL: s.URL, Types: s.Types, Enabled: s.Enabled, Status: s.Status,
		SuspendedReason: s.SuspendedReason, SuspendedAt: timePtr(s.SuspendedAt), Seed: s.Seed, PublicKey: s.PublicKey,
		Cursor: s.Cursor, FailingSince: timePtr(s.FailingSince), EventSeq: s.EventSeq, CreatedBy: s.CreatedBy, UpdatedBy: s.UpdatedBy,
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Version: s.Version}
	if d.Types == nil {
		d.Types = []string{}
	}
	if m := s.Missed; m != nil {
		d.Missed = &missedDoc{From: m.From, To: m.To, At: m.At.UTC()}
	}
	for _, sec := range s.Secrets {
		d.Secrets = append(d.Secrets, secretDoc{Sealed: sec.Sealed, Until: timePtr(sec.Until)})
	}
	if c := s.Pending; c != nil {
		d.Pending = &changeDoc{Kind: c.Kind, URL: c.URL, Types: c.Types, ProposedBy: c.ProposedBy, ProposedAt: c.ProposedAt.UTC()}
		if c.Kind == events.ChangeSecret {
			sealed := c.Secret
			d.Pending.Secret = &sealed
		}
	}
	return d
}

func (d subscriptionDoc) subscription() events.Subscription {
	s := events.Subscription{ID: d.ID, CompanyID: d.CompanyID, URL: d.URL, Types: d.Types, Enabled: d.Enabled, Status: d.Status,
		SuspendedReason: d.SuspendedReason, SuspendedAt: timeOf(d.SuspendedAt), Seed: d.Seed, PublicKey: d.PublicKey,
		Cursor: d.Cursor, FailingSince: timeOf(d.FailingSince), EventSeq: d.EventSeq, CreatedBy: d.CreatedBy, UpdatedBy: d.UpdatedBy,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Version: d.Version}
	for _, sec := range d.Secrets {
		s.Secrets = append(s.Secrets, events.SealedSecret{Sealed: sec.Sealed, Until: timeOf(sec.Until)})
	}
	if m := d.Missed; m != nil {
		s.Missed = &events.Missed{From: m.From, To: m.To, At: m.At.UTC()}
	}
	if c := d.Pending; c != nil {
		s.Pending = &events.Change{Kind: c.Kind, URL: c.URL, Types: c.Types, ProposedBy: c.ProposedBy, ProposedAt: c.ProposedAt.UTC()}
		if c.Secret != nil {
			s.Pending.Secret = *c.Secret
		}
	}
	return s
}

// InsertSubscription stores a new subscription, refusing one over the company's
// events.MaxSubscriptions (rejected ones aside) or events.MaxKept (all).
func (s *Store) InsertSubscription(ctx context.Context, sub events.Subscription) error {
	// One read of the company's statuses (at most MaxKept of them) counts both limits.
	kept, err := mongodb.FindPage[struct {
		Status   string `bson:"status"`
		Deleting bool   `bson:"deleting"`
	}](ctx, s.db.Collection(colSubscriptions), mongodb.Query{Filter: bson.D{{Key: "companyId", Value: sub.CompanyID}},
		Projection: bson.D{{Key: "status", Value: 1}, {Key: fieldDeleting, Value: 1}}, Limit: events.MaxKept + 1})
	if err != nil {
		return fmt.Errorf("events: count subscriptions: %w", err)
	}
	all, live := 0, 0
	for _, k := range kept {
		if k.Deleting { // gone for the company; a sweep finishes it
			continue
		}
		all++
		if k.Status != events.StatusRejected {
			live++
		}
	}
	if live >= events.MaxSubscriptions {
		return apperr.Precondition(apperr.CodeConflict, "url", "company %s has %d subscriptions, the most it may have: delete one first", sub.CompanyID, live)
	}
	if all >= events.MaxKept {
		return apperr.Precondition(apperr.CodeConflict, "url", "company %s keeps %d subscriptions, rejected ones included, the most it may: delete rejected ones first", sub.CompanyID, all)
	}
	sub.Version = 1
	if _, err := s.db.Collection(colSubscriptions).InsertOne(ctx, toSubscriptionDoc(sub)); err != nil {
		return fmt.Errorf("events: insert subscription: %w", err)
	}
	return nil
}

// DeleteSubscription deletes company's subscription id and its waiting deliveries, and
// returns how many deliveries went. It is switched off first, so the dispatcher makes no
// new delivery for it while its deliveries go; a call cut short is finished by the next.
func (s *Store) DeleteSubscription(ctx context.Context, company, id string) (int, error) {
	col := s.db.Collection(colSubscriptions)
	filter := bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: company}}
	// Switched off and marked: a fan-out that read the subscription before can no longer
	// move its cursor, and drops what it made (DropIfDeleting).
	res, err := col.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "enabled", Value: false}, {Key: fieldDeleting, Value: true}}}})
	if err != nil {
		return 0, fmt.Errorf("events: switch off subscription %s: %w", id, err)
	}
	if res.MatchedCount == 0 {
		return 0, apperr.ErrNotFound
	}
	// The waiting deliveries go a page at a time, so no one write grows with the backlog; a
	// call cut short leaves the subscription switched off with the rest, and the next call
	// goes on from there.
	stillWaiting := bson.E{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{events.DeliveryPending, events.DeliveryFailed}}}}
	waiting := bson.D{{Key: "subscriptionId", Value: id}, stillWaiting}
	gone := 0
	for {
		page, err := mongodb.FindPage[idDoc](ctx, s.db.Collection(colDeliveries),
			mongodb.Query{Filter: waiting, Projection: bson.D{{Key: "_id", Value: 1}}, Limit: deletePage})
		if err != nil {
			return gone, fmt.Errorf("events: read the deliveries of %s: %w", id, err)
		}
		if len(page) == 0 {
			break
		}
		ids := make(bson.A, len(page))
		for i, d := range page {
			ids[i] = d.ID
		}
		// Still waiting: one delivered since the read stays, as history, until retention.
		res, err := s.db.Collection(colDeliveries).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, stillWaiting})
		if err != nil {
			return gone, fmt.Errorf("events: drop the deliveries of %s: %w", id, err)
		}
		gone += int(res.DeletedCount)
		if len(page) < deletePage {
			break
		}
	}
	if _, err := col.DeleteOne(ctx, filter); err != nil {
		return gone, fmt.Errorf("events: delete subscription %s: %w", id, err)
	}
	return gone, nil
}

// SubscriptionsAfter lists every company's subscriptions after id after, in id order, a page
// of at most subscriptionPage: the key rotation's pass over all of them.
func (s *Store) SubscriptionsAfter(ctx context.Context, after string) ([]events.Subscription, error) {
	return s.findSubscriptions(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}})
}

// SaveSealed writes sub's sealed values (its secrets, its seed and a pending secret) over
// the version it was read at, and moves the version: a maker's change read before it must
// not write the values sealed under the old key back (it gets a conflict and reads again).
// False if the subscription changed since it was read (the next pass reseals what it holds
// then).
func (s *Store) SaveSealed(ctx context.Context, sub events.Subscription) (bool, error) {
	d := toSubscriptionDoc(sub)
	set := bson.D{{Key: "secrets", Value: d.Secrets}, {Key: "seed", Value: d.Seed}, {Key: "version", Value: sub.Version + 1}}
	if d.Pending != nil && d.Pending.Secret != nil {
		set = append(set, bson.E{Key: "pending.secret", Value: d.Pending.Secret})
	}
	res, err := s.db.Collection(colSubscriptions).UpdateOne(ctx, bson.D{{Key: "_id", Value: sub.ID}, {Key: "version", Value: sub.Version}},
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return false, fmt.Errorf("events: reseal subscription %s: %w", sub.ID, err)
	}
	return res.MatchedCount == 1, nil
}

// deletePage bounds the deliveries one write of DeleteSubscription removes.
const deletePage = 1000

// idDoc is a document read for its id alone.
type idDoc struct {
	ID string `bson:"_id"`
}

// Subscription returns company's subscription id; another company's is not found.
func (s *Store) Subscription(ctx context.Context, company, id string) (events.Subscription, error) {
	var d subscriptionDoc
	err := s.db.Collection(colSubscriptions).FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: company}, notDeleting}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return events.Subscription{}, apperr.ErrNotFound
	}
	if err != nil {
		return events.Subscription{}, fmt.Errorf("events: read subscription: %w", err)
	}
	return d.subscription(), nil
}

// dispatcherFields are kept by the dispatcher without moving the version: a maker's save
// leaves them alone unless it names them (approving a creation sets the cursor, enabling a
// suspended subscription clears its failure run; the positions retention took before the
// dispatcher got them, missed, only the dispatcher writes).
var dispatcherFields = []string{"cursor", "failingSince", "missed"}

// SaveSubscription writes sub over the version it was read at (sub.Version) and returns it
// with its new version; apperr.ErrConflict if another change came first. The dispatcher's
// fields are written only when named in also.
func (s *Store) SaveSubscription(ctx context.Context, sub events.Subscription, also ...string) (events.Subscription, error) {
	read := sub.Version
	sub.Version++
	// $set of the subscription's own fields, not a replace: what the dispatcher keeps on the
	// document beside them (a staged suspension event) survives a maker's change.
	raw, err := bson.Marshal(toSubscriptionDoc(sub))
	if err != nil {
		return events.Subscription{}, fmt.Errorf("events: save subscription: %w", err)
	}
	var fields bson.D
	if err := bson.Unmarshal(raw, &fields); err != nil {
		return events.Subscription{}, fmt.Errorf("events: save subscription: %w", err)
	}
	set := make(bson.D, 0, len(fields))
	var unset bson.D
	skip := func(key string) bool {
		return key == "_id" || (slices.Contains(dispatcherFields, key) && !slices.Contains(also, key))
	}
	for _, f := range fields {
		if !skip(f.Key) {
			set = append(set, f)
		}
	}
	for _, optional := range []string{"suspendedReason", "suspendedAt", "pending", "failingSince"} {
		if !skip(optional) && !slices.ContainsFunc(set, func(e bson.E) bool { return e.Key == optional }) {
			unset = append(unset, bson.E{Key: optional, Value: ""})
		}
	}
	update := bson.D{{Key: "$set", Value: set}}
	if len(unset) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unset})
	}
	res, err := s.db.Collection(colSubscriptions).UpdateOne(ctx, bson.D{{Key: "_id", Value: sub.ID}, {Key: "companyId", Value: sub.CompanyID}, {Key: "version", Value: read}},
		update)
	if err != nil {
		return events.Subscription{}, fmt.Errorf("events: save subscription: %w", err)
	}
	if res.MatchedCount == 0 {
		return events.Subscription{}, apperr.ErrConflict
	}
	return sub, nil
}

// Subscriptions lists company's subscriptions (at most events.MaxKept), oldest first.
func (s *Store) Subscriptions(ctx context.Context, company string) ([]events.Subscription, error) {
	return s.findSubscriptions(ctx, bson.D{{Key: "companyId", Value: company}, notDeleting})
}

// DeliveringSubscriptions lists every subscription the dispatcher delivers to, read in
// pages of subscriptionPage by id, so none is left out however many there are.
func (s *Store) DeliveringSubscriptions(ctx context.Context) ([]events.Subscription, error) {
	var out []events.Subscription
	after := ""
	for {
		page, err := s.findSubscriptions(ctx, bson.D{{Key: "status", Value: events.StatusActive}, {Key: "enabled", Value: true}, notDeleting,
			{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < subscriptionPage {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}

// subscriptionPage bounds one read of subscriptions (a company has at most events.MaxKept).
const subscriptionPage = 1000

func (s *Store) findSubscriptions(ctx context.Context, filter bson.D) ([]events.Subscription, error) {
	cur, err := s.db.Collection(colSubscriptions).Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(subscriptionPage))
	if err != nil {
		return nil, fmt.Errorf("events: list subscriptions: %w", err)
	}
	var docs []subscriptionDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("events: list subscriptions: %w", err)
	}
	out := make([]events.Subscription, len(docs))
	for i, d := range docs {
		out[i] = d.subscription()
	}
	return out, nil
}

// AdvanceCursor moves subscription id's cursor from `from` to `to` (the dispatcher made the
// deliveries in between); false when another pass moved it first.
func (s *Store) AdvanceCursor(ctx context.Context, id string, from, to int64) (bool, error) {
	res, err := s.db.Collection(colSubscriptions).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "cursor", Value: from}, notDeleting},
		bson.D{{Key: "$set", Value: bson.D{{Key: "cursor", Value: to}}}})
	if err != nil {
		return false, fmt.Errorf("events: advance cursor of %s: %w", id, err)
	}
	return res.MatchedCount == 1, nil
}

// fieldDeleting marks a subscription whose deletion has begun: the company no longer sees
// it, the dispatcher no longer delivers to it, and a sweep finishes a deletion cut short.
const fieldDeleting = "deleting"

var notDeleting = bson.E{Key: fieldDeleting, Value: bson.D{{Key: "$exists", Value: false}}}

// FinishDeletions finishes the deletions of subscriptions that were cut short (at most 100
// per call) and returns how many it finished.
func (s *Store) FinishDeletions(ctx context.Context) (int, error) {
	left, err := mongodb.FindPage[struct {
		ID        string `bson:"_id"`
		CompanyID string `bson:"companyId"`
	}](ctx, s.db.Collection(colSubscriptions), mongodb.Query{Filter: bson.D{{Key: fieldDeleting, Value: true}},
		Projection: bson.D{{Key: "companyId", Value: 1}}, Limit: 100})
	if err != nil {
		return 0, fmt.Errorf("events: read unfinished deletions: %w", err)
	}
	done := 0
	for _, d := range left {
		if _, err := s.DeleteSubscription(ctx, d.CompanyID, d.ID); err != nil && !errors.Is(err, apperr.ErrNotFound) {
			return done, err
		}
		done++
	}
	return done, nil
}

// DropIfDeleting drops the waiting deliveries of logged to subscription id if the
// subscription is gone or being deleted (a fan-out that read it before its deletion made
// them after the deletion's sweep: nothing would ever send them).
func (s *Store) DropIfDeleting(ctx context.Context, id string, logged []Logged) error {
	n, err := s.db.Collection(colSubscriptions).CountDocuments(ctx, bson.D{{Key: "_id", Value: id}, notDeleting})
	if err != nil {
		return fmt.Errorf("events: read subscription %s: %w", id, err)
	}
	if n == 1 || len(logged) == 0 {
		return nil
	}
	ids := make(bson.A, len(logged))
	for i, l := range logged {
		ids[i] = events.DeliveryID(id, l.ID)
	}
	if _, err := s.db.Collection(colDeliveries).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "status", Value: events.DeliveryPending}}); err != nil {
		return fmt.Errorf("events: drop the deliveries of deleted subscription %s: %w", id, err)
	}
	return nil
}

// SkipPruned moves subscription id's cursor from from past the positions retention deleted
// (up to floor-1) and records them as missed, shown with the subscription; false if the
// cursor moved meanwhile.
func (s *Store) SkipPruned(ctx context.Context, id string, from, floor int64, now time.Time) (bool, error) {
	res, err := s.db.Collection(colSubscriptions).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "cursor", Value: from}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "cursor", Value: floor - 1}, {Key: "missed", Value: missedDoc{From: from + 1, To: floor - 1, At: now.UTC()}}}}})
	if err != nil {
		return false, fmt.Errorf("events: skip the pruned positions of %s: %w", id, err)
	}
	return res.MatchedCount == 1, nil
}

// Succeeded clears subscription id's run of failures.
func (s *Store) Succeeded(ctx context.Context, id string) error {
	_, err := s.db.Collection(colSubscriptions).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "failingSince", Value: bson.D{{Key: "$exists", Value: true}}}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "failingSince", Value: ""}}}})
	if err != nil {
		return fmt.Errorf("events: clear failures of %s: %w", id, err)
	}
	return nil
}

// Failed starts subscription id's run of failures at `at`, unless one runs already, and
// returns when the run began.
func (s *Store) Failed(ctx context.Context, id string, at time.Time) (time.Time, error) {
	var d subscriptionDoc
	err := s.db.Collection(colSubscriptions).FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}, {Key: "failingSince", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "failingSince", Value: at.UTC()}}}}, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if err == nil {
		return at.UTC(), nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return time.Time{}, fmt.Errorf("events: record failure of %s: %w", id, err)
	}
	if err := s.db.Collection(colSubscriptions).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return time.Time{}, fmt.Errorf("events: read failures of %s: %w", id, err)
	}
	return timeOf(d.FailingSince), nil
}

// Suspend suspends subscription id with reason, if it is active; false if it was not. The
// same update counts the subscription's webhook_subscription.suspended event (eventSeq) and
// stages it on the subscription; it is then appended to the company's log, so that the
// company's other subscriptions receive it (RelayStaged repeats the append after a crash).
func (s *Store) Suspend(ctx context.Context, id, reason string, at time.Time) (bool, error) {
	at = at.UTC()
	col := s.db.Collection(colSubscriptions)
	for range 5 {
		var read struct {
			Doc    subscriptionDoc `bson:",inline"`
			Staged *stagedDoc      `bson:"staged"`
		}
		err := col.FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "status", Value: events.StatusActive}}).Decode(&read)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("events: suspend %s: %w", id, err)
		}
		d := read.Doc
		if read.Staged != nil {
			// An earlier suspension's event is not in the log yet (suspended, enabled again
			// and suspended anew within a relay pass): append it first, never overwrite it.
			if err := s.relayStaged(ctx, id, *read.Staged); err != nil {
				return false, fmt.Errorf("events: suspend %s: %w", id, err)
			}
			continue
		}
		e, err := suspendedEvent(d.ID, d.CompanyID, d.URL, reason, d.EventSeq+1, at)
		if err != nil {
			return false, err
		}
		event, err := bson.Marshal(e.Document())
		if err != nil {
			return false, fmt.Errorf("events: suspend %s: %w", id, err)
		}
		staged := stagedDoc{ID: e.ID, At: at, Event: event}
		res, err := col.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "status", Value: events.StatusActive}, {Key: "version", Value: d.Version},
			{Key: "staged", Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: events.StatusSuspended}, {Key: "suspendedReason", Value: reason},
				{Key: "suspendedAt", Value: at}, {Key: "updatedAt", Value: at}, {Key: "updatedBy", Value: "dispatcher"}, {Key: "staged", Value: staged}}},
				{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}, {Key: "eventSeq", Value: 1}}}})
		if err != nil {
			return false, fmt.Errorf("events: suspend %s: %w", id, err)
		}
		if res.MatchedCount == 0 {
			continue // changed meanwhile: read it again
		}
		if err := s.relayStaged(ctx, id, staged); err != nil {
			return true, fmt.Errorf("events: suspended %s, its event waits for the next pass: %w", id, err)
		}
		return true, nil
	}
	return false, fmt.Errorf("events: suspend %s: %w", id, apperr.ErrConflict)
}
