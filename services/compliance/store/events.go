package store

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
)

// EntityVASPActivation is the entity type of the events of a company's activation of a VASP;
// the entity id is the activation's _id, companyId:vaspId.
const EntityVASPActivation = catalog.EntityVASPActivation

// Event types of an activation change.
const (
	EventVASPActivated   = "vasp.activated"
	EventVASPDeactivated = "vasp.deactivated"
)

// activationEvent is the event of d, the activation after a change; name is the VASP's
// name ("" when unknown).
func activationEvent(ctx context.Context, d activationDoc, name string) outbox.Draft {
	typ := EventVASPDeactivated
	if d.Active {
		typ = EventVASPActivated
	}
	return outbox.Draft{Type: typ, CompanyID: d.CompanyID, EntityType: EntityVASPActivation, EntityID: d.ID,
		// UpdatedAt as the API's answer has it; UpdatedBy the user's e-mail, or the company id
		// for a company-level call.
		Data: &eventsv1.VaspActivationEventData{VaspId: d.VASPID, VaspName: outbox.IfSet(name), Valid: d.Active,
			UpdatedAt: apitime.Format(d.UpdatedAt), UpdatedBy: d.UpdatedBy},
		RequestID: outbox.RequestID(ctx)}
}

// Outboxes are the collections whose documents carry an outbox, for the app's relays
// (outbox.NewRelay): the activations.
func (s *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{s.db.Collection(colActivations)}
}
