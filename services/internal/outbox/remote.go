package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/principal"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
)

// Remote is the Sink of a service's relay: the events service's AppendEvents, called as the
// service's own system principal.
type Remote struct {
	client eventsv1.EventLogServiceClient
	signer *principal.Signer
	system string
}

// NewRemote returns the sink that appends to client as system, signed by signer.
func NewRemote(client eventsv1.EventLogServiceClient, signer *principal.Signer, system string) *Remote {
	return &Remote{client: client, signer: signer, system: system}
}

// Append hands evs to the events service, which keeps them idempotently by id.
func (r *Remote) Append(ctx context.Context, evs []events.Event) error {
	ctx, err := r.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: r.system})
	if err != nil {
		return err
	}
	req := &eventsv1.AppendEventsRequest{Events: make([]*eventsv1.StagedEvent, len(evs))}
	for i, e := range evs {
		req.Events[i] = &eventsv1.StagedEvent{Id: e.ID, Type: e.Type, Timestamp: e.Timestamp.UTC().Format(time.RFC3339Nano),
			CompanyId: e.CompanyID, EntityType: e.Entity.Type, EntityId: e.Entity.ID, EntityVersion: e.Entity.Version,
			DataJson: string(e.Data), Request: e.RequestID, SchemaVersion: int32(e.SchemaVersion)}
	}
	if _, err := r.client.AppendEvents(ctx, req); err != nil {
		return fmt.Errorf("append to the events service: %w", err)
	}
	return nil
}
