// Package app wires the trading service.
package app

import (
	"context"
	"log/slog"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/config"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/trading/server"
)

// Name is the service's name: its database, log tag and health entry.
const Name = "trading"

// Config is the trading service's configuration.
type Config struct {
	config.Common
	// OperatorKeyFile is the operator's Ed25519 key that signs generated addresses.
	OperatorKeyFile string `env:"OPERATOR_PRIVATE_KEY_FILE, required"`
}

// Run starts the trading service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	deps, err := app.Setup(ctx, cfg.Common, Name, logger)
	if err != nil {
		return err
	}
	tradingv1.RegisterTradingServiceServer(deps.Server.GRPC, server.New())
	return deps.Run(ctx)
}
