// Package app wires the service desk: configuration, store, handlers, server.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/zcustody/suite/platform/config"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/server"
	"github.com/zcustody/suite/services/servicedesk/store"
)

// Name is the service's name: its database, log tag and health entry.
const Name = catalog.Servicedesk

// Config is the service desk's configuration.
type Config struct {
	config.Common
	// Addresses of the services that own catalog services (their plugin API).
	TradingAddr     string `env:"TRADING_ADDR, default=127.0.0.1:9002"`
	InterchangeAddr string `env:"INTERCHANGE_ADDR, default=127.0.0.1:9003"`
	CustodyAddr     string `env:"CUSTODY_ADDR, default=127.0.0.1:9004"`
	ComplianceAddr  string `env:"COMPLIANCE_ADDR, default=127.0.0.1:9005"`
	// SweepInterval is how often overdue requests are expired and stalled executions resumed.
	SweepInterval time.Duration `env:"SWEEP_INTERVAL, default=5s"`
	// ExecutionGrace is how long an authorised request is left to its inline execution.
	ExecutionGrace time.Duration `env:"EXECUTION_GRACE, default=30s"`
	// Now is the desk's clock: deadlines, expiry and timestamps (time.Now when nil; not an
	// environment setting: tests that run the desk in process move it).
	Now func() time.Time
}

// Run starts the service desk and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.SweepInterval <= 0 || cfg.ExecutionGrace <= 0 {
		return fmt.Errorf("SWEEP_INTERVAL and EXECUTION_GRACE must be positive")
	}
	return app.Start(ctx, cfg.Common, Name, logger, server.Policy(), func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds the service desk on deps: its store and indexes, the catalog, the
// connections to the services that own catalog entries, the gRPC services and the sweeper.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	if err := st.SyncCatalog(ctx, servicedesk.Catalog()); err != nil {
		return err
	}
	signer, err := cfg.ServiceSigner(Name)
	if err != nil {
		return err
	}
	plugins := server.NewPlugins(map[string]pluginv1.PluginServiceClient{}, signer)
	addrs := map[string]string{catalog.Trading: cfg.TradingAddr, catalog.Interchange: cfg.InterchangeAddr,
		catalog.Custody: cfg.CustodyAddr, catalog.Compliance: cfg.ComplianceAddr}
	for _, owner := range catalog.Owners() {
		conn, err := deps.Dial(owner, addrs[owner])
		if err != nil {
			return err
		}
		plugins.Add(owner, pluginv1.NewPluginServiceClient(conn))
	}
	desk := servicedesk.New(servicedesk.Config{Store: st, Owners: plugins, Logger: deps.Logger, Grace: cfg.ExecutionGrace, Now: cfg.Now})
	deps.Every("request sweeper", cfg.SweepInterval, desk.Sweep)
	servicedeskv1.RegisterServicedeskServiceServer(deps.Server.GRPC, server.New(desk))
	servicedeskv1.RegisterIdentityServiceServer(deps.Server.GRPC, server.NewIdentity(st))
	return deps.Relay(cfg.Common, Name, st.Outboxes()...)
}
