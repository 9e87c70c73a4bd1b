package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/plugin"
)

// validateCreate checks a 0x0007-004 payload and reserves the beneficiary's id.
func validateCreate(sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	nb, err := compliance.ParseCreate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	id := compliance.NewBeneficiaryID(sr.GetCompanyId())
	b := compliance.Create(id, sr.GetCompanyId(), sr.GetMakerEmail(), sr.GetRequestId(), nb, time.Time{})
	return &pluginv1.ValidateResponse{EntityIds: []string{id}, Details: []*structpb.Struct{beneficiaryDetail(b, false)}}, nil
}

// executeCreate inserts the beneficiary under the id Validate reserved. A beneficiary of the
// company already stored under that id was inserted by an earlier run of this request (the
// id is random and reserved for it).
func (p *Plugin) executeCreate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	nb, err := compliance.ParseCreate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	id, err := reservedID(sr.GetCompanyId(), entityIDs)
	if err != nil {
		return nil, err
	}
	b := compliance.Create(id, sr.GetCompanyId(), sr.GetMakerEmail(), sr.GetRequestId(), nb, p.now().UTC())
	if b, err = p.insert(ctx, b); err != nil {
		return nil, err
	}
	return &pluginv1.ExecuteResponse{EntityIds: []string{id}, Details: []*structpb.Struct{beneficiaryDetail(b, true)}}, nil
}

// insert creates b and returns it as stored; an existing beneficiary of the company under the
// same reserved id counts as created (a repeat after a crash, or a racing run).
func (p *Plugin) insert(ctx context.Context, b compliance.Beneficiary) (compliance.Beneficiary, error) {
	err := p.beneficiaries.InsertBeneficiary(ctx, b)
	if !errors.Is(err, apperr.ErrExists) {
		return b, err
	}
	stored, err := p.beneficiaries.Beneficiary(ctx, b.CompanyID, b.ID)
	if errors.Is(err, apperr.ErrNotFound) {
		return b, apperr.Conflict(apperr.CodeExists, "beneficiary id %s is taken", b.ID)
	}
	return stored, err
}

// reservedID checks the entity ids the service desk passes: exactly one beneficiary id
// shaped as Validate reserves it for the company.
func reservedID(companyID string, entityIDs []string) (string, error) {
	switch len(entityIDs) {
	case 0:
		return "", apperr.Missing("entityIds")
	case 1:
		return entityIDs[0], compliance.CheckReservedID(entityIDs[0], companyID)
	}
	return "", apperr.Invalid(apperr.CodeLength, "entityIds", "entityIds holds %d ids for one beneficiary", len(entityIDs))
}
