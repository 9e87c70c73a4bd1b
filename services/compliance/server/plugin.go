package server

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Beneficiaries is what the plugin needs from the store.
type Beneficiaries interface {
	BeneficiaryReader
	InsertBeneficiary(ctx context.Context, b compliance.Beneficiary) error
	ChangeBeneficiary(ctx context.Context, before, after compliance.Beneficiary, requestID string) (compliance.Beneficiary, error)
}

// Plugin carries out the beneficiary services of the service desk.
type Plugin struct {
	beneficiaries Beneficiaries
	now           func() time.Time
}

// NewPlugin returns the plugin server of the beneficiary services; runs records each
// execution (plugin.Ledger).
func NewPlugin(beneficiaries Beneficiaries, runs plugin.Executions) *plugin.Server {
	p := &Plugin{beneficiaries: beneficiaries, now: time.Now}
	return plugin.NewServer(runs, map[string]plugin.Handler{
		compliance.ServiceCreateBeneficiary: {Execute: p.executeCreate,
			Validate: func(_ context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
				return validateCreate(sr)
			}},
		compliance.ServiceUpdateBeneficiary:     {Validate: p.validateUpdate, Execute: p.executeUpdate},
		compliance.ServiceDeactivateBeneficiary: {Validate: p.validateDeactivate, Execute: p.executeDeactivate},
	})
}

// beneficiaryDetail describes a beneficiary (pluginDetail.details): the payload's fields as
// stored, its id and legal name, and its status once it exists.
func beneficiaryDetail(b compliance.Beneficiary, withStatus bool) *structpb.Struct {
	fields := map[string]*structpb.Value{
		"beneficiaryId":     structpb.NewStringValue(b.ID),
		"entityType":        structpb.NewStringValue(b.EntityType),
		"beneficiaryName":   structpb.NewStringValue(b.Name),
		"legalName":         structpb.NewStringValue(b.LegalName),
		"registeredAddress": addressValue(b.RegisteredAddress),
	}
	if b.OperatingAddress != nil {
		fields["operatingAddress"] = addressValue(*b.OperatingAddress)
	}
	if withStatus {
		fields["status"] = structpb.NewStringValue(b.Status)
	}
	return &structpb.Struct{Fields: fields}
}

func addressValue(a compliance.Address) *structpb.Value {
	return structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"line1":   structpb.NewStringValue(a.Line1),
		"city":    structpb.NewStringValue(a.City),
		"country": structpb.NewStringValue(a.Country),
	}})
}
