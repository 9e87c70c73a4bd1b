// Package events is the suite's event envelope and the log that keeps events: what a service
// stages with its state changes (services/internal/outbox), what its relay hands over, and
// what the events service stores, searches, streams and delivers.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
)

// SchemaVersion is the envelope's schema version.
const SchemaVersion = 1

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

// Document is e as the outbox and the log store it: data as its JSON text, so it is relayed byte for
// byte as it was staged.
func (e Event) Document() bson.D {
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

// Collection is a Sink that keeps events in a collection, one document per event with the
// event id as _id (the events service's log keeps them so).
type Collection struct{ coll *mongo.Collection }

// NewCollection returns the sink into coll.
func NewCollection(coll *mongo.Collection) Collection { return Collection{coll: coll} }

// Append inserts each event; one the collection holds already is skipped, and an event that
// claims a version of its entity another event holds is refused.
func (c Collection) Append(ctx context.Context, events []Event) error {
	for _, e := range events {
		doc := append(bson.D{{Key: "_id", Value: e.ID}}, e.Document()...)
		_, err := c.coll.InsertOne(ctx, doc)
		if mongo.IsDuplicateKeyError(err) {
			// Held already, or another event claims the same entity version: only the first
			// is a repeat.
			n, cerr := c.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: e.ID}})
			if cerr != nil {
				return fmt.Errorf("append event %s: %w", e.ID, cerr)
			}
			if n == 0 {
				return fmt.Errorf("append event %s: %s %s version %d is another event's", e.ID, e.Entity.Type, e.Entity.ID, e.Entity.Version)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("append event %s: %w", e.ID, err)
		}
	}
	return nil
}

// LogIndexes are the indexes of a log collection: an entity's events in version order.
func LogIndexes(collection string) []mongodb.Index {
	return []mongodb.Index{{Collection: collection, Name: "entity_version", Keys: mongodb.Keys("entity.type", "entity.id", "entity.version"), Unique: true}}
}

// Events returns the events c holds of one entity, in version order.
func (c Collection) Events(ctx context.Context, entityType, entityID string) ([]Event, error) {
	cur, err := c.coll.Find(ctx, bson.D{{Key: "entity.type", Value: entityType}, {Key: "entity.id", Value: entityID}},
		options.Find().SetSort(bson.D{{Key: "entity.version", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var out []stored
	if err := cur.All(ctx, &out); err != nil {
		return nil, err
	}
	events := make([]Event, len(out))
	for i, s := range out {
		events[i] = s.event()
	}
	return events, nil
}

// Decode reads an event stored by Document.
func Decode(raw bson.Raw) (Event, error) {
	var s stored
	if err := bson.Unmarshal(raw, &s); err != nil {
		return Event{}, fmt.Errorf("events: undecodable event: %w", err)
	}
	return s.event(), nil
}
