// Package app wires the compliance service.
package app

import (
	"context"
	"log/slog"

	"github.com/zcustody/suite/platform/config"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance/server"
	"github.com/zcustody/suite/services/compliance/store"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Name is the service's name: its database, log tag and health entry.
const Name = catalog.Compliance

// Config is the compliance service's configuration.
type Config struct {
	config.Common
}

// Run starts the compliance service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	return app.Start(ctx, cfg.Common, Name, logger, server.Policy(), func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds the compliance service on deps: its store and indexes and its gRPC services.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	compliancev1.RegisterComplianceServiceServer(deps.Server.GRPC, server.New(st))
	compliancev1.RegisterDirectoryServiceServer(deps.Server.GRPC, server.NewDirectory(st, st))
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, server.NewPlugin(st, plugin.NewLedger(deps.DB)))
	return deps.Relay(cfg.Common, Name, st.Outboxes()...)
}
