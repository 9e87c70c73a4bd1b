package server

import (
	"context"
	"errors"
	"time"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/store"
)

// Deliveries is what the attempt history and resend handlers need from the dispatcher's
// store.
type Deliveries interface {
	ListAttempts(ctx context.Context, q store.AttemptQuery) ([]events.Attempt, bool, error)
	Resend(ctx context.Context, company, subscriptionID string, sel store.Resend, now time.Time) (store.Resent, error)
}

// ResendEvents queues one event, one entity's events, or every delivery that failed since a
// time, of one of the caller's company's subscriptions, again (exactly one selector).
func (w *Webhooks) ResendEvents(ctx context.Context, req *eventsv1.ResendEventsRequest) (*eventsv1.ResendEventsResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	var sel store.Resend
	chosen := 0
	if req.GetEventId() != "" {
		sel.EventID = req.GetEventId()
		chosen++
	}
	if req.GetEntityType() != "" || req.GetEntityId() != "" {
		if req.GetEntityType() == "" {
			return nil, apperr.Missing("entityType")
		}
		if req.GetEntityId() == "" {
			return nil, apperr.Missing("entityId")
		}
		sel.EntityType, sel.EntityID = req.GetEntityType(), req.GetEntityId()
		chosen++
	}
	if req.GetFailedSince() != "" {
		if sel.FailedSince, err = optionalTime("failedSince", req.GetFailedSince()); err != nil {
			return nil, err
		}
		chosen++
	}
	if chosen != 1 {
		return nil, apperr.Invalid(apperr.CodeFormat, "eventId", "name exactly one of eventId, entityType with entityId, or failedSince")
	}
	n, err := w.deliveries.Resend(ctx, p.CompanyID, req.GetSubscriptionId(), sel, w.opts.Now())
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("subscriptionId", req.GetSubscriptionId())
	}
	if err != nil {
		return nil, err
	}
	return &eventsv1.ResendEventsResponse{Scheduled: int32(n.Scheduled), More: n.More}, nil
}

// SearchDeliveryAttempts lists the attempts of the caller's company, newest first.
func (w *Webhooks) SearchDeliveryAttempts(ctx context.Context, req *eventsv1.SearchDeliveryAttemptsRequest) (*eventsv1.SearchDeliveryAttemptsResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	q := store.AttemptQuery{CompanyID: p.CompanyID, SubscriptionID: req.GetSubscriptionId(), EventID: req.GetEventId(), Outcome: req.GetOutcome(),
		After: req.GetAfter(), Limit: DefaultLimit}
	if req.Limit != nil {
		q.Limit = int(req.GetLimit())
	}
	if q.Since, err = optionalTime("since", req.GetSince()); err != nil {
		return nil, err
	}
	if q.Until, err = optionalTime("until", req.GetUntil()); err != nil {
		return nil, err
	}
	page, more, err := w.deliveries.ListAttempts(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &eventsv1.SearchDeliveryAttemptsResponse{Items: make([]*eventsv1.DeliveryAttempt, len(page))}
	for i, a := range page {
		out.Items[i] = &eventsv1.DeliveryAttempt{AttemptId: a.ID, SubscriptionId: a.SubscriptionID, EventId: a.EventID, EventType: a.EventType,
			AttemptedAt: apitime.Format(a.At), DurationMs: a.Duration.Milliseconds(), Outcome: a.Outcome, HttpStatus: int32(a.Status),
			Trigger: a.Trigger, Response: a.Response, Detail: a.Detail}
	}
	if more && len(page) > 0 {
		out.NextToken = page[len(page)-1].ID
	}
	return out, nil
}

// optionalTime reads a client's ISO 8601 time of field; empty is the zero time.
func optionalTime(field, text string) (time.Time, error) {
	if text == "" {
		return time.Time{}, nil
	}
	at, err := apitime.Parse(text)
	if err != nil {
		return time.Time{}, apperr.Invalid(apperr.CodeFormat, field, "%s is not an ISO 8601 time", field)
	}
	return at, nil
}
