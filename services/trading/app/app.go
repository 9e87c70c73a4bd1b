// Package app wires the trading service.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/control"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/trading/server"
	"github.com/zcustody/suite/services/trading/store"
)

// Name is the service's name: its database, log tag and health entry.
const Name = catalog.Trading

// Config is the trading service's configuration.
type Config struct {
	config.Common
	// OperatorKeyFile is the operator's Ed25519 key that signs generated addresses.
	OperatorKeyFile string `env:"OPERATOR_PRIVATE_KEY_FILE, required"`
	// RecoveryInterval is how often the journal's recovery pass runs (entries cut short,
	// open resolutions, expired holds); RecoveryGrace how long an entry is left to the call
	// that recorded it.
	RecoveryInterval time.Duration `env:"JOURNAL_RECOVERY_INTERVAL, default=10s"`
	RecoveryGrace    time.Duration `env:"JOURNAL_RECOVERY_GRACE, default=30s"`
	// Reconcile schedules the journal's reconciliation (services/internal/control).
	Reconcile control.Settings
}

// Run starts the trading service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.RecoveryInterval <= 0 || cfg.RecoveryGrace <= 0 {
		return fmt.Errorf("JOURNAL_RECOVERY_INTERVAL and JOURNAL_RECOVERY_GRACE must be positive")
	}
	if err := cfg.RefuseDemoKeys(cfg.OperatorKeyFile); err != nil {
		return err
	}
	return app.Start(ctx, cfg.Common, Name, logger, server.Policy(), func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds the trading service on deps: its store and indexes, the gRPC services and
// the journal's recovery pass.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	operatorKey, err := principal.LoadPrivateKey(cfg.OperatorKeyFile)
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
	deps.Every("journal recovery", cfg.RecoveryInterval, st.Journal().Sweep(cfg.RecoveryGrace, deps.Logger))
	controls, err := control.Schedule(deps, cfg.Reconcile, "trading.journal", catalog.EntityTradingReconciliation, st.Reconcile)
	if err != nil {
		return err
	}
	return deps.Relay(cfg.Common, Name, append(st.Outboxes(), controls)...)
}
