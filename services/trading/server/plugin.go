package server

import (
	"context"
	"crypto/ed25519"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/internal/reversal"
	"github.com/zcustody/suite/services/trading"
)

// Writer is what the plugin needs from the store.
type Writer interface {
	Wallet(ctx context.Context, companyID, id string) (trading.Wallet, error)
	InsertWallet(ctx context.Context, w trading.Wallet) (trading.Wallet, error)
	Deactivate(ctx context.Context, w trading.Wallet, requestID string) (trading.Wallet, error)
	InsertAddress(ctx context.Context, a trading.VaultAddress) (trading.VaultAddress, error)
	WalletAddresses(ctx context.Context, walletID string) ([]trading.VaultAddress, error)
	// Journal is trading's journal: the ledger reversals of its entries (0x0009-001).
	Journal() *journal.Journal
}

// Plugin carries out the trading-wallet services of the service desk: 0x0003-001 (create)
// and 0x0003-002 (deactivate), and the ledger reversals of trading's journal (0x0009-001
// naming journal "trading", services/internal/reversal). Every other service, 0x0003-003
// included (it belongs to interchange), is not available here.
type Plugin struct {
	store     Writer
	key       ed25519.PrivateKey
	custodian trading.Party
	now       func() time.Time
}

// NewPlugin returns the plugin server of the trading-wallet services; key is the operator
// key that signs vault addresses; runs records each execution (plugin.Ledger).
func NewPlugin(store Writer, runs plugin.Executions, key ed25519.PrivateKey) *plugin.Server {
	p := &Plugin{store: store, key: key, custodian: trading.DefaultCustodian(), now: time.Now}
	return plugin.NewServer(runs, map[string]plugin.Handler{
		trading.ServiceCreateWallet:     {Validate: p.validateCreate, Execute: p.executeCreate},
		trading.ServiceDeactivateWallet: {Validate: p.validateDeactivate, Execute: p.executeDeactivate},
		catalog.LedgerReversal:          reversal.Handler("trading", store.Journal(), trading.CurrencyDecimals),
	})
}

// validateCreate checks a 0x0003-001 payload and reserves the wallet id. It writes nothing.
func (p *Plugin) validateCreate(_ context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	c, err := trading.ParseCreate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	id := trading.NewWalletID(sr.GetCompanyId())
	return validated(id, c.Details(id))
}

// validateDeactivate reserves the id of the company's active wallet the payload names.
func (p *Plugin) validateDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	w, err := p.activeWallet(ctx, sr)
	if err != nil {
		return nil, err
	}
	return validated(w.ID, map[string]any{"walletId": w.ID, "name": w.Name, "currency": w.Currency,
		"tradingVenueId": w.VenueID, "status": w.Status})
}

// executeCreate creates the wallet under the id Validate reserved.
func (p *Plugin) executeCreate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	c, err := trading.ParseCreate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	id, err := reservedID(sr.GetCompanyId(), entityIDs)
	if err != nil {
		return nil, err
	}
	return p.create(ctx, sr, c, id)
}

// executeDeactivate deactivates the wallet the payload names.
func (p *Plugin) executeDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest, _ []string) (*pluginv1.ExecuteResponse, error) {
	walletID, err := trading.ParseDeactivate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	return p.deactivate(ctx, sr.GetCompanyId(), walletID, sr.GetRequestId())
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
	walletID, err := trading.ParseDeactivate(plugin.Payload(r))
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
