package server

import (
	"context"
	"crypto/ed25519"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/trading"
)

// Writer is what the plugin needs from the store.
type Writer interface {
	Wallet(ctx context.Context, companyID, id string) (trading.Wallet, error)
	InsertWallet(ctx context.Context, w trading.Wallet) (trading.Wallet, error)
	Deactivate(ctx context.Context, w trading.Wallet, requestID string) (trading.Wallet, error)
	InsertAddress(ctx context.Context, a trading.VaultAddress) (trading.VaultAddress, error)
	WalletAddresses(ctx context.Context, walletID string) ([]trading.VaultAddress, error)
}

// Executions runs an execution once per request id (plugin.Ledger).
type Executions interface {
	Once(ctx context.Context, requestID string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error)
}

// Plugin implements pluginv1.PluginServiceServer for the trading-wallet services: 0x0003-001
// (create) and 0x0003-002 (deactivate). Every other service, 0x0003-003 included (it belongs
// to interchange), is not available here.
type Plugin struct {
	pluginv1.UnimplementedPluginServiceServer
	store     Writer
	runs      Executions
	key       ed25519.PrivateKey
	custodian trading.Party
	now       func() time.Time
}

var _ pluginv1.PluginServiceServer = (*Plugin)(nil)

// NewPlugin returns the plugin server; key is the operator key that signs vault addresses.
func NewPlugin(store Writer, runs Executions, key ed25519.PrivateKey) *Plugin {
	return &Plugin{store: store, runs: runs, key: key, custodian: trading.DefaultCustodian(), now: time.Now}
}

// Validate checks a request's payload and reserves the wallet id. It writes nothing.
func (p *Plugin) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	r, err := checkRequest(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	switch r.GetServiceId() {
	case trading.ServiceCreateWallet:
		c, err := trading.ParseCreate(r.GetPayload().AsMap())
		if err != nil {
			return nil, err
		}
		id := trading.NewWalletID(r.GetCompanyId())
		return validated(id, c.Details(id))
	case trading.ServiceDeactivateWallet:
		w, err := p.activeWallet(ctx, r)
		if err != nil {
			return nil, err
		}
		return validated(w.ID, map[string]any{"walletId": w.ID, "name": w.Name, "currency": w.Currency,
			"tradingVenueId": w.VenueID, "status": w.Status})
	}
	return nil, plugin.NotAvailable(r.GetServiceId())
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
	switch r.GetServiceId() {
	case trading.ServiceCreateWallet:
		c, err := trading.ParseCreate(r.GetPayload().AsMap())
		if err != nil {
			return nil, err
		}
		id, err := reservedID(r.GetCompanyId(), req.GetEntityIds())
		if err != nil {
			return nil, err
		}
		return p.runs.Once(ctx, r.GetRequestId(), func(ctx context.Context) (*pluginv1.ExecuteResponse, error) {
			return p.create(ctx, r, c, id)
		})
	case trading.ServiceDeactivateWallet:
		walletID, err := trading.ParseDeactivate(r.GetPayload().AsMap())
		if err != nil {
			return nil, err
		}
		return p.runs.Once(ctx, r.GetRequestId(), func(ctx context.Context) (*pluginv1.ExecuteResponse, error) {
			return p.deactivate(ctx, r.GetCompanyId(), walletID, r.GetRequestId())
		})
	}
	return nil, plugin.NotAvailable(r.GetServiceId())
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

func reservedID(companyID string, entityIDs []string) (string, error) {
	if len(entityIDs) == 0 {
		return "", apperr.Missing("entityIds")
	}
	if len(entityIDs) != 1 || !trading.IsWalletIDOf(companyID, entityIDs[0]) {
		return "", apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds must hold one wallet id %s-TW-<10>", companyID)
	}
	return entityIDs[0], nil
}

// activeWallet reads the deactivation payload's wallet: the company's, and active.
func (p *Plugin) activeWallet(ctx context.Context, r *pluginv1.ServiceRequest) (trading.Wallet, error) {
	walletID, err := trading.ParseDeactivate(r.GetPayload().AsMap())
	if err != nil {
		return trading.Wallet{}, err
	}
	w, err := p.store.Wallet(ctx, r.GetCompanyId(), walletID)
	if errors.Is(err, apperr.ErrNotFound) {
		return trading.Wallet{}, apperr.NotFound("walletId", walletID)
	}
	if err != nil {
		return trading.Wallet{}, err
	}
	return w, w.CheckActive()
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
