// Package outbox records a service's events in the same single-document update as the state
// change they describe, and relays them, oldest first, to where the events are kept.
//
// An entity's document carries three fields besides its own: eventSeq (the entity's event
// sequence: +1 per event of that entity), outbox (the events not yet relayed, in order) and
// hasPending (set while the outbox holds anything; left out otherwise, so a sparse index
// holds only the documents the relay must visit). Stage adds the event to the update that
// makes the change, so both land or neither does; Relay pushes the outbox to a Sink, which
// keeps events idempotently by id, and only then removes them from the document. A crash
// anywhere repeats a step harmlessly, and nothing is lost (docs/decisions.md, "Events").
package outbox

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/mongodb"
)

// Document fields the package owns in an entity's document.
const (
	FieldSeq     = "eventSeq"
	FieldOutbox  = "outbox"
	FieldPending = "hasPending"
)

// SchemaVersion is the envelope's schema version.
const SchemaVersion = 1

// MaxDataBytes bounds an event's data: receivers fetch anything larger from the API.
const MaxDataBytes = 20 << 10

// Entity is what an event is about.
type Entity struct {
	Type string `bson:"type" json:"type"`
	ID   string `bson:"id" json:"id"`
	// Version is the entity's event sequence: +1 per event of that entity, so a receiver that
	// sees a gap knows it missed one.
	Version int64 `bson:"version" json:"version"`
}

// Event is one state change of one entity, as every consumer sees it.
type Event struct {
	// ID is the dedupe key, stable across relays, retries and resends.
	ID string `bson:"id" json:"id"`
	// Type is lowercase and dotted: service_request.completed, withdrawal.accepted, ...
	Type string `bson:"type" json:"type"`
	// Timestamp is when the change happened.
	Timestamp time.Time `bson:"timestamp" json:"timestamp"`
	CompanyID string    `bson:"companyId" json:"companyId"`
	Entity    Entity    `bson:"entity" json:"entity"`
	// Data is the entity's public fields after the change, as JSON.
	Data json.RawMessage `bson:"data" json:"data"`
	// RequestID is the request-identifier of the API call that caused the change; empty for
	// sweeps and timers.
	RequestID     string `bson:"request,omitempty" json:"request,omitempty"`
	SchemaVersion int    `bson:"schemaVersion" json:"schemaVersion"`
}

// Draft is an event before Stage numbers it.
type Draft struct {
	Type      string
	CompanyID string
	// EntityType and EntityID name the entity whose document the update changes.
	EntityType, EntityID string
	// Data is marshalled to JSON: the entity's public fields (never a secret).
	Data      any
	RequestID string
}

var typePattern = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`)

// Stage turns drafts into the events of one update of an entity whose document holds event
// sequence seq (zero for a new document), and returns the update operators that record them:
// $set of eventSeq and hasPending, and $push of the events onto the outbox. The caller adds
// them to its own conditional update of the document (filter on its version), so the change
// and its events land together or not at all.
func Stage(seq int64, now time.Time, drafts ...Draft) (set bson.D, push bson.D, events []Event, err error) {
	if len(drafts) == 0 {
		return nil, nil, nil, nil
	}
	events = make([]Event, 0, len(drafts))
	for i, d := range drafts {
		if !typePattern.MatchString(d.Type) {
			return nil, nil, nil, fmt.Errorf("outbox: event type %q: want lowercase dotted words", d.Type)
		}
		if d.CompanyID == "" || d.EntityType == "" || d.EntityID == "" {
			return nil, nil, nil, fmt.Errorf("outbox: event %s needs a company and an entity", d.Type)
		}
		data, err := json.Marshal(d.Data)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("outbox: event %s data: %w", d.Type, err)
		}
		if len(data) > MaxDataBytes {
			return nil, nil, nil, fmt.Errorf("outbox: event %s data is %d bytes, over %d", d.Type, len(data), MaxDataBytes)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("outbox: event id: %w", err)
		}
		events = append(events, Event{ID: "evt_" + id.String(), Type: d.Type, Timestamp: now.UTC().Truncate(time.Millisecond),
			CompanyID: d.CompanyID, Entity: Entity{Type: d.EntityType, ID: d.EntityID, Version: seq + int64(i) + 1},
			Data: data, RequestID: d.RequestID, SchemaVersion: SchemaVersion})
	}
	docs := make(bson.A, len(events))
	for i, e := range events {
		docs[i] = e.document()
	}
	set = bson.D{{Key: FieldSeq, Value: seq + int64(len(events))}, {Key: FieldPending, Value: true}}
	push = bson.D{{Key: FieldOutbox, Value: bson.D{{Key: "$each", Value: docs}}}}
	return set, push, events, nil
}

// document is e as the outbox stores it: data as its JSON text, so it is relayed byte for
// byte as it was staged.
func (e Event) document() bson.D {
	d := bson.D{{Key: "id", Value: e.ID}, {Key: "type", Value: e.Type}, {Key: "timestamp", Value: e.Timestamp},
		{Key: "companyId", Value: e.CompanyID},
		{Key: "entity", Value: bson.D{{Key: "type", Value: e.Entity.Type}, {Key: "id", Value: e.Entity.ID}, {Key: "version", Value: e.Entity.Version}}},
		{Key: "data", Value: string(e.Data)}}
	if e.RequestID != "" {
		d = append(d, bson.E{Key: "request", Value: e.RequestID})
	}
	return append(d, bson.E{Key: "schemaVersion", Value: e.SchemaVersion})
}

// stored is an event as the outbox holds it.
type stored struct {
	ID            string    `bson:"id"`
	Type          string    `bson:"type"`
	Timestamp     time.Time `bson:"timestamp"`
	CompanyID     string    `bson:"companyId"`
	Entity        Entity    `bson:"entity"`
	Data          string    `bson:"data"`
	RequestID     string    `bson:"request,omitempty"`
	SchemaVersion int       `bson:"schemaVersion"`
}

func (s stored) event() Event {
	return Event{ID: s.ID, Type: s.Type, Timestamp: s.Timestamp.UTC(), CompanyID: s.CompanyID, Entity: s.Entity,
		Data: json.RawMessage(s.Data), RequestID: s.RequestID, SchemaVersion: s.SchemaVersion}
}

// Index is the sparse index the relay's query needs on a collection with an outbox: only
// the documents with pending events are in it.
func Index(collection string) mongodb.Index {
	return mongodb.Index{Collection: collection, Name: "outbox_pending", Keys: mongodb.Keys(FieldPending, "_id"), Sparse: true}
}
