package outbox

import (
	"context"
	"fmt"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
)

// Sink keeps relayed events, idempotently by event id: an event it already holds is
// accepted again without a change. It keeps the order it is given for each entity.
type Sink interface {
	Append(ctx context.Context, events []Event) error
}

// DefaultBatch is how many documents one relay pass visits at most.
const DefaultBatch = 100

// Relay moves the outbox of one collection's documents to a Sink.
type Relay struct {
	coll   *mongo.Collection
	sink   Sink
	batch  int64
	logger *slog.Logger
}

// NewRelay returns the relay of coll's outboxes into sink.
func NewRelay(coll *mongo.Collection, sink Sink, logger *slog.Logger) *Relay {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Relay{coll: coll, sink: sink, batch: DefaultBatch, logger: logger}
}

// pendingDoc is a document with pending events: each outbox element as stored, so that the
// exact element is removed after it was relayed.
type pendingDoc struct {
	ID     any        `bson:"_id"`
	Outbox []bson.Raw `bson:"outbox"`
}

// Once relays the pending events of up to one batch of documents, oldest first within each
// document, and returns how many it relayed. An event leaves a document only after the sink
// holds it; a failure leaves the rest for the next pass.
func (r *Relay) Once(ctx context.Context) (int, error) {
	opts := options.Find().SetSort(bson.D{{Key: FieldPending, Value: 1}, {Key: "_id", Value: 1}}).SetLimit(r.batch).
		SetProjection(bson.D{{Key: FieldOutbox, Value: 1}})
	cur, err := r.coll.Find(ctx, bson.D{{Key: FieldPending, Value: true}}, opts)
	if err != nil {
		return 0, fmt.Errorf("outbox: find pending: %w", err)
	}
	var docs []pendingDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fmt.Errorf("outbox: read pending: %w", err)
	}
	relayed := 0
	for _, d := range docs {
		n, err := r.relay(ctx, d)
		relayed += n
		if err != nil {
			return relayed, err
		}
	}
	return relayed, nil
}

func (r *Relay) relay(ctx context.Context, d pendingDoc) (int, error) {
	events := make([]Event, 0, len(d.Outbox))
	for _, raw := range d.Outbox {
		var s stored
		if err := bson.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("outbox: %s %v: undecodable event: %w", r.coll.Name(), d.ID, err)
		}
		events = append(events, s.event())
	}
	if len(events) > 0 {
		if err := r.sink.Append(ctx, events); err != nil {
			return 0, fmt.Errorf("outbox: relay %s %v: %w", r.coll.Name(), d.ID, err)
		}
		// The exact elements as read: events staged since stay for the next pass.
		elems := make(bson.A, len(d.Outbox))
		for i, raw := range d.Outbox {
			elems[i] = raw
		}
		if _, err := r.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, bson.D{{Key: "$pullAll", Value: bson.D{{Key: FieldOutbox, Value: elems}}}}); err != nil {
			return 0, fmt.Errorf("outbox: remove relayed events of %s %v: %w", r.coll.Name(), d.ID, err)
		}
	}
	// Cleared only while the outbox is empty: an event staged meanwhile keeps the mark.
	_, err := r.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: FieldPending, Value: true}, {Key: FieldOutbox + ".0", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: FieldPending, Value: ""}}}})
	if err != nil {
		return len(events), fmt.Errorf("outbox: clear the pending mark of %s %v: %w", r.coll.Name(), d.ID, err)
	}
	return len(events), nil
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
		doc := append(bson.D{{Key: "_id", Value: e.ID}}, e.document()...)
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
