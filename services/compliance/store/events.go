package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/services/internal/outbox"
)

// EntityVASPActivation is the entity type of the events of a company's activation of a VASP;
// the entity id is the activation's _id, companyId:vaspId.
const EntityVASPActivation = "vasp_activation"

// Event types of an activation change.
const (
	EventVASPActivated   = "vasp.activated"
	EventVASPDeactivated = "vasp.deactivated"
)

// activationData is an activation event's data: the activation after the change.
type activationData struct {
	VASPID   string `json:"vaspId"`
	VASPName string `json:"vaspName,omitempty"`
	Valid    bool   `json:"valid"`
	// UpdatedAt is formatted as the API's answer has it; UpdatedBy is the user's e-mail, or
	// the company id for a company-level call.
	UpdatedAt string `json:"updatedAt"`
	UpdatedBy string `json:"updatedBy"`
}

// activationEvent is the event of d, the activation after a change; name is the VASP's
// name ("" when unknown).
func activationEvent(ctx context.Context, d activationDoc, name string) outbox.Draft {
	typ := EventVASPDeactivated
	if d.Active {
		typ = EventVASPActivated
	}
	return outbox.Draft{Type: typ, CompanyID: d.CompanyID, EntityType: EntityVASPActivation, EntityID: d.ID,
		Data:      activationData{VASPID: d.VASPID, VASPName: name, Valid: d.Active, UpdatedAt: apitime.Format(d.UpdatedAt), UpdatedBy: d.UpdatedBy},
		RequestID: requestID(ctx)}
}

// requestID is the request-identifier of the API call ctx belongs to.
func requestID(ctx context.Context) string {
	if r, ok := logging.FromContext(ctx); ok {
		return r.ID
	}
	return ""
}

// withEvents returns doc, a new document, with the events of its creation staged on it
// (event sequence 0 before them): the fields outbox.Stage sets, and the outbox holding them.
func withEvents(doc any, at time.Time, drafts ...outbox.Draft) (bson.D, error) {
	set, _, staged, err := outbox.Stage(0, at, drafts...)
	if err != nil {
		return nil, err
	}
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
		out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
	}
	pending := make(bson.A, len(staged))
	for i, e := range staged {
		pending[i] = e.Document()
	}
	out = append(out, set...)
	return append(out, bson.E{Key: outbox.FieldOutbox, Value: pending}), nil
}

// Outboxes are the collections whose documents carry an outbox, for the app's relays
// (outbox.NewRelay): the activations.
func (s *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{s.db.Collection(colActivations)}
}
