package server

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance"
)

// BeneficiaryReader reads a company's beneficiary.
type BeneficiaryReader interface {
	Beneficiary(ctx context.Context, companyID, id string) (compliance.Beneficiary, error)
}

// Directory implements compliancev1.DirectoryServiceServer: compliance's internal checks for
// the other services (interchange whitelisting, the settlement engine, custody). Any internal
// system the services trust may ask (Policy): the answers only tell whether an entity a
// company names exists and is active. Users and companies never reach this API.
type Directory struct {
	compliancev1.UnimplementedDirectoryServiceServer
	registry      Registry
	beneficiaries BeneficiaryReader
}

var _ compliancev1.DirectoryServiceServer = (*Directory)(nil)

// NewDirectory returns the directory server.
func NewDirectory(registry Registry, beneficiaries BeneficiaryReader) *Directory {
	return &Directory{registry: registry, beneficiaries: beneficiaries}
}

// CheckVasp answers whether a VASP exists for a company and is active for it (the operator's
// switch and the company's activation, active by default). An unknown VASP and one
// restricted to other companies are both ER-102.
func (d *Directory) CheckVasp(ctx context.Context, req *compliancev1.CheckVaspRequest) (*compliancev1.CheckVaspResponse, error) {
	if err := requireFields(req.GetCompanyId(), "companyId", req.GetVaspId(), "vaspId"); err != nil {
		return nil, err
	}
	vasp, err := visibleVASP(ctx, d.registry, req.GetCompanyId(), req.GetVaspId(), "vaspId")
	if err != nil {
		return nil, err
	}
	acts, err := d.registry.Activations(ctx, req.GetCompanyId(), []string{vasp.ID})
	if err != nil {
		return nil, err
	}
	var act *compliance.Activation
	if a, ok := acts[vasp.ID]; ok {
		act = &a
	}
	return &compliancev1.CheckVaspResponse{VaspId: vasp.ID, VaspName: vasp.Name, Active: vasp.ActiveFor(act)}, nil
}

// CheckBeneficiary answers whether a company's beneficiary exists and is active. An unknown
// beneficiary and another company's are both ER-102.
func (d *Directory) CheckBeneficiary(ctx context.Context, req *compliancev1.CheckBeneficiaryRequest) (*compliancev1.CheckBeneficiaryResponse, error) {
	if err := requireFields(req.GetCompanyId(), "companyId", req.GetBeneficiaryId(), "beneficiaryId"); err != nil {
		return nil, err
	}
	b, err := d.beneficiaries.Beneficiary(ctx, req.GetCompanyId(), req.GetBeneficiaryId())
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("beneficiaryId", req.GetBeneficiaryId())
	}
	if err != nil {
		return nil, err
	}
	return &compliancev1.CheckBeneficiaryResponse{BeneficiaryId: b.ID, BeneficiaryName: b.Name,
		Active: b.Status == compliance.StatusActive}, nil
}

// requireFields checks mandatory request fields given as value, name pairs, in order.
func requireFields(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] == "" {
			return apperr.Missing(pairs[i+1])
		}
	}
	return nil
}
