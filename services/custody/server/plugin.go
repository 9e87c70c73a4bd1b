package server

import (
	"context"
	"time"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
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

// Plugin carries out the custody wallet services of the service desk.
type Plugin struct {
	wallets Wallets
	now     func() time.Time
}

// NewPlugin returns the plugin server of the custody wallet services; runs records each
// execution (plugin.Ledger).
func NewPlugin(wallets Wallets, runs plugin.Executions) *plugin.Server {
	p := &Plugin{wallets: wallets, now: time.Now}
	return plugin.NewServer(runs, map[string]plugin.Handler{
		custody.ServiceCreateWallet: {RequestType: "CREATE", Execute: p.executeCreate,
			Validate: func(_ context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
				return validateCreate(sr)
			}},
		custody.ServiceRenameWallet:     {RequestType: "UPDATE", Validate: p.validateRename, Execute: p.executeRename},
		custody.ServiceDeactivateWallet: {RequestType: "DEACTIVATE", Validate: p.validateDeactivate, Execute: p.executeDeactivate},
	})
}
