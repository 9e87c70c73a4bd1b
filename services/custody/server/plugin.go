package server

import (
	"context"
	"time"

	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/internal/reversal"
)

// Wallets is what the plugin needs from the store.
type Wallets interface {
	Wallet(ctx context.Context, companyID, id string) (custody.Wallet, error)
	InsertWallet(ctx context.Context, w custody.Wallet) error
	Rename(ctx context.Context, companyID, id string, version int64, requestID, name string) (custody.Wallet, error)
	Deactivate(ctx context.Context, companyID, id string, version int64, requestID string) (custody.Wallet, error)
	// Journal is custody's journal: the ledger reversals of its entries (0x0009-001).
	Journal() *journal.Journal
}

// Owners checks the beneficiary a wallet names as its owner (directory.Client).
type Owners interface {
	// Beneficiary returns the name of the company's active beneficiary: unknown or another
	// company's is 404 ER-102, deactivated 409 ER-113, each on field.
	Beneficiary(ctx context.Context, field, companyID, beneficiaryID string) (string, error)
}

// Plugin carries out the custody wallet services of the service desk.
type Plugin struct {
	wallets Wallets
	owners  Owners
	now     func() time.Time
}

// currencyIDPlaces tells the decimals of a custody account's currency id (btc-btc…).
func currencyIDPlaces(id string) (int32, bool) {
	c, ok := ledger.ByID(id)
	return c.Decimals, ok
}

// NewPlugin returns the plugin server of the custody wallet services (and of the ledger
// reversals of custody's journal, 0x0009-001 naming journal "custody"); owners checks the
// beneficiaries wallets name; runs records each execution (plugin.Ledger).
func NewPlugin(wallets Wallets, owners Owners, runs plugin.Executions) *plugin.Server {
	p := &Plugin{wallets: wallets, owners: owners, now: time.Now}
	return plugin.NewServer(runs, map[string]plugin.Handler{
		custody.ServiceCreateWallet:     {Validate: p.validateCreate, Execute: p.executeCreate},
		custody.ServiceRenameWallet:     {Validate: p.validateRename, Execute: p.executeRename},
		custody.ServiceDeactivateWallet: {Validate: p.validateDeactivate, Execute: p.executeDeactivate},
		catalog.LedgerReversal:          reversal.Handler("custody", wallets.Journal(), currencyIDPlaces),
	})
}
