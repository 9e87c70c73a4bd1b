package servicedesk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zcustody/suite/platform/apperr"
)

// executeTimeout bounds one call to an owner's Execute.
const executeTimeout = 30 * time.Second

// MaxFailedAttempts is how many times an owner may fail a request with an internal error
// before the request is recorded FAILED (an outage — unavailable, timeout — is not counted:
// the request waits for the owner to come back).
const MaxFailedAttempts = 5

// Failure says what an owner's failed Execute means for the request.
type Failure int

// Failures of an owner's Execute.
const (
	// Refused: the owner refused the request (a wallet deactivated meanwhile, a payload it
	// no longer accepts). Final: the request is recorded FAILED with the owner's reason.
	Refused Failure = iota
	// Outage: the owner could not answer (unavailable, timed out, busy). The request stays
	// AUTHORISED for the sweeper to resume, however often it happens.
	Outage
	// Fault: the owner failed internally. Retried until MaxFailedAttempts, then FAILED.
	Fault
)

// OwnerError is an owner's failed Execute.
type OwnerError struct {
	Failure Failure
	Code    string // the owner's answer, for the logs (e.g. Unavailable)
	Reason  string // the owner's message, recorded as a FAILED request's reason
}

func (e *OwnerError) Error() string { return e.Code + ": " + e.Reason }

// ownerError reads err as an OwnerError; any other error is a Fault.
func ownerError(err error) *OwnerError {
	var oe *OwnerError
	if errors.As(err, &oe) {
		return oe
	}
	return &OwnerError{Failure: Fault, Code: "Unknown", Reason: err.Error()}
}

// Execute carries out an AUTHORISED request through its owner and records the outcome; it
// returns the request as it stands afterwards. A failure that may pass (an outage, a fault
// below MaxFailedAttempts) leaves it AUTHORISED for the sweeper to resume. Owners execute
// idempotently by request id, and the outcome is recorded with a conditional update, so
// running a request twice (a racing sweeper, a resumed crash) has one effect and one
// COMPLETED version.
func (d *Desk) Execute(ctx context.Context, r Request) Request {
	// The execution outlives a caller who disconnects: the sweeper would finish it otherwise.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), executeTimeout)
	defer cancel()
	venues, err := d.venues(ctx, r)
	if err != nil {
		d.logger.Warn("execution postponed: company record unreadable", "request_id", r.ID, "error", err.Error())
		return r
	}
	t := move(r, StatusCompleted, ActionCompleted, RoleSystem, "system")
	err = d.stillCustodian(ctx, r)
	if err == nil {
		err = d.owners.Execute(ctx, r, venues)
	}
	if err != nil {
		oe := ownerError(err)
		if d.postpone(ctx, r, oe) {
			return r
		}
		t = move(r, StatusFailed, ActionFailed, RoleSystem, "system")
		t.Reason = oe.Reason
	}
	updated, err := d.store.Apply(ctx, r, t, d.now())
	if errors.Is(err, apperr.ErrConflict) {
		if current, err := d.store.Request(ctx, r.CompanyID, r.ID); err == nil {
			return current // another run recorded the outcome first
		}
		return r
	}
	if err != nil {
		d.logger.Error("record execution", "request_id", r.ID, "error", err.Error())
		return r
	}
	d.logger.Info("request executed", "request_id", r.ID, "status", updated.Status)
	return updated
}

// venues reads, for a venue's service (Service.VenueOnly), the venues the company operates
// now (none for a company without a record): a company that stopped operating a venue no
// longer acts for it, even on a request made before. Other services act for no venue, and
// read nothing.
func (d *Desk) venues(ctx context.Context, r Request) ([]string, error) {
	if svc, ok := Lookup(r.ServiceID); !ok || !svc.VenueOnly {
		return nil, nil
	}
	c, err := d.store.Company(ctx, r.CompanyID)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(c.VenueIDs), func(v string) bool { return v == "" }), nil
}

// stillCustodian refuses, for a custodian-only service (Service.CustodianOnly), a request
// whose company is no longer the custodian: as for a venue's service, the company's standing
// is read again at execution. An unreadable record postpones the execution.
func (d *Desk) stillCustodian(ctx context.Context, r Request) error {
	if svc, ok := Lookup(r.ServiceID); !ok || !svc.CustodianOnly {
		return nil
	}
	custodian, err := d.IsCustodian(ctx, r.CompanyID)
	switch {
	case err != nil:
		return &OwnerError{Failure: Outage, Code: "Unavailable", Reason: err.Error()}
	case !custodian:
		return &OwnerError{Failure: Refused, Code: "PermissionDenied",
			Reason: fmt.Sprintf("service %s is offered to the custodian's operators only; company %s is not the custodian", r.ServiceID, r.CompanyID)}
	}
	return nil
}

// postpone reports whether a failed execution is left for the sweeper to retry: always after
// an outage, after a fault until MaxFailedAttempts, never after a refusal.
func (d *Desk) postpone(ctx context.Context, r Request, oe *OwnerError) bool {
	switch oe.Failure {
	case Outage:
		d.logger.Warn("execution postponed", "request_id", r.ID, "code", oe.Code)
		return true
	case Fault:
		n, err := d.store.RecordFailedAttempt(ctx, r.ID)
		if err != nil || n < MaxFailedAttempts {
			d.logger.Warn("execution failed, will retry", "request_id", r.ID, "code", oe.Code, "attempt", n)
			return true
		}
		d.logger.Error("execution failed for good", "request_id", r.ID, "attempts", n)
	}
	return false
}
