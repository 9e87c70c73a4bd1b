// Package app wires the service desk: configuration, store, handlers, server.
package app

import (
	"context"
	"log/slog"

	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/config"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/server"
	"github.com/zcustody/suite/services/servicedesk/store"
)

// Name is the service's name: its database, log tag and health entry.
const Name = "servicedesk"

// Config is the service desk's configuration.
type Config struct {
	config.Common
	// Addresses of the services that own catalog services (their plugin API).
	TradingAddr     string `env:"TRADING_ADDR, default=127.0.0.1:9002"`
	InterchangeAddr string `env:"INTERCHANGE_ADDR, default=127.0.0.1:9003"`
	CustodyAddr     string `env:"CUSTODY_ADDR, default=127.0.0.1:9004"`
	ComplianceAddr  string `env:"COMPLIANCE_ADDR, default=127.0.0.1:9005"`
}

// Run starts the service desk and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	deps, err := app.Setup(ctx, cfg.Common, Name, logger)
	if err != nil {
		return err
	}
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	if err := st.SyncCatalog(ctx, servicedesk.Catalog()); err != nil {
		return err
	}
	servicedeskv1.RegisterServicedeskServiceServer(deps.Server.GRPC, server.New(st))
	servicedeskv1.RegisterIdentityServiceServer(deps.Server.GRPC, server.NewIdentity(st))
	return deps.Run(ctx)
}
