package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/servicedesk"
)

// executeTimeout bounds one call to an owner's Execute.
const executeTimeout = 30 * time.Second

// MaxFailedAttempts is how many times an owner may fail a request with an internal error
// before the request is recorded FAILED (an outage — unavailable, timeout — is not counted:
// the request waits for the owner to come back).
const MaxFailedAttempts = 5

// Executor carries out authorised requests through their owners' plugin API and records the
// outcome. Owners execute idempotently by request id, and the outcome is recorded with a
// conditional update, so running a request twice (a racing sweeper, a resumed crash) has one
// effect and one COMPLETED version.
type Executor struct {
	store   Store
	plugins *Plugins
	logger  *slog.Logger
	now     func() time.Time
}

// NewExecutor returns the executor.
func NewExecutor(store Store, plugins *Plugins, logger *slog.Logger) *Executor {
	return &Executor{store: store, plugins: plugins, logger: logger, now: time.Now}
}

// Run executes an AUTHORISED request and returns it as it stands afterwards. A failure that
// may pass (owner unavailable, timeout) leaves it AUTHORISED for the sweeper to resume.
func (e *Executor) Run(ctx context.Context, r servicedesk.Request) servicedesk.Request {
	// The execution outlives a caller who disconnects: the sweeper would finish it otherwise.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), executeTimeout)
	defer cancel()
	venues, err := e.venues(ctx, r)
	if err != nil {
		e.logger.Warn("execution postponed: company record unreadable", "request_id", r.ID, "error", err.Error())
		return r
	}
	_, err = e.plugins.Execute(ctx, r.Owner, pluginRequest(r, venues), r.EntityIDs)
	t := servicedesk.Transition{From: []string{servicedesk.StatusAuthorised}, To: servicedesk.StatusCompleted,
		Action: servicedesk.ActionCompleted, Role: servicedesk.RoleSystem, Actor: "system"}
	if err != nil {
		if e.postpone(ctx, r, err) {
			return r
		}
		t.To, t.Action, t.Reason = servicedesk.StatusFailed, servicedesk.ActionFailed, status.Convert(err).Message()
	}
	updated, err := e.store.Apply(ctx, r, t, e.now())
	if errors.Is(err, apperr.ErrConflict) {
		if current, err := e.store.Request(ctx, r.CompanyID, r.ID); err == nil {
			return current // another run recorded the outcome first
		}
		return r
	}
	if err != nil {
		e.logger.Error("record execution", "request_id", r.ID, "error", err.Error())
		return r
	}
	e.logger.Info("request executed", "request_id", r.ID, "status", updated.Status)
	return updated
}

// venues reads, for a venue's service (servicedesk.Service.VenueOnly), the venues the
// company operates now (none for a company without a record): a company that stopped
// operating a venue no longer acts for it, even on a request made before. Other services
// act for no venue, and read nothing.
func (e *Executor) venues(ctx context.Context, r servicedesk.Request) ([]string, error) {
	if !slices.ContainsFunc(servicedesk.Catalog(), func(s servicedesk.Service) bool { return s.ID == r.ServiceID && s.VenueOnly }) {
		return nil, nil
	}
	c, err := e.store.Company(ctx, r.CompanyID)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(c.VenueIDs), func(v string) bool { return v == "" }), nil
}

// postpone reports whether a failed execution is left for the sweeper to retry: always after
// an outage, after an internal error until MaxFailedAttempts, never after a refusal.
func (e *Executor) postpone(ctx context.Context, r servicedesk.Request, err error) bool {
	code := status.Code(err)
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
		e.logger.Warn("execution postponed", "request_id", r.ID, "code", code.String())
		return true
	case codes.Internal, codes.Unknown:
		n, cerr := e.store.RecordFailedAttempt(ctx, r.ID)
		if cerr != nil || n < MaxFailedAttempts {
			e.logger.Warn("execution failed, will retry", "request_id", r.ID, "code", code.String(), "attempt", n)
			return true
		}
		e.logger.Error("execution failed for good", "request_id", r.ID, "attempts", n)
	}
	return false
}

// Sweeper expires overdue pending requests and resumes authorised requests whose execution
// did not finish (a crash, an owner that was down).
type Sweeper struct {
	Store Store
	Sweep interface {
		Due(ctx context.Context, statuses []string, field string, cutoff time.Time, limit int64) ([]servicedesk.Request, error)
	}
	Executor *Executor
	Logger   *slog.Logger
	// Grace is how long an authorised request is left to its inline execution before the
	// sweeper resumes it.
	Grace time.Duration
	Now   func() time.Time
}

// Once runs one sweep.
func (s *Sweeper) Once(ctx context.Context) {
	now := s.Now()
	expired, err := s.Sweep.Due(ctx, []string{servicedesk.StatusPendingConfirmation, servicedesk.StatusPendingAuthorisation}, "expiresAt", now, 100)
	if err != nil {
		s.Logger.Warn("sweep expired requests", "error", err.Error())
	}
	for _, r := range expired {
		t := servicedesk.Transition{From: []string{r.Status}, To: servicedesk.StatusExpired, Action: servicedesk.ActionExpired,
			Role: servicedesk.RoleSystem, Actor: "system"}
		if _, err := s.Store.Apply(ctx, r, t, now); err != nil && !errors.Is(err, apperr.ErrConflict) {
			s.Logger.Warn("expire request", "request_id", r.ID, "error", err.Error())
		}
	}
	stalled, err := s.Sweep.Due(ctx, []string{servicedesk.StatusAuthorised}, "authorisedAt", now.Add(-s.Grace), 20)
	if err != nil {
		s.Logger.Warn("sweep authorised requests", "error", err.Error())
	}
	for _, r := range stalled {
		s.Executor.Run(ctx, r)
	}
}
