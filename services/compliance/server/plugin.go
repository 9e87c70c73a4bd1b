package server

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Beneficiaries is what the plugin needs from the store.
type Beneficiaries interface {
	BeneficiaryReader
	InsertBeneficiary(ctx context.Context, b compliance.Beneficiary) error
	ChangeBeneficiary(ctx context.Context, before, after compliance.Beneficiary, requestID string) (compliance.Beneficiary, error)
}

// Executions runs an execution once per request id (plugin.Ledger).
type Executions interface {
	Once(ctx context.Context, requestID string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error)
}

// requestTypes are the request types of the services compliance carries out.
var requestTypes = map[string]string{
	compliance.ServiceCreateBeneficiary:     "CREATE",
	compliance.ServiceUpdateBeneficiary:     "UPDATE",
	compliance.ServiceDeactivateBeneficiary: "DEACTIVATE",
}

// Plugin implements pluginv1.PluginServiceServer for the beneficiary services.
type Plugin struct {
	pluginv1.UnimplementedPluginServiceServer
	beneficiaries Beneficiaries
	runs          Executions
	now           func() time.Time
}

var _ pluginv1.PluginServiceServer = (*Plugin)(nil)

// NewPlugin returns the plugin server.
func NewPlugin(beneficiaries Beneficiaries, runs Executions) *Plugin {
	return &Plugin{beneficiaries: beneficiaries, runs: runs, now: time.Now}
}

// Validate checks a request at create time and reserves the id of the beneficiary it creates
// or names the one it changes; it writes nothing.
func (p *Plugin) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	sr, err := checkRequest(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	switch sr.GetServiceId() {
	case compliance.ServiceCreateBeneficiary:
		return validateCreate(sr)
	case compliance.ServiceUpdateBeneficiary:
		return p.validateUpdate(ctx, sr)
	default: // deactivate: checkRequest let only compliance's services through
		return p.validateDeactivate(ctx, sr)
	}
}

// Execute carries out an authorised request, once per request id: a repeat returns the first
// run's response and changes nothing.
func (p *Plugin) Execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	sr, err := checkRequest(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	if sr.GetRequestId() == "" {
		return nil, apperr.Missing("requestId")
	}
	return p.runs.Once(ctx, sr.GetRequestId(), func(ctx context.Context) (*pluginv1.ExecuteResponse, error) {
		switch sr.GetServiceId() {
		case compliance.ServiceCreateBeneficiary:
			return p.executeCreate(ctx, sr, req.GetEntityIds())
		case compliance.ServiceUpdateBeneficiary:
			return p.executeUpdate(ctx, sr, req.GetEntityIds())
		default:
			return p.executeDeactivate(ctx, sr, req.GetEntityIds())
		}
	})
}

// checkRequest refuses callers other than the service desk, services compliance does not
// carry out, and requests without their company, maker or matching request type.
func checkRequest(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ServiceRequest, error) {
	if err := plugin.RequireServicedesk(ctx); err != nil {
		return nil, err
	}
	if sr == nil {
		return nil, apperr.Missing("request")
	}
	wantType, ok := requestTypes[sr.GetServiceId()]
	if !ok {
		return nil, plugin.NotAvailable(sr.GetServiceId())
	}
	switch {
	case sr.GetRequestType() != "" && sr.GetRequestType() != wantType:
		return nil, apperr.Invalid(apperr.CodeFormat, "requestType", "service %s is a %s request, not %s", sr.GetServiceId(), wantType, sr.GetRequestType())
	case sr.GetCompanyId() == "":
		return nil, apperr.Missing("companyId")
	case sr.GetMakerEmail() == "":
		return nil, apperr.Missing("makerEmail")
	}
	return sr, nil
}

// payloadOf returns the payload as plain Go values (an absent payload is empty).
func payloadOf(sr *pluginv1.ServiceRequest) map[string]any {
	if sr.GetPayload() == nil {
		return map[string]any{}
	}
	return sr.GetPayload().AsMap()
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
