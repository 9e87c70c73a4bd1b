package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/logging"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Events (docs/decisions.md, "Events: the outbox"). A whitelisted address's changes stage
// their event in the same conditional update as the change (outbox.Stage), numbered after the
// eventSeq read with the document (the update's version guard keeps that read true); an
// insert stores its event in the inserted document. Only the company that whitelisted an
// address sees it, so each change has one event, to that company, under entity id <id>.
const (
	EntityWhitelisted = catalog.EntityWhitelisted
	// Event types: an address whitelisted (0x0007-007 executed), one deactivated (0x0007-008).
	EventWhitelistedCreated     = EntityWhitelisted + ".created"
	EventWhitelistedDeactivated = EntityWhitelisted + ".deactivated"
)

// Outboxes are the collections whose documents carry an outbox, for the app's relays.
func (s *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{s.db.Collection(colWhitelisted)}
}

// whitelistedDraft is the event eventType of w as the change leaves it (from previous; none
// for a new address).
func whitelistedDraft(ctx context.Context, eventType string, w address.Whitelisted, previous string) outbox.Draft {
	r, _ := logging.FromContext(ctx)
	return outbox.Draft{Type: eventType, CompanyID: w.CompanyID, EntityType: EntityWhitelisted, EntityID: w.ID,
		// As endpoint 9 lists it.
		Data: &eventsv1.WhitelistedAddressEventData{Address: w.Address, AddressPurpose: w.Purposes, Status: w.Status,
			PreviousStatus: outbox.IfSet(previous), CreatedAt: apitime.Format(w.CreatedAt), Blockchain: w.Blockchain,
			BlockchainId: address.BlockchainID(w.Blockchain)},
		RequestID: r.ID}
}

func (s *Store) stamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }
