package server

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/servicedesk"
)

// GetPendingRequest returns the object the caller signs to act on a pending request.
func (s *Server) GetPendingRequest(ctx context.Context, req *servicedeskv1.GetPendingRequestRequest) (*servicedeskv1.GetPendingRequestResponse, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.load(ctx, p, req.GetRequestId())
	if err != nil {
		return nil, err
	}
	if !servicedesk.Pending(r.Status) {
		return nil, notPending(r)
	}
	view, err := servicedesk.PendingView(r)
	if err != nil {
		return nil, err
	}
	obj, err := structpb.NewStruct(jsonRoundTrip(view))
	if err != nil {
		return nil, fmt.Errorf("pending view: %w", err)
	}
	return &servicedeskv1.GetPendingRequestResponse{Request: obj, Signature: servicedesk.SignaturePlaceholder}, nil
}

// ApproveRequest serves the maker's confirmation and the checker's approval or rejection.
func (s *Server) ApproveRequest(ctx context.Context, req *servicedeskv1.ApproveRequestRequest) (*servicedeskv1.ApproveRequestResponse, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.load(ctx, p, req.GetRequestId())
	if err != nil {
		return nil, err
	}
	decision, err := s.checkSigned(ctx, p, r, req)
	if err != nil {
		return nil, err
	}
	t, err := decide(p, r, decision)
	if err != nil {
		return nil, err
	}
	t.Signature = req.GetSignature() // kept in the audit trail with the version it authorised
	updated, err := s.store.Apply(ctx, r, t, s.now())
	if errors.Is(err, apperr.ErrConflict) {
		return nil, apperr.Conflict(apperr.CodeConflict, "request %s was changed by another action; fetch it again", r.ID)
	}
	if err != nil {
		return nil, err
	}
	if updated.Status == servicedesk.StatusAuthorised {
		updated = s.executor.Run(ctx, updated)
	}
	return &servicedeskv1.ApproveRequestResponse{RequestId: updated.ID, Status: updated.Status}, nil
}

// checkSigned verifies that the signed object is the request's current pending view and that
// the acting user signed it with their registered key.
func (s *Server) checkSigned(ctx context.Context, p principal.Principal, r servicedesk.Request, req *servicedeskv1.ApproveRequestRequest) (servicedesk.Decision, error) {
	if req.GetRequest() == nil {
		return servicedesk.Decision{}, apperr.Missing("request")
	}
	if req.GetSignature() == "" || req.GetSignature() == servicedesk.SignaturePlaceholder {
		return servicedesk.Decision{}, apperr.Missing("signature")
	}
	if !servicedesk.Pending(r.Status) {
		return servicedesk.Decision{}, notPending(r)
	}
	signed, err := protojson.Marshal(req.GetRequest())
	if err != nil {
		return servicedesk.Decision{}, fmt.Errorf("encode request object: %w", err)
	}
	decision, same, err := servicedesk.MatchPending(r, signed)
	if err != nil {
		return decision, err
	}
	if !same {
		return decision, apperr.Conflict(apperr.CodeConflict, "the request object does not match request %s as it stands; fetch it again with pending", r.ID)
	}
	user, err := s.store.User(ctx, p.CompanyID, p.UserEmail)
	if err != nil {
		return decision, err
	}
	if err := signing.VerifyApproval(user.PublicKey, signed, req.GetSignature()); err != nil {
		return decision, &apperr.Error{Status: codes.PermissionDenied, Code: apperr.CodeForbidden, Field: "signature",
			Message: "the approval signature does not verify with the acting user's registered key"}
	}
	return decision, nil
}

// decide turns a verified decision into a transition, enforcing the roles and four eyes.
func decide(p principal.Principal, r servicedesk.Request, d servicedesk.Decision) (servicedesk.Transition, error) {
	if r.Status == servicedesk.StatusPendingConfirmation {
		if d.Type != servicedesk.TypeConfirm {
			return servicedesk.Transition{}, apperr.Invalid(apperr.CodeFormat, "request.type", "a request pending confirmation takes type Confirm")
		}
		if p.UserEmail != r.CreatedBy || !p.HasRole(principal.RoleMaker) {
			return servicedesk.Transition{}, apperr.Forbidden("only the maker who created request %s can confirm it", r.ID)
		}
		to := servicedesk.StatusPendingAuthorisation
		if !r.NeedsChecker {
			to = servicedesk.StatusAuthorised
		}
		return servicedesk.Transition{From: []string{r.Status}, To: to, Action: servicedesk.ActionConfirmed,
			Role: servicedesk.RoleMaker, Actor: p.UserEmail, Updated: p.UserEmail}, nil
	}
	if !p.HasRole(principal.RoleChecker) {
		return servicedesk.Transition{}, apperr.Forbidden("only a CHECKER can authorise request %s", r.ID)
	}
	if p.UserEmail == r.CreatedBy {
		return servicedesk.Transition{}, apperr.Forbidden("four-eyes rule: the maker of request %s cannot authorise it", r.ID)
	}
	t := servicedesk.Transition{From: []string{r.Status}, Role: servicedesk.RoleChecker, Actor: p.UserEmail, Updated: p.UserEmail}
	switch d.Type {
	case servicedesk.TypeApprove:
		t.To, t.Action = servicedesk.StatusAuthorised, servicedesk.ActionApproved
	case servicedesk.TypeReject:
		if d.RejectReason == "" {
			return t, apperr.Missing("request.rejectReason")
		}
		t.To, t.Action, t.Reason = servicedesk.StatusRejected, servicedesk.ActionRejected, d.RejectReason
	default:
		return t, apperr.Invalid(apperr.CodeFormat, "request.type", "type must be Approve or Reject")
	}
	return t, nil
}

// CancelRequest lets the maker withdraw a request that is not yet authorised.
func (s *Server) CancelRequest(ctx context.Context, req *servicedeskv1.CancelRequestRequest) (*servicedeskv1.CancelRequestResponse, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.load(ctx, p, req.GetRequestId())
	if err != nil {
		return nil, err
	}
	if p.UserEmail != r.CreatedBy {
		return nil, apperr.Forbidden("only the maker who created request %s can cancel it", r.ID)
	}
	if !servicedesk.Pending(r.Status) {
		return nil, notPending(r)
	}
	t := servicedesk.Transition{From: []string{servicedesk.StatusPendingConfirmation, servicedesk.StatusPendingAuthorisation},
		To: servicedesk.StatusCancelled, Action: servicedesk.ActionCancelled, Role: servicedesk.RoleMaker, Actor: p.UserEmail, Updated: p.UserEmail}
	updated, err := s.store.Apply(ctx, r, t, s.now())
	if errors.Is(err, apperr.ErrConflict) {
		return nil, apperr.Conflict(apperr.CodeConflict, "request %s was changed by another action; fetch it again", r.ID)
	}
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.CancelRequestResponse{RequestId: updated.ID, Status: updated.Status}, nil
}

// load returns the caller's company's request; another company's answers as not found.
func (s *Server) load(ctx context.Context, p principal.Principal, id string) (servicedesk.Request, error) {
	if id == "" {
		return servicedesk.Request{}, apperr.Missing("requestId")
	}
	r, err := s.store.Request(ctx, p.CompanyID, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return r, apperr.NotFound("requestId", id)
	}
	return r, err
}

func notPending(r servicedesk.Request) error {
	return apperr.Conflict(apperr.CodeConflict, "request %s is %s and no longer pending", r.ID, r.Status)
}
