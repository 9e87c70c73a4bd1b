// Package server is the compliance service's gRPC edge.
package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance"
)

// Registry is what the handlers need from the store.
type Registry interface {
	VASP(ctx context.Context, id string) (compliance.VASP, error)
	SetActivation(ctx context.Context, companyID, vaspID string, active bool, by string) (compliance.Activation, error)
	SearchVASPs(ctx context.Context, f compliance.VASPFilter) ([]compliance.VASP, int64, error)
	Activations(ctx context.Context, companyID string, vaspIDs []string) (map[string]compliance.Activation, error)
}

// Server implements compliancev1.ComplianceServiceServer.
type Server struct {
	compliancev1.UnimplementedComplianceServiceServer
	registry Registry
}

var _ compliancev1.ComplianceServiceServer = (*Server)(nil)

// New returns the server.
func New(registry Registry) *Server { return &Server{registry: registry} }

// SetVaspActivation serves endpoint 15: a company (itself, or its makers and checkers:
// Policy) switches a VASP on or off for itself.
func (s *Server) SetVaspActivation(ctx context.Context, req *compliancev1.SetVaspActivationRequest) (*compliancev1.SetVaspActivationResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	if req.GetVaspId() == "" {
		return nil, apperr.Missing("vasp-id")
	}
	valid, err := compliance.ParseValid(req.GetValid())
	if err != nil {
		return nil, err
	}
	vasp, err := visibleVASP(ctx, s.registry, p.CompanyID, req.GetVaspId(), "vasp-id")
	if err != nil {
		return nil, err
	}
	if valid && !vasp.Active {
		return nil, &apperr.Error{Status: codes.FailedPrecondition, Code: apperr.CodeDeactivated, Field: "vasp-id",
			Message: "VASP " + vasp.ID + " is deactivated by the operator and cannot be activated"}
	}
	by := p.UserEmail
	if by == "" {
		by = p.CompanyID
	}
	act, err := s.registry.SetActivation(ctx, p.CompanyID, vasp.ID, valid, by)
	if err != nil {
		return nil, err
	}
	return &compliancev1.SetVaspActivationResponse{VaspId: vasp.ID, VaspName: vasp.Name, Valid: act.Active,
		UpdatedAt: apitime.Format(act.UpdatedAt)}, nil
}

// visibleVASP returns the VASP if companyID may see it; an unknown VASP and one restricted to
// other companies both answer ER-102 on field, with the same message.
func visibleVASP(ctx context.Context, registry Registry, companyID, id, field string) (compliance.VASP, error) {
	vasp, err := registry.VASP(ctx, id)
	if errors.Is(err, apperr.ErrNotFound) || (err == nil && !vasp.VisibleTo(companyID)) {
		return compliance.VASP{}, apperr.NotFound(field, id)
	}
	return vasp, err
}
