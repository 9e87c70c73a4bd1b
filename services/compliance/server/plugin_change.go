package server

import (
	"context"
	"errors"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/plugin"
)

// maxAttempts bounds how often a change re-reads a beneficiary that moved under it.
const maxAttempts = 3

// changeFunc returns a beneficiary as a request leaves it.
type changeFunc func(compliance.Beneficiary) compliance.Beneficiary

func (p *Plugin) validateUpdate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	u, err := compliance.ParseUpdate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.validateChange(ctx, sr, u.ID, u.Apply)
}

func (p *Plugin) validateDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	id, err := compliance.ParseDeactivate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.validateChange(ctx, sr, id, compliance.Deactivate)
}

// validateChange checks that the company's beneficiary may be changed now and describes it
// as the request would leave it.
func (p *Plugin) validateChange(ctx context.Context, sr *pluginv1.ServiceRequest, id string, apply changeFunc) (*pluginv1.ValidateResponse, error) {
	b, err := p.beneficiary(ctx, sr.GetCompanyId(), id)
	if err != nil {
		return nil, err
	}
	if err := compliance.CheckChangeable(b); err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{id}, Details: []*structpb.Struct{beneficiaryDetail(apply(b), true)}}, nil
}

func (p *Plugin) executeUpdate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	u, err := compliance.ParseUpdate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.change(ctx, sr, u.ID, entityIDs, u.Apply)
}

func (p *Plugin) executeDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	id, err := compliance.ParseDeactivate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.change(ctx, sr, id, entityIDs, compliance.Deactivate)
}

// change re-checks the beneficiary and applies apply in one conditional update guarded by
// the status and version just read. A beneficiary last changed by this very request (a
// racing or repeated run) answers as changed; one that moved meanwhile is read again.
func (p *Plugin) change(ctx context.Context, sr *pluginv1.ServiceRequest, id string, entityIDs []string, apply changeFunc) (*pluginv1.ExecuteResponse, error) {
	if len(entityIDs) > 0 && !slices.Equal(entityIDs, []string{id}) {
		return nil, apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds %v do not name beneficiary %s", entityIDs, id)
	}
	for range maxAttempts {
		b, err := p.beneficiary(ctx, sr.GetCompanyId(), id)
		if err != nil {
			return nil, err
		}
		if b.LastRequestID != sr.GetRequestId() {
			if err := compliance.CheckChangeable(b); err != nil {
				return nil, err
			}
			b, err = p.beneficiaries.ChangeBeneficiary(ctx, b, apply(b), sr.GetRequestId())
		}
		if errors.Is(err, apperr.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &pluginv1.ExecuteResponse{EntityIds: []string{b.ID}, Details: []*structpb.Struct{beneficiaryDetail(b, true)}}, nil
	}
	return nil, apperr.Conflict(apperr.CodeConflict, "beneficiary %s keeps changing concurrently; retry", id)
}

// beneficiary returns the company's beneficiary; unknown and other companies' beneficiaries
// answer ER-102.
func (p *Plugin) beneficiary(ctx context.Context, companyID, id string) (compliance.Beneficiary, error) {
	b, err := p.beneficiaries.Beneficiary(ctx, companyID, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return compliance.Beneficiary{}, apperr.NotFound("beneficiaryId", id)
	}
	return b, err
}
