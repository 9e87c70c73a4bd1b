// Package app wires the custody service.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/platform/config"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/custody/directory"
	"github.com/zcustody/suite/services/custody/server"
	"github.com/zcustody/suite/services/custody/store"
	"github.com/zcustody/suite/services/internal/app"
	compliancedir "github.com/zcustody/suite/services/internal/directory"
	"github.com/zcustody/suite/services/internal/grpcserver"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Name is the service's name: its database, log tag, health entry and the issuer of its own
// system principal.
const Name = "custody"

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
}

// Run starts the custody service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.FeeMaxAge < 0 {
		return errors.New("config: FEE_MAX_AGE must not be negative")
	}
	if cfg.RecoveryInterval <= 0 || cfg.RecoveryGrace <= 0 {
		return errors.New("config: JOURNAL_RECOVERY_INTERVAL and JOURNAL_RECOVERY_GRACE must be positive")
	}
	deps, err := app.Setup(ctx, cfg.Common, Name, logger, server.Policy())
	if err != nil {
		return err
	}
	st := store.New(deps.DB)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	authors, closeAuthors, err := userDirectory(cfg, logger)
	if err != nil {
		return err
	}
	defer closeAuthors()
	owners, closeOwners, err := beneficiaries(cfg, logger)
	if err != nil {
		return err
	}
	defer closeOwners()
	custodyv1.RegisterCustodyServiceServer(deps.Server.GRPC, server.New(st, server.Options{Authors: authors, FeeMaxAge: cfg.FeeMaxAge}))
	custodyv1.RegisterCustodyAdminServiceServer(deps.Server.GRPC, server.NewAdmin(st))
	custodyv1.RegisterCustodyLedgerServiceServer(deps.Server.GRPC, server.NewLedger(st))
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, server.NewPlugin(st, owners, plugin.NewLedger(deps.DB)))
	// The journal's recovery pass stops with the server, also when the server ends on an error.
	sweepCtx, stopSweep := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopSweep()
	wg.Go(func() { app.Every(sweepCtx, cfg.RecoveryInterval, st.Journal().Sweep(cfg.RecoveryGrace, logger)) })
	return deps.Run(ctx)
}

// userDirectory connects the service desk's identity API, if configured.
func userDirectory(cfg Config, logger *slog.Logger) (server.Authors, func(), error) {
	if cfg.ServicedeskAddr == "" {
		logger.Warn("no user directory: v2 wallet actions answer unavailable", "setting", "SERVICEDESK_ADDR")
		return nil, func() {}, nil
	}
	signer, err := cfg.ServiceSigner(Name)
	if err != nil {
		return nil, nil, err
	}
	conn, err := grpc.NewClient(cfg.ServicedeskAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithChainUnaryInterceptor(grpcserver.PropagateRequest()))
	if err != nil {
		return nil, nil, fmt.Errorf("dial servicedesk: %w", err)
	}
	return directory.New(servicedeskv1.NewIdentityServiceClient(conn), signer), func() { conn.Close() }, nil
}

// beneficiaries connects compliance's directory, where the owners wallets name are checked.
func beneficiaries(cfg Config, logger *slog.Logger) (server.Owners, func(), error) {
	signer, err := cfg.ServiceSigner(Name)
	if err != nil {
		return nil, nil, fmt.Errorf("compliance directory: %w", err)
	}
	conn, err := grpc.NewClient(cfg.ComplianceAddr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithChainUnaryInterceptor(grpcserver.PropagateRequest()))
	if err != nil {
		return nil, nil, fmt.Errorf("dial compliance: %w", err)
	}
	return compliancedir.New(compliancev1.NewDirectoryServiceClient(conn), signer, Name, logger), func() { conn.Close() }, nil
}
