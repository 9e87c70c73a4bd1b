// Package app wires the custody service.
package app

import (
	"context"
	"log/slog"

	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/config"
	"github.com/zcustody/suite/services/custody/server"
	"github.com/zcustody/suite/services/custody/store"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Name is the service's name: its database, log tag and health entry.
const Name = "custody"

// Config is the custody service's configuration.
type Config struct {
	config.Common
}

// Run starts the custody service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	deps, err := app.Setup(ctx, cfg.Common, Name, logger)
	if err != nil {
		return err
	}
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	custodyv1.RegisterCustodyServiceServer(deps.Server.GRPC, server.New(st))
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, server.NewPlugin(st, plugin.NewLedger(deps.DB)))
	return deps.Run(ctx)
}
