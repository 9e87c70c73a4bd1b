package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/events"
)

// Sink keeps relayed events, idempotently by event id: an event it already holds is
// accepted again without a change. It keeps the order it is given for each entity.
type Sink interface {
	Append(ctx context.Context, events []events.Event) error
}

// DefaultBatch is how many documents one relay pass visits at most.
const DefaultBatch = 100

// MaxAppend is how many events one Append carries at most (the events service's intake
// refuses more): a document's outbox is handed over in chunks of it, oldest first, each
// removed from the document once it is kept.
const MaxAppend = 100

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
	// One document that cannot be relayed (its events refused) must not hold up the others:
	// each is tried, and the failures are reported together.
	relayed := 0
	var errs []error
	for _, d := range docs {
		n, err := r.relay(ctx, d)
		relayed += n
		if err != nil {
			if ctx.Err() != nil {
				return relayed, err
			}
			errs = append(errs, err)
		}
	}
	return relayed, errors.Join(errs...)
}

func (r *Relay) relay(ctx context.Context, d pendingDoc) (int, error) {
	evs := make([]events.Event, 0, len(d.Outbox))
	for _, raw := range d.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			return 0, fmt.Errorf("outbox: %s %v: %w", r.coll.Name(), d.ID, err)
		}
		evs = append(evs, e)
	}
	for start := 0; start < len(evs); start += MaxAppend {
		end := min(start+MaxAppend, len(evs))
		if err := r.sink.Append(ctx, evs[start:end]); err != nil {
			return start, fmt.Errorf("outbox: relay %s %v: %w", r.coll.Name(), d.ID, err)
		}
		// The exact elements as read: events staged since stay for the next pass.
		elems := make(bson.A, end-start)
		for i, raw := range d.Outbox[start:end] {
			elems[i] = raw
		}
		if _, err := r.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, bson.D{{Key: "$pullAll", Value: bson.D{{Key: FieldOutbox, Value: elems}}}}); err != nil {
			return start, fmt.Errorf("outbox: remove relayed events of %s %v: %w", r.coll.Name(), d.ID, err)
		}
	}
	// Cleared only while the outbox is empty: an event staged meanwhile keeps the mark.
	_, err := r.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: FieldPending, Value: true}, {Key: FieldOutbox + ".0", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: FieldPending, Value: ""}}}})
	if err != nil {
		return len(evs), fmt.Errorf("outbox: clear the pending mark of %s %v: %w", r.coll.Name(), d.ID, err)
	}
	return len(evs), nil
}
