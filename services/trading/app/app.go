// Package app wires the trading service.
package app

import (
	"context"
	"log/slog"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/config"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/principal"
	"github.com/zcustody/suite/services/trading/server"
	"github.com/zcustody/suite/services/trading/store"
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
	if err := cfg.RefuseDemoKeys(cfg.OperatorKeyFile); err != nil {
		return err
	}
	operatorKey, err := principal.LoadPrivateKey(cfg.OperatorKeyFile)
	if err != nil {
		return err
	}
	deps, err := app.Setup(ctx, cfg.Common, Name, logger, server.Policy())
	if err != nil {
		return err
	}
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	tradingv1.RegisterTradingServiceServer(deps.Server.GRPC, server.New(st))
	tradingv1.RegisterTradingLedgerServiceServer(deps.Server.GRPC, server.NewLedger(st))
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, server.NewPlugin(st, plugin.NewLedger(deps.DB), operatorKey))
	return deps.Run(ctx)
}
