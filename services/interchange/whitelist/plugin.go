package whitelist

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/whitelist/store"
	"github.com/zcustody/suite/services/internal/directory"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Executions runs an execution once per request id (plugin.Ledger).
type Executions interface {
	Once(ctx context.Context, requestID string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error)
}

// Plugin implements pluginv1.PluginServiceServer for interchange's catalog services:
// 0x0007-007 (whitelist an address) and 0x0007-008 (deactivate a whitelisted address). Every
// other service of interchange is served before it (app.Wired.Plugin) or not available.
type Plugin struct {
	pluginv1.UnimplementedPluginServiceServer
	store     *store.Store
	directory *directory.Client
	runs      Executions
	now       func() time.Time
}

var _ pluginv1.PluginServiceServer = (*Plugin)(nil)

// Validate checks a request's payload and its references (VASP, beneficiary, uniqueness)
// and reserves the whitelisted address id. It writes nothing.
func (p *Plugin) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	r, err := checkRequest(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	switch r.GetServiceId() {
	case address.ServiceWhitelist:
		return p.validateWhitelist(ctx, r)
	case address.ServiceDeactivate:
		return p.validateDeactivate(ctx, r)
	}
	return nil, plugin.NotAvailable(r.GetServiceId())
}

// validateWhitelist checks the payload, that the address is not ACTIVE already, and the VASP
// and beneficiary with compliance; it reserves a fresh id.
func (p *Plugin) validateWhitelist(ctx context.Context, r *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	w, err := address.ParseWhitelist(r.GetPayload().AsMap())
	if err != nil {
		return nil, err
	}
	if err := p.notWhitelisted(ctx, r.GetCompanyId(), w.Blockchain, w.Address); err != nil {
		return nil, err
	}
	checked, err := p.check(ctx, r.GetCompanyId(), w)
	if err != nil {
		return nil, err
	}
	planned := w.NewWhitelisted(address.NewID(), r.GetCompanyId(), r.GetMakerEmail(), r.GetRequestId(), checked, p.now())
	planned.Status = "" // not whitelisted until executed
	return validated(planned.ID, planned.Details())
}

// validateDeactivate reserves the id of the company's ACTIVE address the payload names.
func (p *Plugin) validateDeactivate(ctx context.Context, r *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	d, err := address.ParseDeactivate(r.GetPayload().AsMap())
	if err != nil {
		return nil, err
	}
	w, err := p.store.ActiveWhitelisted(ctx, r.GetCompanyId(), d.Blockchain, d.Address)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("address", d.Address)
	}
	if err != nil {
		return nil, err
	}
	return validated(w.ID, w.Details())
}

// Execute carries out an authorised request, once per request id.
func (p *Plugin) Execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	r, err := checkRequest(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	if r.GetRequestId() == "" {
		return nil, apperr.Missing("requestId")
	}
	var run func(context.Context) (*pluginv1.ExecuteResponse, error)
	switch r.GetServiceId() {
	case address.ServiceWhitelist:
		w, id, err := parseWithID(r, req.GetEntityIds(), address.ParseWhitelist)
		if err != nil {
			return nil, err
		}
		run = func(ctx context.Context) (*pluginv1.ExecuteResponse, error) { return p.whitelist(ctx, r, w, id) }
	case address.ServiceDeactivate:
		d, id, err := parseWithID(r, req.GetEntityIds(), address.ParseDeactivate)
		if err != nil {
			return nil, err
		}
		run = func(ctx context.Context) (*pluginv1.ExecuteResponse, error) { return p.deactivate(ctx, r, d, id) }
	default:
		return nil, plugin.NotAvailable(r.GetServiceId())
	}
	return p.runs.Once(ctx, r.GetRequestId(), run)
}

func checkRequest(ctx context.Context, r *pluginv1.ServiceRequest) (*pluginv1.ServiceRequest, error) {
	if err := plugin.RequireServicedesk(ctx); err != nil {
		return nil, err
	}
	if r.GetCompanyId() == "" {
		return nil, apperr.Missing("companyId")
	}
	return r, nil
}

// parseWithID parses the payload and the one reserved whitelisted address id.
func parseWithID[T any](r *pluginv1.ServiceRequest, entityIDs []string, parse func(map[string]any) (T, error)) (T, string, error) {
	v, err := parse(r.GetPayload().AsMap())
	if err != nil {
		return v, "", err
	}
	if len(entityIDs) == 0 {
		return v, "", apperr.Missing("entityIds")
	}
	if len(entityIDs) != 1 || !address.IsID(entityIDs[0]) {
		return v, "", apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds must hold one whitelisted address id (a UUID)")
	}
	return v, entityIDs[0], nil
}

// notWhitelisted refuses an address the company already holds ACTIVE on the blockchain.
func (p *Plugin) notWhitelisted(ctx context.Context, companyID, blockchain, addr string) error {
	_, err := p.store.ActiveWhitelisted(ctx, companyID, blockchain, addr)
	switch {
	case err == nil:
		return address.AlreadyWhitelisted(blockchain, addr)
	case errors.Is(err, apperr.ErrNotFound):
		return nil
	}
	return err
}

// check asks compliance about the VASP and, when given, the beneficiary.
func (p *Plugin) check(ctx context.Context, companyID string, w address.Whitelist) (address.Checked, error) {
	var c address.Checked
	var err error
	if c.VaspName, err = p.directory.Vasp(ctx, companyID, w.VaspID); err != nil {
		return c, err
	}
	if w.BeneficiaryID != "" {
		c.BeneficiaryName, err = p.directory.Beneficiary(ctx, "beneficiaryId", companyID, w.BeneficiaryID)
	}
	return c, err
}

func validated(entityID string, details map[string]any) (*pluginv1.ValidateResponse, error) {
	s, err := structpb.NewStruct(details)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{entityID}, Details: []*structpb.Struct{s}}, nil
}

func executed(entityID string, details map[string]any) (*pluginv1.ExecuteResponse, error) {
	s, err := structpb.NewStruct(details)
	if err != nil {
		return nil, err
	}
	return &pluginv1.ExecuteResponse{EntityIds: []string{entityID}, Details: []*structpb.Struct{s}}, nil
}
