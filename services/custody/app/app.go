// Package app wires the custody service.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/zcustody/suite/platform/config"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/custody/directory"
	"github.com/zcustody/suite/services/custody/server"
	"github.com/zcustody/suite/services/custody/store"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/control"
	compliancedir "github.com/zcustody/suite/services/internal/directory"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Name is the service's name: its database, log tag, health entry and the issuer of its own
// system principal.
const Name = catalog.Custody

// Config is the custody service's configuration.
type Config struct {
	config.Common
	// ServicedeskAddr is the service desk's gRPC address: the directory of the users who
	// sign v2 wallet actions (endpoint 4). Empty: endpoint 4 answers 503. Needs
	// SERVICE_PRIVATE_KEY_FILE (custody's identity, trusted by the service desk).
	ServicedeskAddr string `env:"SERVICEDESK_ADDR"`
	// ComplianceAddr is compliance's gRPC address: the beneficiaries a new wallet names as
	// its owner (walletOwnerId) are checked there, as custody (SERVICE_PRIVATE_KEY_FILE).
	ComplianceAddr string `env:"COMPLIANCE_ADDR, default=127.0.0.1:9005"`
	// FeeMaxAge is how old a fee estimate may be before endpoint 12 reports it unavailable
	// (ER-252); zero means 10 minutes.
	FeeMaxAge time.Duration `env:"FEE_MAX_AGE, default=10m"`
	// RecoveryInterval is how often custody's journal recovery pass runs; RecoveryGrace how
	// long an entry is left to the call that recorded it.
	RecoveryInterval time.Duration `env:"JOURNAL_RECOVERY_INTERVAL, default=10s"`
	RecoveryGrace    time.Duration `env:"JOURNAL_RECOVERY_GRACE, default=30s"`
	// Reconcile schedules the journal's reconciliation (services/internal/control).
	Reconcile control.Settings
}

// Run starts the custody service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.FeeMaxAge < 0 {
		return errors.New("config: FEE_MAX_AGE must not be negative")
	}
	if cfg.RecoveryInterval <= 0 || cfg.RecoveryGrace <= 0 {
		return errors.New("config: JOURNAL_RECOVERY_INTERVAL and JOURNAL_RECOVERY_GRACE must be positive")
	}
	return app.Start(ctx, cfg.Common, Name, logger, server.Policy(), func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds custody on deps: its store and indexes, the service desk's user directory
// and compliance's beneficiaries, the gRPC services and the journal's recovery pass.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	authors, err := userDirectory(deps, cfg)
	if err != nil {
		return err
	}
	owners, err := beneficiaries(deps, cfg)
	if err != nil {
		return err
	}
	custodyv1.RegisterCustodyServiceServer(deps.Server.GRPC, server.New(st, server.Options{Authors: authors, FeeMaxAge: cfg.FeeMaxAge}))
	custodyv1.RegisterCustodyAdminServiceServer(deps.Server.GRPC, server.NewAdmin(st))
	custodyv1.RegisterCustodyLedgerServiceServer(deps.Server.GRPC, server.NewLedger(st))
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, server.NewPlugin(st, owners, plugin.NewLedger(deps.DB)))
	deps.Every("journal recovery", cfg.RecoveryInterval, st.Journal().Sweep(cfg.RecoveryGrace, deps.Logger))
	controls, err := control.Schedule(deps, cfg.Reconcile, "custody.journal", catalog.EntityCustodyReconciliation, func(ctx context.Context) ([]string, error) {
		r, _, err := st.Reconcile(ctx)
		return r.Violations, err
	})
	if err != nil {
		return err
	}
	return deps.Relay(cfg.Common, Name, append(st.Outboxes(), controls)...)
}

// userDirectory connects the service desk's identity API, if configured.
func userDirectory(deps *app.Deps, cfg Config) (server.Authors, error) {
	if cfg.ServicedeskAddr == "" {
		deps.Logger.Warn("no user directory: v2 wallet actions answer unavailable", "setting", "SERVICEDESK_ADDR")
		return nil, nil
	}
	signer, err := cfg.ServiceSigner(Name)
	if err != nil {
		return nil, err
	}
	conn, err := deps.Dial("servicedesk", cfg.ServicedeskAddr)
	if err != nil {
		return nil, err
	}
	return directory.New(servicedeskv1.NewIdentityServiceClient(conn), signer), nil
}

// beneficiaries connects compliance's directory, where the owners wallets name are checked.
func beneficiaries(deps *app.Deps, cfg Config) (server.Owners, error) {
	signer, err := cfg.ServiceSigner(Name)
	if err != nil {
		return nil, fmt.Errorf("compliance directory: %w", err)
	}
	conn, err := deps.Dial("compliance", cfg.ComplianceAddr)
	if err != nil {
		return nil, err
	}
	return compliancedir.New(compliancev1.NewDirectoryServiceClient(conn), signer, Name, deps.Logger), nil
}
