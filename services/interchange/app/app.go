// Package app wires the interchange service.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/config"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/funds"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/whitelist"
	wstore "github.com/zcustody/suite/services/interchange/whitelist/store"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/control"
)

// Name is the service's name: its database, log tag and health entry.
const Name = catalog.Interchange

// Config is the interchange service's configuration.
type Config struct {
	config.Common
	// TradingAddr is trading's gRPC address (balance movements).
	TradingAddr string `env:"TRADING_ADDR, default=127.0.0.1:9002"`
	// CustodyAddr is custody's gRPC address (withdrawals to custody wallets).
	CustodyAddr string `env:"CUSTODY_ADDR, default=127.0.0.1:9004"`
	// ComplianceAddr is compliance's gRPC address (VASP and beneficiary checks).
	ComplianceAddr string `env:"COMPLIANCE_ADDR, default=127.0.0.1:9005"`
	// ServicedeskAddr is the service desk's gRPC address: the limits of a company's approval
	// policy, which its withdrawals reserve (empty: no limits are reserved).
	ServicedeskAddr string `env:"SERVICEDESK_ADDR"`
	// SweepInterval is how often money steps cut short (a decided withdrawal's, a settlement
	// transition's) are looked for and completed.
	SweepInterval time.Duration `env:"SWEEP_INTERVAL, default=5s"`
	// RecoveryGrace is how long such a step is left to the call that started it: a decided
	// withdrawal after its decision, a transition after its claim's lease ran out.
	RecoveryGrace time.Duration `env:"RECOVERY_GRACE, default=30s"`
	// SettlementLease is how long a claimed settlement transition is held by the call that
	// claimed it before a retry or the sweeper may resume it: longer than a transition's
	// movements take.
	SettlementLease time.Duration `env:"SETTLEMENT_LEASE, default=15s"`
	// WithdrawalExpiry is how long a withdrawal waits for the decision of its wallet's venue
	// before the sweeper declines it.
	WithdrawalExpiry time.Duration `env:"WITHDRAWAL_EXPIRY, default=168h"`
	// PriceMaxAge is how old a price of trading's table may be and still value a service
	// request for the approval policy; an older one values nothing (the strictest rule).
	PriceMaxAge time.Duration `env:"PRICE_MAX_AGE, default=1h"`
	// SettlementMaxLegs bounds the legs of one settlement instruction.
	SettlementMaxLegs int `env:"SETTLEMENT_MAX_LEGS, default=1000"`
	// SettlementMaxGross bounds one settlement's gross amount (the sum of its legs' sizes) per
	// currency, as CURRENCY=amount pairs separated by commas; empty: the defaults of
	// docs/decisions.md. A currency without a bound cannot be settled.
	SettlementMaxGross string `env:"SETTLEMENT_MAX_GROSS"`
	// Reconcile schedules the transit reconciliation (services/internal/control).
	Reconcile control.Settings
}

// maxGross reads SETTLEMENT_MAX_GROSS (nil when unset: the defaults).
func (c Config) maxGross() (map[string]amount.Amount, error) {
	if c.SettlementMaxGross == "" {
		return nil, nil
	}
	out := map[string]amount.Amount{}
	for _, pair := range strings.Split(c.SettlementMaxGross, ",") {
		cur, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		a, err := amount.ParsePositiveAmount(v, 18)
		if !ok || cur == "" || err != nil {
			return nil, fmt.Errorf("SETTLEMENT_MAX_GROSS: %q is not CURRENCY=positive amount", pair)
		}
		out[cur] = a
	}
	return out, nil
}

// Run starts the interchange service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.SweepInterval <= 0 || cfg.RecoveryGrace <= 0 {
		return fmt.Errorf("SWEEP_INTERVAL and RECOVERY_GRACE must be positive")
	}
	if cfg.SettlementLease < time.Second {
		return fmt.Errorf("SETTLEMENT_LEASE %s: want at least 1s", cfg.SettlementLease)
	}
	if cfg.SettlementMaxLegs < 0 || cfg.SettlementMaxLegs > 10000 {
		return fmt.Errorf("SETTLEMENT_MAX_LEGS %d: want 1..10000 (0: the default)", cfg.SettlementMaxLegs)
	}
	if _, err := cfg.maxGross(); err != nil {
		return err
	}
	return app.Start(ctx, cfg.Common, Name, logger, server.Policy(), func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds interchange on deps: the connections to trading, custody and compliance,
// the whitelist, the settlement and withdrawal side, the gRPC services and the sweeper.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	maxGross, err := cfg.maxGross()
	if err != nil {
		return err
	}
	signer, err := cfg.ServiceSigner(Name)
	if err != nil {
		return err
	}
	tradingConn, err := deps.Dial("trading", cfg.TradingAddr)
	if err != nil {
		return err
	}
	custodyConn, err := deps.Dial("custody", cfg.CustodyAddr)
	if err != nil {
		return err
	}
	complianceConn, err := deps.Dial("compliance", cfg.ComplianceAddr)
	if err != nil {
		return err
	}
	var limits funds.LimitSource
	if cfg.ServicedeskAddr == "" {
		deps.Logger.Warn("no service desk: withdrawals reserve no limits", "setting", "SERVICEDESK_ADDR")
	} else {
		deskConn, err := deps.Dial("servicedesk", cfg.ServicedeskAddr)
		if err != nil {
			return err
		}
		limits = funds.DeskLimits{Client: servicedeskv1.NewServicedeskServiceClient(deskConn), Signer: signer}
	}
	addresses, err := whitelist.Setup(ctx, whitelist.Deps{DB: deps.DB, Compliance: compliancev1.NewDirectoryServiceClient(complianceConn), Signer: signer, Logger: deps.Logger})
	if err != nil {
		return err
	}
	wired, err := Wire(ctx, Parts{DB: deps.DB, Ledger: tradingv1.NewTradingLedgerServiceClient(tradingConn),
		Wallets: tradingv1.NewTradingServiceClient(tradingConn), Custody: custodyv1.NewCustodyLedgerServiceClient(custodyConn), Signer: signer, Logger: deps.Logger, Lease: cfg.SettlementLease,
		Rules: settlement.Rules{MaxLegs: cfg.SettlementMaxLegs, MaxGross: maxGross}, Addresses: addresses, WithdrawalExpiry: cfg.WithdrawalExpiry,
		PriceMaxAge: cfg.PriceMaxAge, Limits: limits})
	if err != nil {
		return err
	}
	interchangev1.RegisterInterchangeServiceServer(deps.Server.GRPC, wired.Server)
	interchangev1.RegisterSettlementEngineServiceServer(deps.Server.GRPC, wired.Server.Engine())
	pluginv1.RegisterPluginServiceServer(deps.Server.GRPC, wired.Plugin(addresses.Handlers()))
	deps.Every("money recovery", cfg.SweepInterval, wired.Sweeper(cfg.RecoveryGrace))
	controls, err := control.Schedule(deps, cfg.Reconcile, "interchange.transit", catalog.EntityInterchangeReconciliation, wired.ReconcileTransit)
	if err != nil {
		return err
	}
	outboxes := append(store.New(deps.DB, nil).Outboxes(), wstore.New(deps.DB).Outboxes()...)
	return deps.Relay(cfg.Common, Name, append(outboxes, controls)...)
}
