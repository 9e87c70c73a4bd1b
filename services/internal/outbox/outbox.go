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
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/mongodb"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/wake"
)

// Document fields the package owns in an entity's document.
const (
	FieldSeq     = "eventSeq"
	FieldOutbox  = "outbox"
	FieldPending = "hasPending"
)

// MaxDataBytes bounds an event's data: receivers fetch anything larger from the API.
const MaxDataBytes = 20 << 10

// Draft is an event before Stage numbers it.
type Draft struct {
	Type      string
	CompanyID string
	// EntityType and EntityID name the entity whose document the update changes.
	EntityType, EntityID string
	// Data is the entity's public fields (never a secret): the message events/v1/data.proto
	// declares for Type, staged as its JSON (eventsv1.MarshalData).
	Data      proto.Message
	RequestID string
}

var typePattern = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)+$`)

// Stage turns drafts into the events of one update of an entity whose document holds event
// sequence seq (zero for a new document), and returns the update operators that record them:
// $set of eventSeq and hasPending, and $push of the events onto the outbox. The caller adds
// them to its own conditional update of the document (filter on its version), so the change
// and its events land together or not at all.
func Stage(seq int64, now time.Time, drafts ...Draft) (set bson.D, push bson.D, staged []events.Event, err error) {
	if len(drafts) == 0 {
		return nil, nil, nil, nil
	}
	staged = make([]events.Event, 0, len(drafts))
	for i, d := range drafts {
		if !typePattern.MatchString(d.Type) {
			return nil, nil, nil, fmt.Errorf("outbox: event type %q: want lowercase dotted words", d.Type)
		}
		if d.CompanyID == "" || d.EntityType == "" || d.EntityID == "" {
			return nil, nil, nil, fmt.Errorf("outbox: event %s needs a company and an entity", d.Type)
		}
		data, err := eventsv1.MarshalData(d.Type, d.Data)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("outbox: %w", err)
		}
		if len(data) > MaxDataBytes {
			return nil, nil, nil, fmt.Errorf("outbox: event %s data is %d bytes, over %d", d.Type, len(data), MaxDataBytes)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("outbox: event id: %w", err)
		}
		staged = append(staged, events.Event{ID: "evt_" + id.String(), Type: d.Type, Timestamp: now.UTC().Truncate(time.Millisecond),
			CompanyID: d.CompanyID, Entity: events.Entity{Type: d.EntityType, ID: d.EntityID, Version: seq + int64(i) + 1},
			Data: data, RequestID: d.RequestID, SchemaVersion: events.SchemaVersion})
	}
	docs := make(bson.A, len(staged))
	for i, e := range staged {
		docs[i] = e.Document()
	}
	set = bson.D{{Key: FieldSeq, Value: seq + int64(len(staged))}, {Key: FieldPending, Value: true}}
	push = bson.D{{Key: FieldOutbox, Value: bson.D{{Key: "$each", Value: docs}}}}
	staging.Notify()
	return set, push, staged, nil
}

// staging is notified whenever events are staged in this process: the relays poll slowly
// while nothing is staged and come back to their interval when something is (the write
// that records the events lands just after; a pass a moment later finds them).
var staging = wake.New()

// Staged returns a channel that is closed the next time events are staged in this process.
func Staged() <-chan struct{} { return staging.C() }

// StageEach stages drafts that are each the next event (seq+1) of its own entity: one
// change seen by several audiences (a settlement's owner and each client it names, an
// entry's companies), each audience's view under an entity of its own that shares the
// document's sequence. It returns the same operators as Stage.
func StageEach(seq int64, now time.Time, drafts ...Draft) (set bson.D, push bson.D, staged []events.Event, err error) {
	for _, d := range drafts {
		s, _, evs, err := Stage(seq, now, d)
		if err != nil {
			return nil, nil, nil, err
		}
		set, staged = s, append(staged, evs...)
	}
	if len(staged) == 0 {
		return nil, nil, nil, nil
	}
	docs := make(bson.A, len(staged))
	for i, e := range staged {
		docs[i] = e.Document()
	}
	return set, bson.D{{Key: FieldOutbox, Value: bson.D{{Key: "$each", Value: docs}}}}, staged, nil
}

// Index is the sparse index the relay's query needs on a collection with an outbox: only
// the documents with pending events are in it.
func Index(collection string) mongodb.Index {
	return mongodb.Index{Collection: collection, Name: "outbox_pending", Keys: mongodb.Keys(FieldPending, "_id"), Sparse: true}
}

// IfSet is s as an optional field of event data: left out when empty.
func IfSet(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
