// Package app wires the interchange service.
package app

import (
	"context"
	"log/slog"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/config"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/internal/app"
)

// Name is the service's name: its database, log tag and health entry.
const Name = "interchange"

// Config is the interchange service's configuration.
type Config struct {
	config.Common
}

// Run starts the interchange service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	deps, err := app.Setup(ctx, cfg.Common, Name, logger)
	if err != nil {
		return err
	}
	interchangev1.RegisterInterchangeServiceServer(deps.Server.GRPC, server.New())
	return deps.Run(ctx)
}
