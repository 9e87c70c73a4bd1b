package outbox

import (
	"context"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/logging"
)

// RequestID is the request-identifier of the API call ctx belongs to (Draft.RequestID);
// empty outside one (a sweeper, a recovery).
func RequestID(ctx context.Context) string {
	if r, ok := logging.FromContext(ctx); ok {
		return r.ID
	}
	return ""
}

// Attach returns doc, a document about to be inserted, with the events Stage returned for
// its creation on it: the fields of set (eventSeq, hasPending) and the outbox holding staged,
// in place of any doc has of its own. The insert then records the entity and its first
// events together.
func Attach(doc any, set bson.D, staged []events.Event) (bson.D, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, err
	}
	elems, err := bson.Raw(raw).Elements()
	if err != nil {
		return nil, err
	}
	out := make(bson.D, 0, len(elems)+len(set)+1)
	for _, e := range elems {
		if e.Key() == FieldOutbox || slices.ContainsFunc(set, func(s bson.E) bool { return s.Key == e.Key() }) {
			continue
		}
		out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
	}
	out = append(out, set...)
	box := make(bson.A, len(staged))
	for i, e := range staged {
		box[i] = e.Document()
	}
	return append(out, bson.E{Key: FieldOutbox, Value: box}), nil
}

// NewDocument stages drafts as the first events of doc, a document about to be inserted
// (event sequence 0 before them), and returns it with them attached.
func NewDocument(doc any, at time.Time, drafts ...Draft) (bson.D, error) {
	set, _, staged, err := Stage(0, at, drafts...)
	if err != nil {
		return nil, err
	}
	return Attach(doc, set, staged)
}
