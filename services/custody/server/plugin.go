package server

import (
	"context"
	"time"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Wallets is what the plugin needs from the store.
type Wallets interface {
	Wallet(ctx context.Context, companyID, id string) (custody.Wallet, error)
	InsertWallet(ctx context.Context, w custody.Wallet) error
	Rename(ctx context.Context, companyID, id string, version int64, requestID, name string) (custody.Wallet, error)
	Deactivate(ctx context.Context, companyID, id string, version int64, requestID string) (custody.Wallet, error)
}

// Executions runs an execution once per request id (plugin.Ledger).
type Executions interface {
	Once(ctx context.Context, requestID string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error)
}

// requestTypes are the request types of the services custody carries out.
var requestTypes = map[string]string{
	custody.ServiceCreateWallet:     "CREATE",
	custody.ServiceRenameWallet:     "UPDATE",
	custody.ServiceDeactivateWallet: "DEACTIVATE",
}

// Plugin implements pluginv1.PluginServiceServer for the custody wallet services.
type Plugin struct {
	pluginv1.UnimplementedPluginServiceServer
	wallets Wallets
	runs    Executions
	now     func() time.Time
}

var _ pluginv1.PluginServiceServer = (*Plugin)(nil)

// NewPlugin returns the plugin server.
func NewPlugin(wallets Wallets, runs Executions) *Plugin {
	return &Plugin{wallets: wallets, runs: runs, now: time.Now}
}

// Validate checks a request at create time and reserves the ids of the wallets it will
// create; it writes nothing.
func (p *Plugin) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	sr, err := checkRequest(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	switch sr.GetServiceId() {
	case custody.ServiceCreateWallet:
		return validateCreate(sr)
	case custody.ServiceRenameWallet:
		return p.validateRename(ctx, sr)
	default: // deactivate: checkRequest let only custody's services through
		return p.validateDeactivate(ctx, sr)
	}
}

// Execute carries out an authorised request, once per request id: a repeat returns the
// first run's response and changes nothing.
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
		case custody.ServiceCreateWallet:
			return p.executeCreate(ctx, sr, req.GetEntityIds())
		case custody.ServiceRenameWallet:
			return p.executeRename(ctx, sr, req.GetEntityIds())
		default:
			return p.executeDeactivate(ctx, sr, req.GetEntityIds())
		}
	})
}

// checkRequest refuses callers other than the service desk, services custody does not
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
