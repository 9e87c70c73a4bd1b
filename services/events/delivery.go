package events

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/zcustody/suite/platform/apitime"
	pevents "github.com/zcustody/suite/platform/events"
)

// Statuses of a delivery.
const (
	// DeliveryPending: to be sent, at NextAt (held while an earlier event of its entity is
	// pending for the same subscription).
	DeliveryPending = "PENDING"
	// DeliveryDelivered: a 2xx came back.
	DeliveryDelivered = "DELIVERED"
	// DeliveryFailed: every attempt of the schedule failed; resendable while kept.
	DeliveryFailed = "FAILED"
)

// Triggers of an attempt.
const (
	TriggerScheduled = "SCHEDULED" // the dispatcher's first attempt or a retry
	TriggerManual    = "MANUAL"    // a resend of one event or of one entity's events
	TriggerRecover   = "RECOVER"   // a recovery of everything that failed since a time
)

// SuspendedEventType is the event the company's log gets when the dispatcher suspends one of
// its subscriptions; its entity is the subscription.
const (
	SuspendedEventType = "webhook_subscription.suspended"
	SubscriptionEntity = "webhook_subscription"
)

// Delivery is one event on its way to one subscription: _id subscription id + ":" + event id,
// so that making it twice makes it once.
type Delivery struct {
	ID             string
	SubscriptionID string
	CompanyID      string
	EventID        string
	EventType      string
	Entity         pevents.Entity
	// Seq is the event's position in the company's log.
	Seq    int64
	Status string
	// Attempts is every attempt made; Run those of the current schedule (a resend restarts it).
	Attempts, Run int
	// NextAt is when the next attempt is due (PENDING only); Trigger what it will be.
	NextAt  time.Time
	Trigger string
	// The last attempt: when, its outcome and HTTP status; LastFailedAt is set while the last
	// attempt failed.
	LastAt       time.Time
	LastOutcome  string
	LastStatus   int
	LastFailedAt time.Time
	// LeaseOwner holds the delivery until LeaseUntil while it sends it.
	LeaseOwner string
	LeaseUntil time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// DeliveryID is the id of the delivery of event to subscription.
func DeliveryID(subscriptionID, eventID string) string { return subscriptionID + ":" + eventID }

// NewDelivery is the pending delivery of e to sub, due at now.
func NewDelivery(sub Subscription, e pevents.Event, seq int64, now time.Time) Delivery {
	return Delivery{ID: DeliveryID(sub.ID, e.ID), SubscriptionID: sub.ID, CompanyID: e.CompanyID, EventID: e.ID, EventType: e.Type,
		Entity: e.Entity, Seq: seq, Status: DeliveryPending, NextAt: now, Trigger: TriggerScheduled, CreatedAt: now, UpdatedAt: now}
}

// Attempt is the record of one delivery attempt, kept for the history API.
type Attempt struct {
	// ID orders attempts by time (newest last); it is the history's paging cursor.
	ID             string
	CompanyID      string
	SubscriptionID string
	DeliveryID     string
	EventID        string
	EventType      string
	Entity         pevents.Entity
	// Number counts the delivery's attempts from 1.
	Number   int
	Trigger  string
	At       time.Time
	Duration time.Duration
	// Status is the HTTP status (0 without an answer); Outcome DELIVERED, HTTP_ERROR,
	// TIMED_OUT or NO_RESPONSE (webhook.Outcome*).
	Status   int
	Outcome  string
	Response string
	Detail   string
	// NextAt is when the delivery is tried again (zero: delivered or failed for good).
	NextAt time.Time
}

// Envelope is the body of a delivery of e: the event as the REST API shows it, with data the
// staged JSON object byte for byte. It depends on e alone, so every attempt sends the same
// bytes.
func Envelope(e pevents.Event) []byte {
	var b bytes.Buffer
	str := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	b.WriteString(`{"id":`)
	str(e.ID)
	b.WriteString(`,"type":`)
	str(e.Type)
	b.WriteString(`,"timestamp":`)
	str(apitime.Format(e.Timestamp))
	b.WriteString(`,"companyId":`)
	str(e.CompanyID)
	b.WriteString(`,"entity":{"type":`)
	str(e.Entity.Type)
	b.WriteString(`,"id":`)
	str(e.Entity.ID)
	b.WriteString(`,"version":`)
	b.WriteString(strconv.FormatInt(e.Entity.Version, 10))
	b.WriteString(`},"data":`)
	if len(bytes.TrimSpace(e.Data)) == 0 {
		b.WriteString("{}")
	} else {
		b.Write(e.Data)
	}
	if e.RequestID != "" {
		b.WriteString(`,"request":`)
		str(e.RequestID)
	}
	b.WriteString(`,"schemaVersion":`)
	b.WriteString(strconv.Itoa(e.SchemaVersion))
	b.WriteString("}")
	return b.Bytes()
}
