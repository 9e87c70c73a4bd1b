// Package app wires the interchange service.
package app

import (
	"context"
	"log/slog"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/config"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Name is the service's name: its database, log tag and health entry.
const Name = "interchange"

// Config is the interchange service's configuration.
type Config struct {
	config.Common
	// TradingAddr is trading's gRPC address (balance movements).
	TradingAddr string `env:"TRADING_ADDR, default=127.0.0.1:9002"`
	// ComplianceAddr is compliance's gRPC address (VASP and beneficiary checks).
	ComplianceAddr string `env:"COMPLIANCE_ADDR, default=127.0.0.1:9005"`
}

// Run starts the interchange service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	deps, err := app.Setup(ctx, cfg.Common, Name, logger)
	if err != nil {
		return err
	}
	interchangev1.RegisterInterchangeServiceServer(deps.Server.GRPC, server.New())
	// Its catalog services (beneficiaries, whitelisting, settlement) come with their issue.
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, plugin.NothingYet{})
	return deps.Run(ctx)
}
