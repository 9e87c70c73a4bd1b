package store

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/servicedesk"
)

// EntityServiceRequest is the entity type of a service request's events; the entity id is
// the request id.
const EntityServiceRequest = catalog.EntityServiceRequest

// requestEventTypes names the event of a request entering each status: the status's word,
// lower case (PENDING CONFIRMATION is where a request is created, PENDING AUTHORISATION where
// its maker's confirmation leads).
var requestEventTypes = map[string]string{
	servicedesk.StatusPendingConfirmation:  "service_request.created",
	servicedesk.StatusPendingAuthorisation: "service_request.confirmed",
	servicedesk.StatusAuthorised:           "service_request.authorised",
	servicedesk.StatusCompleted:            "service_request.completed",
	servicedesk.StatusFailed:               "service_request.failed",
	servicedesk.StatusRejected:             "service_request.rejected",
	servicedesk.StatusCancelled:            "service_request.cancelled",
	servicedesk.StatusExpired:              "service_request.expired",
}

// approvalAddedEvent is the event of an approval short of the quorum: the request stays
// pending authorisation.
const approvalAddedEvent = "service_request.approval_added"

// requestEvent is the event of r entering its status from previous ("" for its creation), or
// of an approval that leaves it pending authorisation.
func requestEvent(ctx context.Context, r servicedesk.Request, previous string) (outbox.Draft, error) {
	typ, ok := requestEventTypes[r.Status]
	if !ok {
		return outbox.Draft{}, fmt.Errorf("request %s: no event for status %q", r.ID, r.Status)
	}
	if previous == r.Status && r.Status == servicedesk.StatusPendingAuthorisation {
		typ = approvalAddedEvent
	}
	rule, missing := r.DecidingRule(), int32(r.Tally().Missing())
	checkers := []string{}
	for _, v := range r.Versions {
		if v.Role == servicedesk.RoleChecker && !slices.Contains(checkers, v.Actor) {
			checkers = append(checkers, v.Actor)
		}
	}
	// The request's public fields as the REST API shows them, after the change. The payload
	// (up to the gateway's body limit, far over outbox.MaxDataBytes), the owner's plugin
	// details and the reasons are left out: receivers fetch them from the API.
	data := &eventsv1.ServiceRequestEventData{RequestId: r.ID, ServiceId: r.ServiceID, Product: r.Product, ProductId: r.ProductID,
		RequestType: r.RequestType, EndToEndId: r.EndToEndID, CompanyId: r.CompanyID, Status: r.Status, PreviousStatus: outbox.IfSet(previous),
		EntityIds: r.EntityIDs, CreatedBy: r.CreatedBy, UpdatedBy: r.UpdatedBy, Checkers: checkers,
		CreatedAt: apitime.Format(r.CreatedAt), UpdatedAt: apitime.Format(r.UpdatedAt), ExpiresAt: apitime.Format(r.ExpiresAt),
		PolicyVersion: r.PolicyVersion, Rule: rule.Name, ApprovalsMissing: missing}
	return outbox.Draft{Type: typ, CompanyID: r.CompanyID, EntityType: EntityServiceRequest, EntityID: r.ID, Data: data,
		RequestID: outbox.RequestID(ctx)}, nil
}

// Outboxes are the collections whose documents carry an outbox, for the app's relays
// (outbox.NewRelay): the requests.
func (s *Store) Outboxes() []*mongo.Collection {
	return []*mongo.Collection{s.db.Collection(colRequests)}
}
