package servicedesk

import (
	"context"
	"errors"
	"slices"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/signing"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// Approval is a signed decision on a pending request: the request object the actor signed
// (GetPending's view with the decision set) and their approval signature over it.
type Approval struct {
	RequestID string
	// Signed is the signed request object as JSON; nil when none was sent.
	Signed    []byte
	Signature string
}

// Pending returns the object the actor signs to act on one of their company's pending
// requests (PendingView), and the request (its quorum: Request.Tally).
func (d *Desk) Pending(ctx context.Context, a Actor, id string) (map[string]any, Request, error) {
	r, err := d.load(ctx, a, id)
	if err != nil {
		return nil, r, err
	}
	if !Pending(r.Status) {
		return nil, r, notPending(r)
	}
	view, err := PendingView(r)
	return view, r, err
}

// Approve applies a signed decision: the maker's confirmation, or a checker's approval or
// rejection under four eyes. An authorised request is executed at once, and returned as it
// stands afterwards.
//
// Approvals of one quorum race: each is one conditional update of the request, and one
// that loses to another approval reads the request again and is decided again (the object
// its approver signed stays the same, ViewVersion), so every eligible approval is recorded
// and exactly one completes the quorum; the request executes once.
func (d *Desk) Approve(ctx context.Context, a Actor, ap Approval) (Request, error) {
	for range maxApprovalRaces {
		r, err := d.load(ctx, a, ap.RequestID)
		if err != nil {
			return Request{}, err
		}
		decision, err := d.checkSigned(ctx, a, r, ap)
		if err != nil {
			return Request{}, err
		}
		t, err := Decide(a, r, decision)
		if err != nil {
			return Request{}, err
		}
		t.Signature = ap.Signature // kept in the audit trail with the version it authorised
		updated, err := d.store.Apply(ctx, r, t, d.now())
		if errors.Is(err, apperr.ErrConflict) && r.Status == StatusPendingAuthorisation {
			continue // another decision landed first: decide again on the request as it is
		}
		if errors.Is(err, apperr.ErrConflict) {
			return Request{}, apperr.Conflict(apperr.CodeConflict, "request %s was changed by another action; fetch it again", r.ID)
		}
		if err != nil {
			return Request{}, err
		}
		if updated.Status == StatusAuthorised {
			updated = d.Execute(ctx, updated)
		}
		return updated, nil
	}
	return Request{}, apperr.Conflict(apperr.CodeConflict, "request %s is changing too fast; try again", ap.RequestID)
}

// maxApprovalRaces bounds how often one approval is decided again after losing a race: each
// loss means another decision landed, and a quorum has at most a few dozen.
const maxApprovalRaces = 64

// checkSigned verifies that the signed object is the request's current pending view and that
// the actor signed it with their registered key.
func (d *Desk) checkSigned(ctx context.Context, a Actor, r Request, ap Approval) (Decision, error) {
	if ap.Signed == nil {
		return Decision{}, apperr.Missing("request")
	}
	if ap.Signature == "" || ap.Signature == SignaturePlaceholder {
		return Decision{}, apperr.Missing("signature")
	}
	if !Pending(r.Status) {
		return Decision{}, notPending(r)
	}
	decision, same, err := MatchPending(r, ap.Signed)
	if err != nil {
		return decision, err
	}
	if !same {
		return decision, apperr.Conflict(apperr.CodeConflict, "the request object does not match request %s as it stands; fetch it again with pending", r.ID)
	}
	user, err := d.store.User(ctx, a.CompanyID, a.Email)
	if err != nil {
		return decision, err
	}
	if err := signing.VerifyApproval(user.PublicKey, ap.Signed, ap.Signature); err != nil {
		return decision, apperr.ForbiddenField("signature", "the approval signature does not verify with the acting user's registered key")
	}
	return decision, nil
}

// Decide turns a verified decision into a transition, enforcing the request's policy rule
// and four eyes: only the maker confirms their request; only an eligible approver (a member
// of one of the rule's groups who is not the maker: a CHECKER under the default policy)
// approves or rejects it, each once. An approval that completes the rule's quorum authorises
// the request; one short of it records the approval and leaves the request pending. Any
// eligible rejection ends the request, and gives its reason.
func Decide(a Actor, r Request, d Decision) (Transition, error) {
	if r.Status == StatusPendingConfirmation {
		return confirm(a, r, d)
	}
	rule := r.DecidingRule()
	approver := policy.Approver{Email: a.Email, Roles: slices.Clone(a.Roles)}
	switch {
	case a.Email == r.CreatedBy:
		return Transition{}, apperr.Forbidden("four-eyes rule: the maker of request %s cannot authorise it", r.ID)
	case !rule.Eligible(approver, r.CreatedBy):
		return Transition{}, apperr.Forbidden("only an approver of rule %q (policy version %d; %s) can authorise request %s", rule.Name, r.PolicyVersion, rule.GroupsText(), r.ID)
	case r.Approved(a.Email):
		return Transition{}, apperr.Conflict(apperr.CodeConflict, "%s already approved request %s: each approver counts once", a.Email, r.ID)
	}
	var t Transition
	switch d.Type {
	case TypeApprove:
		to := StatusPendingAuthorisation
		if rule.Tally(append(r.Approvers(), approver), r.CreatedBy).Met {
			to = StatusAuthorised
		}
		t = move(r, to, ActionApproved, RoleChecker, a.Email)
		t.Roles = approver.Roles
	case TypeReject:
		if d.RejectReason == "" {
			return t, apperr.Missing("request.rejectReason")
		}
		t = move(r, StatusRejected, ActionRejected, RoleChecker, a.Email)
		t.Reason = d.RejectReason
	default:
		return t, apperr.Invalid(apperr.CodeFormat, "request.type", "type must be Approve or Reject")
	}
	t.Updated = a.Email
	return t, nil
}

// confirm is the maker's confirmation: on to a checker, or authorised when the service
// needs none.
func confirm(a Actor, r Request, d Decision) (Transition, error) {
	if d.Type != TypeConfirm {
		return Transition{}, apperr.Invalid(apperr.CodeFormat, "request.type", "a request pending confirmation takes type Confirm")
	}
	if a.Email != r.CreatedBy || !a.HasRole(RoleMaker) {
		return Transition{}, apperr.Forbidden("only the maker who created request %s can confirm it", r.ID)
	}
	to := StatusPendingAuthorisation
	if r.DecidingRule().Action == policy.ActionAllow {
		to = StatusAuthorised
	}
	t := move(r, to, ActionConfirmed, RoleMaker, a.Email)
	t.Updated = a.Email
	return t, nil
}

// Cancel lets the maker withdraw a request that is not yet authorised.
func (d *Desk) Cancel(ctx context.Context, a Actor, id string) (Request, error) {
	r, err := d.load(ctx, a, id)
	if err != nil {
		return Request{}, err
	}
	if a.Email != r.CreatedBy {
		return Request{}, apperr.Forbidden("only the maker who created request %s can cancel it", r.ID)
	}
	if !Pending(r.Status) {
		return Request{}, notPending(r)
	}
	t := move(r, StatusCancelled, ActionCancelled, RoleMaker, a.Email)
	t.Updated = a.Email
	return d.apply(ctx, r, t)
}

// apply records a person's transition; one that lost a race is a 409.
func (d *Desk) apply(ctx context.Context, r Request, t Transition) (Request, error) {
	updated, err := d.store.Apply(ctx, r, t, d.now())
	if errors.Is(err, apperr.ErrConflict) {
		return Request{}, apperr.Conflict(apperr.CodeConflict, "request %s was changed by another action; fetch it again", r.ID)
	}
	return updated, err
}

// load returns the actor's company's request; another company's answers as not found.
func (d *Desk) load(ctx context.Context, a Actor, id string) (Request, error) {
	if id == "" {
		return Request{}, apperr.Missing("requestId")
	}
	r, err := d.store.Request(ctx, a.CompanyID, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return r, apperr.NotFound("requestId", id)
	}
	return r, err
}

func notPending(r Request) error {
	return apperr.Conflict(apperr.CodeConflict, "request %s is %s and no longer pending", r.ID, r.Status)
}
