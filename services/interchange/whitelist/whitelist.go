// Package whitelist wires interchange's address side: whitelisted addresses (endpoint 9, and
// the service desk's 0x0007-007/008 through the plugin API) and generated settlement wallet
// addresses (endpoint 8). The domain lives in package address (plain Go: the address, its
// state machine, the payloads and the Book that keeps them), the collections in package
// store, the gRPC edge and the plugin handlers in package server.
package whitelist

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/whitelist/server"
	"github.com/zcustody/suite/services/interchange/whitelist/store"
	"github.com/zcustody/suite/services/internal/catalog"
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
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Service serves the address side of interchange: endpoints 8 and 9 (the embedded server)
// and its plugin handlers.
type Service struct {
	*server.Server
	handlers map[string]plugin.Handler
	db       *mongo.Database
}

// System is interchange's system name on its calls to other services.
const System = catalog.Interchange

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
	book := address.NewBook(st, directory.New(deps.Compliance, deps.Signer, System, deps.Logger), deps.Now)
	return &Service{Server: server.New(book), handlers: server.Handlers(book), db: deps.DB}, nil
}

// Handlers returns the plugin handlers of the address side's catalog services, for
// interchange's one plugin server.
func (s *Service) Handlers() map[string]plugin.Handler { return s.handlers }

// Plugin returns a plugin server of the address side's services alone.
func (s *Service) Plugin() pluginv1.PluginServiceServer {
	return plugin.NewServer(plugin.NewLedger(s.db), s.handlers)
}

// EnsureSettlementAddress returns the company's settlement address for currencyID at venueID,
// generating and signing it with the operator key on first use (address.Book.EnsureSettlement).
// owner.ID is the company; owner is named on the record. The indexes must exist (Setup or
// store.EnsureIndexes).
func EnsureSettlementAddress(ctx context.Context, db *mongo.Database, owner address.Party, venueID, currencyID string, key ed25519.PrivateKey) (address.Settlement, error) {
	return address.NewBook(store.New(db), nil, nil).EnsureSettlement(ctx, owner, venueID, currencyID, key)
}
