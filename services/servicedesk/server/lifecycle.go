package server

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/servicedesk"
)

// GetPendingRequest returns the object the caller signs to act on a pending request.
func (s *Server) GetPendingRequest(ctx context.Context, req *servicedeskv1.GetPendingRequestRequest) (*servicedeskv1.GetPendingRequestResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	view, r, err := s.desk.Pending(ctx, actor(p), req.GetRequestId())
	if err != nil {
		return nil, err
	}
	obj, err := structpb.NewStruct(jsonRoundTrip(view))
	if err != nil {
		return nil, fmt.Errorf("pending view: %w", err)
	}
	q := quorumOf(r.PolicyVersion, r.DecidingRule(), r.Tally())
	for _, a := range r.Approvers() {
		q.Approvers = append(q.Approvers, a.Email)
	}
	return &servicedeskv1.GetPendingRequestResponse{Request: obj, Signature: servicedesk.SignaturePlaceholder, Quorum: q}, nil
}

// ApproveRequest serves the maker's confirmation and the checker's approval or rejection
// (servicedesk.Desk.Approve).
func (s *Server) ApproveRequest(ctx context.Context, req *servicedeskv1.ApproveRequestRequest) (*servicedeskv1.ApproveRequestResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	ap := servicedesk.Approval{RequestID: req.GetRequestId(), Signature: req.GetSignature()}
	if req.GetRequest() != nil {
		if ap.Signed, err = protojson.Marshal(req.GetRequest()); err != nil {
			return nil, fmt.Errorf("encode request object: %w", err)
		}
	}
	updated, err := s.desk.Approve(ctx, actor(p), ap)
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.ApproveRequestResponse{RequestId: updated.ID, Status: updated.Status}, nil
}

// CancelRequest lets the maker withdraw a request that is not yet authorised.
func (s *Server) CancelRequest(ctx context.Context, req *servicedeskv1.CancelRequestRequest) (*servicedeskv1.CancelRequestResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	updated, err := s.desk.Cancel(ctx, actor(p), req.GetRequestId())
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.CancelRequestResponse{RequestId: updated.ID, Status: updated.Status}, nil
}
