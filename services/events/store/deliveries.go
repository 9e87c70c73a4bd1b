package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/mongodb"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events"
)

const (
	colDeliveries = "deliveries"
	colAttempts   = "attempts"
	// MaxAttemptsPage bounds ListAttempts' page.
	MaxAttemptsPage = 500
	// maxEntityResend bounds the events of one entity a resend takes from the log.
	maxEntityResend = 1000
	// maxRecover bounds the deliveries one failedSince recovery queues; the answer says
	// whether more are left (a next call queues them).
	maxRecover = 500
)

// DeliveryIndexes are the indexes of the dispatcher's queries and of the attempt history.
func DeliveryIndexes() []mongodb.Index {
	return []mongodb.Index{
		// The delivery pass: due pending deliveries of the delivering subscriptions, in log order.
		{Collection: colDeliveries, Name: "status_sub_seq_next", Keys: mongodb.Keys("status", "subscriptionId", "seq", "nextAt")},
		// Order per entity: an earlier pending event of the same (subscription, entity); the
		// resend of one entity.
		{Collection: colDeliveries, Name: "sub_entity_status_version", Keys: mongodb.Keys("subscriptionId", "entity.type", "entity.id", "status", "entity.version")},
		// Recover: the subscription's deliveries whose last attempt failed since a time.
		{Collection: colDeliveries, Name: "sub_lastFailed", Keys: mongodb.Keys("subscriptionId", "lastFailedAt")},
		// Retention of finished deliveries.
		{Collection: colDeliveries, Name: "status_updated", Keys: mongodb.Keys("status", "updatedAt")},
		// The history, newest first (the _id orders attempts by time), filters by $in.
		{Collection: colAttempts, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		// Retention of attempts.
		{Collection: colAttempts, Name: "at", Keys: mongodb.Keys("at")},
		// Suspension events staged on a subscription, until they are in the inbox.
		{Collection: colSubscriptions, Name: "staged_at", Keys: mongodb.Keys("staged.at"), Sparse: true},
	}
}

type leaseDoc struct {
	Owner string    `bson:"owner"`
	Until time.Time `bson:"until"`
}

// deliveryDoc is a delivery as stored.
type deliveryDoc struct {
	ID             string         `bson:"_id"`
	SubscriptionID string         `bson:"subscriptionId"`
	CompanyID      string         `bson:"companyId"`
	EventID        string         `bson:"eventId"`
	EventType      string         `bson:"type"`
	Entity         pevents.Entity `bson:"entity"`
	Seq            int64          `bson:"seq"`
	Status         string         `bson:"status"`
	Attempts       int            `bson:"attempts"`
	Run            int            `bson:"run"`
	NextAt         time.Time      `bson:"nextAt"`
	Trigger        string         `bson:"trigger"`
	LastAt         *time.Time     `bson:"lastAt,omitempty"`
	LastOutcome    string         `bson:"lastOutcome,omitempty"`
	LastStatus     int            `bson:"lastStatus,omitempty"`
	LastFailedAt   *time.Time     `bson:"lastFailedAt,omitempty"`
	Lease          leaseDoc       `bson:"lease"`
	CreatedAt      time.Time      `bson:"createdAt"`
	UpdatedAt      time.Time      `bson:"updatedAt"`
}

func toDeliveryDoc(d events.Delivery) deliveryDoc {
	return deliveryDoc{ID: d.ID, SubscriptionID: d.SubscriptionID, CompanyID: d.CompanyID, EventID: d.EventID, EventType: d.EventType,
		Entity: d.Entity, Seq: d.Seq, Status: d.Status, Attempts: d.Attempts, Run: d.Run, NextAt: d.NextAt.UTC(), Trigger: d.Trigger,
		LastAt: timePtr(d.LastAt), LastOutcome: d.LastOutcome, LastStatus: d.LastStatus, LastFailedAt: timePtr(d.LastFailedAt),
		Lease: leaseDoc{Owner: d.LeaseOwner, Until: d.LeaseUntil.UTC()}, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
}

func (d deliveryDoc) delivery() events.Delivery {
	return events.Delivery{ID: d.ID, SubscriptionID: d.SubscriptionID, CompanyID: d.CompanyID, EventID: d.EventID, EventType: d.EventType,
		Entity: d.Entity, Seq: d.Seq, Status: d.Status, Attempts: d.Attempts, Run: d.Run, NextAt: d.NextAt.UTC(), Trigger: d.Trigger,
		LastAt: timeOf(d.LastAt), LastOutcome: d.LastOutcome, LastStatus: d.LastStatus, LastFailedAt: timeOf(d.LastFailedAt),
		LeaseOwner: d.Lease.Owner, LeaseUntil: d.Lease.Until.UTC(), CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
}

// attemptDoc is an attempt as stored.
type attemptDoc struct {
	ID             string         `bson:"_id"`
	CompanyID      string         `bson:"companyId"`
	SubscriptionID string         `bson:"subscriptionId"`
	DeliveryID     string         `bson:"deliveryId"`
	EventID        string         `bson:"eventId"`
	EventType      string         `bson:"type"`
	Entity         pevents.Entity `bson:"entity"`
	Number         int            `bson:"number"`
	Trigger        string         `bson:"trigger"`
	At             time.Time      `bson:"at"`
	DurationMs     int64          `bson:"durationMs"`
	Status         int            `bson:"status,omitempty"`
	Outcome        string         `bson:"outcome"`
	Response       string         `bson:"response,omitempty"`
	Detail         string         `bson:"detail,omitempty"`
	NextAt         *time.Time     `bson:"nextAt,omitempty"`
}

func (a attemptDoc) attempt() events.Attempt {
	return events.Attempt{ID: a.ID, CompanyID: a.CompanyID, SubscriptionID: a.SubscriptionID, DeliveryID: a.DeliveryID, EventID: a.EventID,
		EventType: a.EventType, Entity: a.Entity, Number: a.Number, Trigger: a.Trigger, At: a.At.UTC(),
		Duration: time.Duration(a.DurationMs) * time.Millisecond, Status: a.Status, Outcome: a.Outcome, Response: a.Response,
		Detail: a.Detail, NextAt: timeOf(a.NextAt)}
}

// attemptID orders attempts by time: the attempt's time in nanoseconds as fixed-width hex,
// then random bytes so that two attempts of one nanosecond differ.
func attemptID(at time.Time) string {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return fmt.Sprintf("att_%016x%s", uint64(at.UnixNano()), hex.EncodeToString(suffix))
}

// CreateDeliveries makes the pending deliveries of logged to sub, due at now, idempotently
// by id, and returns how many were new. Events of another company are never delivered to sub.
func (s *Store) CreateDeliveries(ctx context.Context, sub events.Subscription, logged []Logged, now time.Time) (int, error) {
	made := 0
	for _, l := range logged {
		if l.CompanyID != sub.CompanyID {
			return made, fmt.Errorf("events: event %s of %s offered to subscription %s of %s", l.ID, l.CompanyID, sub.ID, sub.CompanyID)
		}
		_, err := s.db.Collection(colDeliveries).InsertOne(ctx, toDeliveryDoc(events.NewDelivery(sub, l.Event, l.Seq, now.UTC())))
		switch {
		case mongo.IsDuplicateKeyError(err):
		case err != nil:
			return made, fmt.Errorf("events: make delivery of %s to %s: %w", l.ID, sub.ID, err)
		default:
			made++
		}
	}
	return made, nil
}

// Delivery returns delivery id (apperr.ErrNotFound if none).
func (s *Store) Delivery(ctx context.Context, id string) (events.Delivery, error) {
	var d deliveryDoc
	err := s.db.Collection(colDeliveries).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return events.Delivery{}, apperr.ErrNotFound
	}
	if err != nil {
		return events.Delivery{}, fmt.Errorf("events: read delivery %s: %w", id, err)
	}
	return d.delivery(), nil
}

// DueDeliveries returns up to limit pending deliveries of the subscriptions subs due at now,
// in log order.
func (s *Store) DueDeliveries(ctx context.Context, subs []string, now time.Time, limit int) ([]events.Delivery, error) {
	if len(subs) == 0 {
		return nil, nil
	}
	// A delivery under a live lease is being sent (by this process or another replica).
	filter := bson.D{{Key: "status", Value: events.DeliveryPending}, {Key: "subscriptionId", Value: bson.D{{Key: "$in", Value: subs}}},
		{Key: "nextAt", Value: bson.D{{Key: "$lte", Value: now.UTC()}}}, {Key: "lease.until", Value: bson.D{{Key: "$lte", Value: now.UTC()}}}}
	return s.findDeliveries(ctx, filter, options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}).SetLimit(int64(limit)))
}

func (s *Store) findDeliveries(ctx context.Context, filter bson.D, opts *options.FindOptionsBuilder) ([]events.Delivery, error) {
	cur, err := s.db.Collection(colDeliveries).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("events: read deliveries: %w", err)
	}
	var docs []deliveryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("events: read deliveries: %w", err)
	}
	out := make([]events.Delivery, len(docs))
	for i, d := range docs {
		out[i] = d.delivery()
	}
	return out, nil
}

// EarlierPending returns the earliest pending delivery of an earlier event of d's entity to
// d's subscription, if any: d waits for it (order per entity).
func (s *Store) EarlierPending(ctx context.Context, d events.Delivery) (events.Delivery, bool, error) {
	filter := bson.D{{Key: "subscriptionId", Value: d.SubscriptionID}, {Key: "entity.type", Value: d.Entity.Type}, {Key: "entity.id", Value: d.Entity.ID},
		{Key: "status", Value: events.DeliveryPending}, {Key: "entity.version", Value: bson.D{{Key: "$lt", Value: d.Entity.Version}}}}
	found, err := s.findDeliveries(ctx, filter, options.Find().SetSort(bson.D{{Key: "entity.version", Value: 1}}).SetLimit(1))
	if err != nil || len(found) == 0 {
		return events.Delivery{}, false, err
	}
	return found[0], true, nil
}

// Hold puts off pending delivery id until `until` (an earlier event of its entity is pending);
// the earlier one's end wakes it.
func (s *Store) Hold(ctx context.Context, id string, until time.Time) error {
	_, err := s.db.Collection(colDeliveries).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "status", Value: events.DeliveryPending}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "nextAt", Value: until.UTC()}}}})
	if err != nil {
		return fmt.Errorf("events: hold delivery %s: %w", id, err)
	}
	return nil
}

// Claim takes delivery id for owner until now+lease if it is pending, due and not leased by
// another; ok is false otherwise. The claimed delivery is returned as it is now.
func (s *Store) Claim(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (events.Delivery, bool, error) {
	now = now.UTC()
	var d deliveryDoc
	err := s.db.Collection(colDeliveries).FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "status", Value: events.DeliveryPending}, {Key: "nextAt", Value: bson.D{{Key: "$lte", Value: now}}},
			{Key: "lease.until", Value: bson.D{{Key: "$lte", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease", Value: leaseDoc{Owner: owner, Until: now.Add(lease)}}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return events.Delivery{}, false, nil
	}
	if err != nil {
		return events.Delivery{}, false, fmt.Errorf("events: claim delivery %s: %w", id, err)
	}
	return d.delivery(), true, nil
}

// RenewLease extends owner's lease of delivery id to until; false if owner lost it.
func (s *Store) RenewLease(ctx context.Context, id, owner string, until time.Time) (bool, error) {
	res, err := s.db.Collection(colDeliveries).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "lease.owner", Value: owner}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease.until", Value: until.UTC()}}}})
	if err != nil {
		return false, fmt.Errorf("events: renew lease of %s: %w", id, err)
	}
	return res.MatchedCount == 1, nil
}

// FinishAttempt records attempt a of delivery d (its new state: status, counts, next time,
// last outcome) made by owner, and releases owner's lease. The attempt is recorded even when
// owner lost the lease (it was sent); the delivery is then left to the lease's new owner.
// When d is no longer pending, the later events of its entity waiting for it are woken.
func (s *Store) FinishAttempt(ctx context.Context, owner string, d events.Delivery, a events.Attempt) (bool, error) {
	a.ID = attemptID(a.At)
	doc := attemptDoc{ID: a.ID, CompanyID: d.CompanyID, SubscriptionID: d.SubscriptionID, DeliveryID: d.ID, EventID: d.EventID,
		EventType: d.EventType, Entity: d.Entity, Number: a.Number, Trigger: a.Trigger, At: a.At.UTC(), DurationMs: a.Duration.Milliseconds(),
		Status: a.Status, Outcome: a.Outcome, Response: a.Response, Detail: a.Detail, NextAt: timePtr(a.NextAt)}
	if _, err := s.db.Collection(colAttempts).InsertOne(ctx, doc); err != nil {
		return false, fmt.Errorf("events: record attempt of %s: %w", d.ID, err)
	}
	set := bson.D{{Key: "status", Value: d.Status}, {Key: "attempts", Value: d.Attempts}, {Key: "run", Value: d.Run},
		{Key: "nextAt", Value: d.NextAt.UTC()}, {Key: "trigger", Value: d.Trigger}, {Key: "lastAt", Value: d.LastAt.UTC()},
		{Key: "lastOutcome", Value: d.LastOutcome}, {Key: "lastStatus", Value: d.LastStatus}, {Key: "updatedAt", Value: d.UpdatedAt.UTC()},
		{Key: "lease", Value: leaseDoc{}}}
	update := bson.D{{Key: "$set", Value: set}}
	if d.LastFailedAt.IsZero() {
		update = append(update, bson.E{Key: "$unset", Value: bson.D{{Key: "lastFailedAt", Value: ""}}})
	} else {
		set = append(set, bson.E{Key: "lastFailedAt", Value: d.LastFailedAt.UTC()})
		update[0].Value = set
	}
	res, err := s.db.Collection(colDeliveries).UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: "lease.owner", Value: owner}}, update)
	if err != nil {
		return false, fmt.Errorf("events: update delivery %s: %w", d.ID, err)
	}
	if res.MatchedCount == 0 {
		return false, nil
	}
	if d.Status != events.DeliveryPending {
		if err := s.wake(ctx, d, d.UpdatedAt); err != nil {
			return true, err
		}
	}
	return true, nil
}

// wake makes the pending later events of d's entity to d's subscription due at now.
func (s *Store) wake(ctx context.Context, d events.Delivery, now time.Time) error {
	_, err := s.db.Collection(colDeliveries).UpdateMany(ctx, bson.D{{Key: "subscriptionId", Value: d.SubscriptionID}, {Key: "entity.type", Value: d.Entity.Type},
		{Key: "entity.id", Value: d.Entity.ID}, {Key: "status", Value: events.DeliveryPending}, {Key: "entity.version", Value: bson.D{{Key: "$gt", Value: d.Entity.Version}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "nextAt", Value: now.UTC()}}}})
	if err != nil {
		return fmt.Errorf("events: wake the events after %s: %w", d.ID, err)
	}
	return nil
}

// LoggedEvent returns company's event id from the log (apperr.ErrNotFound if it is not, or
// no longer, kept).
func (s *Store) LoggedEvent(ctx context.Context, company, id string) (Logged, error) {
	var raw bson.Raw
	err := s.log.FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: company}}).Decode(&raw)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Logged{}, apperr.ErrNotFound
	}
	if err != nil {
		return Logged{}, fmt.Errorf("events: read event %s: %w", id, err)
	}
	e, err := pevents.Decode(raw)
	if err != nil {
		return Logged{}, err
	}
	return Logged{Event: e, Seq: raw.Lookup("seq").AsInt64()}, nil
}

// AttemptQuery selects a company's attempts, newest first.
type AttemptQuery struct {
	CompanyID                        string
	SubscriptionID, EventID, Outcome string
	// Since and Until bound the attempts' time (zero: no bound; Until is exclusive).
	Since, Until time.Time
	// After is the ID of the last attempt of the previous page.
	After string
	Limit int
}

// ListAttempts returns a page of q's attempts, newest first, and whether more follow.
func (s *Store) ListAttempts(ctx context.Context, q AttemptQuery) ([]events.Attempt, bool, error) {
	if q.CompanyID == "" {
		return nil, false, apperr.Invalid(apperr.CodeMissing, "companyId", "companyId is required")
	}
	if q.Limit <= 0 || q.Limit > MaxAttemptsPage {
		q.Limit = min(max(q.Limit, 100), MaxAttemptsPage)
	}
	and := bson.A{bson.D{{Key: "companyId", Value: q.CompanyID}}}
	and = mongodb.AppendIn(and, "subscriptionId", nonEmpty(q.SubscriptionID))
	and = mongodb.AppendIn(and, "eventId", nonEmpty(q.EventID))
	and = mongodb.AppendIn(and, "outcome", nonEmpty(q.Outcome))
	if q.After != "" {
		and = append(and, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: q.After}}}})
	}
	if !q.Since.IsZero() {
		and = append(and, bson.D{{Key: "at", Value: bson.D{{Key: "$gte", Value: q.Since.UTC()}}}})
	}
	if !q.Until.IsZero() {
		and = append(and, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: q.Until.UTC()}}}})
	}
	cur, err := s.db.Collection(colAttempts).Find(ctx, mongodb.And(and),
		options.Find().SetSort(bson.D{{Key: "companyId", Value: 1}, {Key: "_id", Value: -1}}).SetLimit(int64(q.Limit)+1))
	if err != nil {
		return nil, false, fmt.Errorf("events: list attempts: %w", err)
	}
	var docs []attemptDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, false, fmt.Errorf("events: list attempts: %w", err)
	}
	more := len(docs) > q.Limit
	if more {
		docs = docs[:q.Limit]
	}
	out := make([]events.Attempt, len(docs))
	for i, d := range docs {
		out[i] = d.attempt()
	}
	return out, more, nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// Resend selects the deliveries of a subscription to send again: one event (EventID), the
// events of one entity (EntityType and EntityID), or everything whose last attempt failed
// since FailedSince. Exactly one of them is set.
type Resend struct {
	EventID              string
	EntityType, EntityID string
	FailedSince          time.Time
}

// Resend puts sel's deliveries of company's subscription back to pending, due at now, with
// a fresh schedule: MANUAL for an event or an entity, RECOVER for FailedSince. An event (or
// an entity's event) of the log never delivered to the subscription gets its delivery. The
// order per entity still holds: a resent event waits for the earlier pending ones. Only
// events of types the subscription takes are sent, a delivery being sent is left to its
// sender, and a recovery queues at most maxRecover (Resent.More: call again for the rest).
func (s *Store) Resend(ctx context.Context, company, subscriptionID string, sel Resend, now time.Time) (Resent, error) {
	now = now.UTC()
	sub, err := s.Subscription(ctx, company, subscriptionID)
	if err != nil {
		return Resent{}, err
	}
	if sub.Status == events.StatusPendingApproval || sub.Status == events.StatusRejected {
		// Nothing goes to an endpoint before a checker approved it.
		return Resent{}, apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s is %s: nothing is sent to it", sub.ID, sub.Status)
	}
	set := func(trigger string) bson.D {
		return bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: events.DeliveryPending}, {Key: "nextAt", Value: now}, {Key: "trigger", Value: trigger},
			{Key: "run", Value: 0}, {Key: "updatedAt", Value: now}}}}
	}
	// A delivery being sent (its lease running) is left to its sender; one of a type the
	// subscription does not take (any more) is not sent.
	notLeased := bson.E{Key: "lease.until", Value: bson.D{{Key: "$lte", Value: now}}}
	wanted := func(logged []Logged) []Logged {
		return slices.DeleteFunc(logged, func(l Logged) bool { return !sub.Wants(l.Type) })
	}
	col := s.db.Collection(colDeliveries)
	switch {
	case sel.EventID != "" && sel.EntityType == "" && sel.EntityID == "" && sel.FailedSince.IsZero():
		l, err := s.LoggedEvent(ctx, company, sel.EventID)
		if err != nil && !errors.Is(err, apperr.ErrNotFound) {
			return Resent{}, err
		}
		if err == nil && !sub.Wants(l.Type) {
			return Resent{}, apperr.Precondition(apperr.CodeConflict, "eventId", "subscription %s does not take %s events", sub.ID, l.Type)
		}
		if err == nil {
			if _, err := s.CreateDeliveries(ctx, sub, []Logged{l}, now); err != nil {
				return Resent{}, err
			}
		}
		res, err := col.UpdateOne(ctx, bson.D{{Key: "_id", Value: events.DeliveryID(sub.ID, sel.EventID)}, notLeased}, set(events.TriggerManual))
		if err != nil {
			return Resent{}, fmt.Errorf("events: resend %s: %w", sel.EventID, err)
		}
		if res.MatchedCount == 0 {
			if _, err := s.Delivery(ctx, events.DeliveryID(sub.ID, sel.EventID)); err == nil {
				return Resent{}, nil // being sent right now
			}
			return Resent{}, apperr.ErrNotFound
		}
		return Resent{Scheduled: 1}, nil
	case sel.EventID == "" && sel.EntityType != "" && sel.EntityID != "" && sel.FailedSince.IsZero():
		head, err := s.Head(ctx, company)
		if err != nil {
			return Resent{}, err
		}
		logged, _, err := s.Read(ctx, Query{CompanyID: company, EntityType: sel.EntityType, EntityID: sel.EntityID, After: 0, Below: head.Next, Limit: maxEntityResend})
		if err != nil {
			return Resent{}, err
		}
		logged = wanted(logged)
		if _, err := s.CreateDeliveries(ctx, sub, logged, now); err != nil {
			return Resent{}, err
		}
		ids := make(bson.A, len(logged))
		for i, l := range logged {
			ids[i] = events.DeliveryID(sub.ID, l.ID)
		}
		res, err := col.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, notLeased}, set(events.TriggerManual))
		if err != nil {
			return Resent{}, fmt.Errorf("events: resend %s %s: %w", sel.EntityType, sel.EntityID, err)
		}
		return Resent{Scheduled: int(res.MatchedCount)}, nil
	case sel.EventID == "" && sel.EntityType == "" && sel.EntityID == "" && !sel.FailedSince.IsZero():
		return s.recover(ctx, sub, sel.FailedSince.UTC(), now, set(events.TriggerRecover), notLeased)
	}
	return Resent{}, apperr.Invalid(apperr.CodeMissing, "resend", "name one event, one entity (type and id) or a time failed since")
}

// Resent is what a resend queued: how many deliveries, and whether a recovery left more
// for a next call.
type Resent struct {
	Scheduled int
	More      bool
}

// recover queues up to maxRecover of sub's deliveries whose last attempt failed since
// since and that are still undelivered, oldest first, skipping those a recovery queued
// already and those being sent; More says whether others are left.
func (s *Store) recover(ctx context.Context, sub events.Subscription, since, now time.Time, set bson.D, notLeased bson.E) (Resent, error) {
	col := s.db.Collection(colDeliveries)
	// Failed for good, or still retrying on its schedule; not delivered since, and not
	// queued by a recovery already (so a next call moves on to the rest).
	filter := bson.D{{Key: "subscriptionId", Value: sub.ID}, {Key: "lastFailedAt", Value: bson.D{{Key: "$gte", Value: since}}},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "status", Value: events.DeliveryFailed}},
			bson.D{{Key: "status", Value: events.DeliveryPending}, {Key: "trigger", Value: bson.D{{Key: "$ne", Value: events.TriggerRecover}}}},
		}}, notLeased}
	cur, err := col.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}).SetLimit(maxRecover+1).
		SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "type", Value: 1}}))
	if err != nil {
		return Resent{}, fmt.Errorf("events: recover %s: %w", sub.ID, err)
	}
	var found []struct {
		ID   string `bson:"_id"`
		Type string `bson:"type"`
	}
	if err := cur.All(ctx, &found); err != nil {
		return Resent{}, fmt.Errorf("events: recover %s: %w", sub.ID, err)
	}
	more := len(found) > maxRecover
	ids := bson.A{}
	for _, f := range found[:min(len(found), maxRecover)] {
		if sub.Wants(f.Type) {
			ids = append(ids, f.ID)
		}
	}
	if len(ids) == 0 {
		return Resent{More: more}, nil
	}
	res, err := col.UpdateMany(ctx, append(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, filter...), set)
	if err != nil {
		return Resent{}, fmt.Errorf("events: recover %s: %w", sub.ID, err)
	}
	return Resent{Scheduled: int(res.MatchedCount), More: more}, nil
}

// PruneDeliveries deletes the attempts made before cutoff and the deliveries delivered or
// failed for good before it, and returns how many documents went.
func (s *Store) PruneDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	cutoff = cutoff.UTC()
	res, err := s.db.Collection(colAttempts).DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: cutoff}}}})
	if err != nil {
		return 0, fmt.Errorf("events: prune attempts: %w", err)
	}
	n := res.DeletedCount
	for _, status := range []string{events.DeliveryDelivered, events.DeliveryFailed} {
		res, err := s.db.Collection(colDeliveries).DeleteMany(ctx, bson.D{{Key: "status", Value: status}, {Key: "updatedAt", Value: bson.D{{Key: "$lt", Value: cutoff}}}})
		if err != nil {
			return n, fmt.Errorf("events: prune deliveries: %w", err)
		}
		n += res.DeletedCount
	}
	return n, nil
}

// stagedDoc is the suspension event a subscription holds until it is in the inbox.
type stagedDoc struct {
	ID    string    `bson:"id"`
	At    time.Time `bson:"at"`
	Event bson.Raw  `bson:"event"`
}

// suspendedEvent is the webhook_subscription.suspended event of sub (as suspended, its
// EventSeq already counting the event). It names the subscription, not its URL: the event
// goes to the company's other endpoints, and a URL may carry a token of its own.
func suspendedEvent(id, company, _, reason string, eventSeq int64, at time.Time) (pevents.Event, error) {
	data, err := eventsv1.MarshalData(events.SuspendedEventType,
		&eventsv1.SubscriptionSuspendedEventData{SubscriptionId: id, Reason: reason, SuspendedAt: apitime.Format(at)})
	if err != nil {
		return pevents.Event{}, err
	}
	return pevents.Event{ID: "evt_" + uuid.Must(uuid.NewV7()).String(), Type: events.SuspendedEventType, Timestamp: at.UTC().Truncate(time.Millisecond),
		CompanyID: company, Entity: pevents.Entity{Type: events.SubscriptionEntity, ID: id, Version: eventSeq}, Data: data,
		SchemaVersion: pevents.SchemaVersion}, nil
}

// RelayStaged appends the suspension events staged on subscriptions to the inbox (a pass
// repeats what a crash between the suspension and the append left), and returns how many.
func (s *Store) RelayStaged(ctx context.Context) (int, error) {
	cur, err := s.db.Collection(colSubscriptions).Find(ctx, bson.D{{Key: "staged.at", Value: bson.D{{Key: "$gt", Value: time.Time{}}}}},
		options.Find().SetProjection(bson.D{{Key: "staged", Value: 1}}).SetLimit(100))
	if err != nil {
		return 0, fmt.Errorf("events: read staged events: %w", err)
	}
	var docs []struct {
		ID     string    `bson:"_id"`
		Staged stagedDoc `bson:"staged"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fmt.Errorf("events: read staged events: %w", err)
	}
	n := 0
	for _, d := range docs {
		if err := s.relayStaged(ctx, d.ID, d.Staged); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// relayStaged appends one staged event and then clears it from subscription id.
func (s *Store) relayStaged(ctx context.Context, id string, st stagedDoc) error {
	e, err := pevents.Decode(st.Event)
	if err != nil {
		return err
	}
	if _, err := s.Append(ctx, []pevents.Event{e}); err != nil {
		return err
	}
	_, err = s.db.Collection(colSubscriptions).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "staged.id", Value: st.ID}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "staged", Value: ""}}}})
	if err != nil {
		return fmt.Errorf("events: clear staged event of %s: %w", id, err)
	}
	return nil
}
