package server

import (
	"context"
	"errors"
	"time"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/webhook"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/store"
)

// Subscriptions is what the subscription handlers need from the store.
type Subscriptions interface {
	InsertSubscription(ctx context.Context, sub events.Subscription) error
	Subscription(ctx context.Context, company, id string) (events.Subscription, error)
	SaveSubscription(ctx context.Context, sub events.Subscription, also ...string) (events.Subscription, error)
	Subscriptions(ctx context.Context, company string) ([]events.Subscription, error)
	DeleteSubscription(ctx context.Context, company, id string) (int, error)
	Head(ctx context.Context, company string) (store.Head, error)
}

// WebhookOptions configure the subscription handlers.
type WebhookOptions struct {
	// Keys seals secrets and seeds; nil answers every call "not configured".
	Keys *webhook.Keyring
	// URLRules are the dispatcher's: a URL it would refuse is refused at once.
	URLRules events.URLRules
	Now      func() time.Time
}

// Webhooks implements eventsv1.WebhookServiceServer.
type Webhooks struct {
	eventsv1.UnimplementedWebhookServiceServer
	st         Subscriptions
	deliveries Deliveries
	opts       WebhookOptions
}

var _ eventsv1.WebhookServiceServer = (*Webhooks)(nil)

// NewWebhooks returns the subscription handlers.
func NewWebhooks(st Subscriptions, deliveries Deliveries, opts WebhookOptions) *Webhooks {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Webhooks{st: st, deliveries: deliveries, opts: opts}
}

func (w *Webhooks) configured() error {
	if w.opts.Keys == nil {
		return apperr.Unimplemented("", "webhooks are not configured on this deployment (WEBHOOK_KEYS)")
	}
	return nil
}

// CreateSubscription: a maker subscribes an endpoint; it waits for a checker.
func (w *Webhooks) CreateSubscription(ctx context.Context, req *eventsv1.CreateSubscriptionRequest) (*eventsv1.CreateSubscriptionResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	if err := w.configured(); err != nil {
		return nil, err
	}
	if err := events.CheckURL("url", req.GetUrl(), w.opts.URLRules); err != nil {
		return nil, err
	}
	sub, secret, err := events.NewSubscription(p.CompanyID, req.GetUrl(), req.GetTypes(), p.UserEmail, w.opts.Now().UTC(), w.opts.Keys)
	if err != nil {
		return nil, err
	}
	if err := w.st.InsertSubscription(ctx, sub); err != nil {
		return nil, err
	}
	return &eventsv1.CreateSubscriptionResponse{Subscription: toSubscription(sub, w.opts.Now()), Secret: secret.String()}, nil
}

// SearchSubscriptions lists the company's subscriptions.
func (w *Webhooks) SearchSubscriptions(ctx context.Context, _ *eventsv1.SearchSubscriptionsRequest) (*eventsv1.SearchSubscriptionsResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	subs, err := w.st.Subscriptions(ctx, p.CompanyID)
	if err != nil {
		return nil, err
	}
	out := &eventsv1.SearchSubscriptionsResponse{Items: make([]*eventsv1.Subscription, len(subs))}
	for i, s := range subs {
		out.Items[i] = toSubscription(s, w.opts.Now())
	}
	return out, nil
}

// change reads the caller's company's subscription id, lets f change it, and saves it over
// the version read: a concurrent change makes the call a 409 to retry, never a lost update.
func (w *Webhooks) change(ctx context.Context, id string, f func(p principal.Principal, s *events.Subscription) error) (events.Subscription, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return events.Subscription{}, err
	}
	if err := w.configured(); err != nil {
		return events.Subscription{}, err
	}
	sub, err := w.st.Subscription(ctx, p.CompanyID, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return events.Subscription{}, apperr.NotFound("subscriptionId", id)
	}
	if err != nil {
		return events.Subscription{}, err
	}
	before := sub
	if err := f(p, &sub); err != nil {
		return events.Subscription{}, err
	}
	// The dispatcher's fields go along only when the change itself moved them.
	var also []string
	if sub.Cursor != before.Cursor {
		also = append(also, "cursor")
	}
	if !sub.FailingSince.Equal(before.FailingSince) {
		also = append(also, "failingSince")
	}
	saved, err := w.st.SaveSubscription(ctx, sub, also...)
	if errors.Is(err, apperr.ErrConflict) {
		return events.Subscription{}, apperr.ConflictOn(apperr.CodeConflict, "subscriptionId", "subscription %s changed meanwhile; read it again and retry", id)
	}
	return saved, err
}

// UpdateSubscription changes types and the switch at once; a URL waits for a checker.
func (w *Webhooks) UpdateSubscription(ctx context.Context, req *eventsv1.UpdateSubscriptionRequest) (*eventsv1.UpdateSubscriptionResponse, error) {
	if req.Url != nil {
		if err := events.CheckURL("url", req.GetUrl(), w.opts.URLRules); err != nil {
			return nil, err
		}
	}
	sub, err := w.change(ctx, req.GetSubscriptionId(), func(p principal.Principal, s *events.Subscription) error {
		now := w.opts.Now().UTC()
		if s.Status == events.StatusRejected {
			return apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s was rejected; create a new one", s.ID)
		}
		if req.GetSetTypes() {
			if err := s.SetTypes(req.GetTypes(), p.UserEmail, now); err != nil {
				return err
			}
		}
		if req.Enabled != nil {
			if req.GetEnabled() {
				if err := s.Enable(p.UserEmail, now); err != nil {
					return err
				}
			} else {
				s.Enabled = false
			}
		}
		if req.Url != nil && req.GetUrl() != s.URL {
			if err := s.ProposeURL(req.GetUrl(), p.UserEmail, now); err != nil {
				return err
			}
		}
		s.UpdatedBy, s.UpdatedAt = p.UserEmail, now
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &eventsv1.UpdateSubscriptionResponse{Subscription: toSubscription(sub, w.opts.Now())}, nil
}

// RotateSubscriptionSecret proposes a new secret, shown once, for a checker to put in force.
func (w *Webhooks) RotateSubscriptionSecret(ctx context.Context, req *eventsv1.RotateSubscriptionSecretRequest) (*eventsv1.RotateSubscriptionSecretResponse, error) {
	var secret webhook.Secret
	sub, err := w.change(ctx, req.GetSubscriptionId(), func(p principal.Principal, s *events.Subscription) error {
		if s.Status == events.StatusRejected {
			return apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s was rejected; create a new one", s.ID)
		}
		var err error
		secret, err = s.ProposeSecret(p.UserEmail, w.opts.Now().UTC(), w.opts.Keys)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &eventsv1.RotateSubscriptionSecretResponse{Subscription: toSubscription(sub, w.opts.Now()), Secret: secret.String()}, nil
}

// ApproveSubscriptionChange: a checker other than the maker puts the waiting change in force.
func (w *Webhooks) ApproveSubscriptionChange(ctx context.Context, req *eventsv1.ApproveSubscriptionChangeRequest) (*eventsv1.ApproveSubscriptionChangeResponse, error) {
	seen, err := apitime.Parse(req.GetProposedAt())
	if err != nil {
		return nil, apperr.Invalid(apperr.CodeFormat, "proposedAt", "want the pending change's proposedAt, an ISO 8601 time")
	}
	sub, err := w.decide(ctx, req.GetSubscriptionId(), true, seen)
	if err != nil {
		return nil, err
	}
	return &eventsv1.ApproveSubscriptionChangeResponse{Subscription: sub}, nil
}

// RejectSubscriptionChange: a checker other than the maker drops the waiting change.
func (w *Webhooks) RejectSubscriptionChange(ctx context.Context, req *eventsv1.RejectSubscriptionChangeRequest) (*eventsv1.RejectSubscriptionChangeResponse, error) {
	sub, err := w.decide(ctx, req.GetSubscriptionId(), false, time.Time{})
	if err != nil {
		return nil, err
	}
	return &eventsv1.RejectSubscriptionChangeResponse{Subscription: sub}, nil
}

func (w *Webhooks) decide(ctx context.Context, id string, approve bool, seen time.Time) (*eventsv1.Subscription, error) {
	sub, err := w.change(ctx, id, func(p principal.Principal, s *events.Subscription) error {
		head, err := w.st.Head(ctx, s.CompanyID)
		if err != nil {
			return err
		}
		return s.Decide(approve, p.UserEmail, w.opts.Now().UTC(), head.Next-1, seen)
	})
	if err != nil {
		return nil, err
	}
	return toSubscription(sub, w.opts.Now()), nil
}

// DeleteSubscription deletes one of the caller's company's subscriptions and its waiting
// deliveries: a maker alone may (it only removes where events go).
func (w *Webhooks) DeleteSubscription(ctx context.Context, req *eventsv1.DeleteSubscriptionRequest) (*eventsv1.DeleteSubscriptionResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	dropped, err := w.st.DeleteSubscription(ctx, p.CompanyID, req.GetSubscriptionId())
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("subscriptionId", req.GetSubscriptionId())
	}
	if err != nil {
		return nil, err
	}
	return &eventsv1.DeleteSubscriptionResponse{SubscriptionId: req.GetSubscriptionId(), DeliveriesDropped: int32(dropped)}, nil
}

// EnableSubscription enables a suspended or switched-off subscription again.
func (w *Webhooks) EnableSubscription(ctx context.Context, req *eventsv1.EnableSubscriptionRequest) (*eventsv1.EnableSubscriptionResponse, error) {
	sub, err := w.change(ctx, req.GetSubscriptionId(), func(p principal.Principal, s *events.Subscription) error {
		return s.Enable(p.UserEmail, w.opts.Now().UTC())
	})
	if err != nil {
		return nil, err
	}
	return &eventsv1.EnableSubscriptionResponse{Subscription: toSubscription(sub, w.opts.Now())}, nil
}

func toSubscription(s events.Subscription, now time.Time) *eventsv1.Subscription {
	out := &eventsv1.Subscription{SubscriptionId: s.ID, Url: s.URL, Types: s.Types, Enabled: s.Enabled, Status: s.Status,
		SuspendedReason: s.SuspendedReason, PublicKey: s.PublicKey, CreatedBy: s.CreatedBy, CreatedAt: apitime.Format(s.CreatedAt),
		UpdatedBy: s.UpdatedBy, UpdatedAt: apitime.Format(s.UpdatedAt)}
	if out.Types == nil {
		out.Types = []string{}
	}
	if !s.SuspendedAt.IsZero() {
		out.SuspendedAt = apitime.Format(s.SuspendedAt)
	}
	if m := s.Missed; m != nil {
		out.Missed = &eventsv1.MissedEvents{FromSequence: m.From, ToSequence: m.To, At: apitime.Format(m.At)}
	}
	if c := s.Pending; c != nil {
		out.Pending = &eventsv1.PendingChange{Kind: c.Kind, Url: c.URL, Types: c.Types, ProposedBy: c.ProposedBy, ProposedAt: apitime.Format(c.ProposedAt)}
	}
	// The previous secret, while its overlap lasts, is the second in force.
	if inForce := s.InForce(now); len(inForce) > 1 {
		out.PreviousSecretUntil = apitime.Format(inForce[1].Until)
	}
	return out
}
