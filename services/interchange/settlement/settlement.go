// Package settlement is interchange's settlement side: settlement instructions (endpoint 3,
// status and search extensions), their lifecycle advanced by the settlement engine, and
// withdrawal confirmation (endpoint 11).
package settlement

import (
	"context"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/principal"
)

// DefaultLease is how long a claimed transition or withdrawal decision is held by the call
// that claimed it before a retry may resume it.
const DefaultLease = 15 * time.Second

// Deps is what the settlement side needs.
type Deps struct {
	DB *mongo.Database
	// Trading moves funds; calls carry Signer's system principal.
	Trading tradingv1.TradingLedgerServiceClient
	// Wallets reads trading wallets (endpoint 2's method) under the caller's own principal,
	// forwarded as received, so trading scopes the read to the caller's company.
	Wallets tradingv1.TradingServiceClient
	Signer  *principal.Signer
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil); Lease the hold of a claim (DefaultLease when 0).
	Now   func() time.Time
	Lease time.Duration
	// MaxLegs bounds the legs of one settlement (DefaultMaxLegs when 0); MaxGross its gross
	// amount per currency (DefaultMaxGross when nil).
	MaxLegs  int
	MaxGross map[string]amount.Amount
}

// Service serves the settlement side of interchange.
type Service struct {
	deps  Deps
	store store
	funds funds
}

// Setup creates the indexes and returns the service.
func Setup(ctx context.Context, deps Deps) (*Service, error) {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Lease <= 0 {
		deps.Lease = DefaultLease
	}
	if deps.MaxLegs <= 0 {
		deps.MaxLegs = DefaultMaxLegs
	}
	if deps.MaxGross == nil {
		deps.MaxGross = DefaultMaxGross()
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	st := store{db: deps.DB, now: deps.Now}
	if err := st.ensureIndexes(ctx); err != nil {
		return nil, err
	}
	return &Service{deps: deps, store: st, funds: funds{ledger: deps.Trading, signer: deps.Signer}}, nil
}

// rules are the bounds of an instruction; payables are allowed to the venue's side only.
func (s *Service) rules(payables bool) Rules {
	return Rules{MaxLegs: s.deps.MaxLegs, MaxGross: s.deps.MaxGross, Payables: payables}
}

// Engine returns the internal settlement engine API.
func (s *Service) Engine() interchangev1.SettlementEngineServiceServer { return engine{svc: s} }

// companyCaller returns the calling company: a company-level call, or one of its API users;
// a change (write) also needs a MAKER or CHECKER when the caller is a user.
func companyCaller(ctx context.Context, write bool) (string, error) {
	p, ok := principal.FromContext(ctx)
	if !ok || p.CompanyID == "" || (p.Kind != principal.KindCompany && p.Kind != principal.KindUser) {
		return "", apperr.Forbidden("this operation needs a company caller")
	}
	if write && p.Kind == principal.KindUser && !p.HasRole(principal.RoleMaker) && !p.HasRole(principal.RoleChecker) {
		return "", apperr.Forbidden("a VIEWER cannot change settlements or withdrawals")
	}
	return p.CompanyID, nil
}

// EngineSystem is the internal system allowed on SettlementEngineService.
const EngineSystem = "settlement-engine"

// requireEngine refuses every caller but the settlement engine, signed with its own key.
func requireEngine(ctx context.Context) error {
	p, ok := principal.FromContext(ctx)
	if !ok || p.Kind != principal.KindSystem || p.System != EngineSystem || p.Issuer != EngineSystem {
		return apperr.Forbidden("this operation is reserved to the %s system", EngineSystem)
	}
	return nil
}
