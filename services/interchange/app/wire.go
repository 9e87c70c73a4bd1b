package app

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/funds"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Parts is what the settlement and withdrawal side is made of; Wire puts it together.
type Parts struct {
	DB *mongo.Database
	// Ledger moves funds in trading's journal, under Signer's system principal; Wallets reads
	// trading wallets for the settlement checks.
	Ledger  tradingv1.TradingLedgerServiceClient
	Wallets tradingv1.TradingServiceClient
	// Custody checks and credits the custody wallets withdrawals go to.
	Custody custodyv1.CustodyLedgerServiceClient
	Signer  *principal.Signer
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil); Lease the hold of a claimed transition
	// (settlement.DefaultLease when 0); Rules the bounds of an instruction (the defaults
	// where zero).
	Now       func() time.Time
	Lease     time.Duration
	Rules     settlement.Rules
	Addresses server.Addresses
	// WithdrawalExpiry is how long a withdrawal may wait for its venue's decision before the
	// sweeper declines it (withdrawal.DefaultExpiry when 0).
	WithdrawalExpiry time.Duration
	// PriceMaxAge is how old a price of trading's may be and still value a service request
	// for the approval policy (funds.DefaultPriceMaxAge when 0).
	PriceMaxAge time.Duration
	// Limits reads the limits of a company's approval policy (the service desk's); nil: no
	// limits are reserved.
	Limits funds.LimitSource
}

// Wired is the settlement and withdrawal side put together.
type Wired struct {
	// Server serves InterchangeService, and through Engine the settlement engine's API.
	Server      *server.Server
	settlements *settlement.Service
	withdrawals *withdrawal.Service
	expiry      time.Duration
	executions  *plugin.Ledger
	transit     funds.Transit
}

// Wire creates the store's indexes and the services over p.
func Wire(ctx context.Context, p Parts) (*Wired, error) {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Rules.MaxLegs <= 0 {
		p.Rules.MaxLegs = settlement.DefaultMaxLegs
	}
	if p.Rules.MaxGross == nil {
		p.Rules.MaxGross = settlement.DefaultMaxGross()
	}
	st := store.New(p.DB, p.Now)
	if err := st.EnsureIndexes(ctx); err != nil {
		return nil, err
	}
	custody := funds.NewCustody(p.Custody, p.Signer)
	w := &Wired{
		settlements: settlement.NewService(st, funds.NewSettlements(p.Ledger, p.Signer), settlement.Config{Now: p.Now, Lease: p.Lease, Logger: p.Logger}),
		withdrawals: withdrawal.NewService(st, funds.NewWithdrawals(p.Ledger, custody, p.Signer), p.Now, p.Logger),
		expiry:      p.WithdrawalExpiry,
		executions:  plugin.NewLedger(p.DB),
	}
	if p.Limits != nil {
		w.withdrawals.WithLimits(funds.NewLimits(p.Ledger, p.Limits, p.Signer, p.DB, funds.NewPrices(p.Ledger, p.Signer, p.PriceMaxAge, p.Now, p.Logger)))
	}
	if w.expiry <= 0 {
		w.expiry = withdrawal.DefaultExpiry
	}
	w.transit = funds.NewTransit(p.Ledger, custody, p.Signer)
	w.Server = server.New(server.Deps{Addresses: p.Addresses, Settlements: w.settlements, Withdrawals: w.withdrawals,
		Wallets: p.Wallets, Signer: p.Signer, Rules: p.Rules, Custody: custody, Transit: w.transit,
		Prices: funds.NewPrices(p.Ledger, p.Signer, p.PriceMaxAge, p.Now, p.Logger)})
	return w, nil
}

// ReconcileTransit is interchange's scheduled reconciliation: trading's and custody's
// in-transit accounts cancel out, but for the withdrawals in flight.
func (w *Wired) ReconcileTransit(ctx context.Context) ([]string, error) {
	r, err := w.withdrawals.ReconcileTransit(ctx, w.transit)
	return r.Violations, err
}

// Plugin is interchange's one plugin server (the service desk's plugin API): the withdrawal
// request (server.ServiceWithdrawal) and the venue's settlement instruction
// (server.ServiceInstruction) from here, and more (the whitelist's handlers); every other
// service is not available.
func (w *Wired) Plugin(more map[string]plugin.Handler) pluginv1.PluginServiceServer {
	handlers := map[string]plugin.Handler{
		server.ServiceWithdrawal:  w.Server.WithdrawalHandler(),
		server.ServiceInstruction: w.Server.InstructionHandler(),
	}
	maps.Copy(handlers, more)
	return plugin.NewServer(w.executions, handlers)
}

// Sweeper returns one recovery sweep: it completes the money steps cut short that nobody
// asks for again (a decided withdrawal's, a settlement transition's whose lease ran out more
// than grace ago), and declines the withdrawals left undecided past their expiry.
func (w *Wired) Sweeper(grace time.Duration) func(context.Context) {
	return func(ctx context.Context) {
		w.withdrawals.Expire(ctx, w.expiry)
		w.withdrawals.Recover(ctx, grace)
		w.settlements.Recover(ctx, grace)
	}
}
