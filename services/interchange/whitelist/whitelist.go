// Package whitelist is interchange's address side: whitelisted addresses (endpoint 9, and the
// service desk's 0x0007-007/008 through the plugin API) and generated settlement wallet
// addresses (endpoint 8). The domain lives in package address, the collections in package
// store; this package is the gRPC edge and the wiring.
package whitelist

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/whitelist/store"
	"github.com/zcustody/suite/services/internal/directory"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Deps is what the address side needs.
type Deps struct {
	DB *mongo.Database
	// Compliance checks VASPs and beneficiaries; calls carry Signer's system principal.
	Compliance compliancev1.DirectoryServiceClient
	Signer     *principal.Signer
	Logger     *slog.Logger
}

// Service serves the address side of interchange.
type Service struct {
	store  *store.Store
	plugin *Plugin
}

// System is interchange's system name on its calls to other services.
const System = "interchange"

// Setup creates the indexes and returns the service.
func Setup(ctx context.Context, deps Deps) (*Service, error) {
	if deps.DB == nil || deps.Compliance == nil || deps.Signer == nil {
		return nil, errors.New("whitelist: the database, the compliance client and the signer are required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return nil, err
	}
	dir := directory.New(deps.Compliance, deps.Signer, System, deps.Logger)
	p := &Plugin{store: st, directory: dir, runs: plugin.NewLedger(deps.DB), now: time.Now}
	return &Service{store: st, plugin: p}, nil
}

// Plugin returns the plugin server of interchange's catalog services.
func (s *Service) Plugin() pluginv1.PluginServiceServer { return s.plugin }

// EnsureSettlementAddress returns the company's settlement address for currencyID at venueID,
// generating and signing it with the operator key on first use (one per company, venue and
// currency id, whoever asks first). owner.ID is the company; owner is named on the record.
// The indexes must exist (Setup or store.EnsureIndexes).
func EnsureSettlementAddress(ctx context.Context, db *mongo.Database, owner address.Party, venueID, currencyID string, key ed25519.PrivateKey) (address.Settlement, error) {
	st := store.New(db)
	found, err := st.Settlement(ctx, owner.ID, venueID, currencyID)
	if !errors.Is(err, apperr.ErrNotFound) {
		return found, err
	}
	a, err := address.NewSettlement(owner, venueID, currencyID, key, time.Now())
	if err != nil {
		return address.Settlement{}, err
	}
	return st.InsertSettlement(ctx, a)
}

// companyOf returns the caller's company; every query is scoped to it.
func companyOf(ctx context.Context) (string, error) {
	p, ok := principal.FromContext(ctx)
	if !ok || p.CompanyID == "" {
		return "", apperr.Forbidden("this operation needs a company caller")
	}
	return p.CompanyID, nil
}
