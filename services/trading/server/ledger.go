package server

import (
	"context"
	"time"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/principal"
	"github.com/zcustody/suite/services/trading"
)

// Internal systems allowed on the ledger API: interchange moves funds for settlements and
// withdrawals; the settlement engine (with the operator's tools) refreshes prices.
const (
	MovementSystem = "interchange"
	PriceSystem    = "settlement-engine"
)

// LedgerStore is what the ledger API needs from the store.
type LedgerStore interface {
	ApplyMovement(ctx context.Context, m trading.Movement) (trading.MovementResult, error)
	PutPrice(ctx context.Context, p trading.Price) error
}

// Ledger implements tradingv1.TradingLedgerServiceServer: balance movements and prices.
type Ledger struct {
	tradingv1.UnimplementedTradingLedgerServiceServer
	store LedgerStore
	now   func() time.Time
}

var _ tradingv1.TradingLedgerServiceServer = (*Ledger)(nil)

// NewLedger returns the ledger server.
func NewLedger(store LedgerStore) *Ledger { return &Ledger{store: store, now: time.Now} }

// requireSystem refuses every caller but the internal system name, signed with its own key
// (the token's issuer is the system itself).
func requireSystem(ctx context.Context, name string) error {
	p, ok := principal.FromContext(ctx)
	if !ok || p.Kind != principal.KindSystem || p.System != name || p.Issuer != name {
		return apperr.Forbidden("this operation is reserved to the %s system", name)
	}
	return nil
}

// ApplyMovement applies one balance movement at most once (see store.ApplyMovement).
func (l *Ledger) ApplyMovement(ctx context.Context, req *tradingv1.ApplyMovementRequest) (*tradingv1.ApplyMovementResponse, error) {
	if err := requireSystem(ctx, MovementSystem); err != nil {
		return nil, err
	}
	m, err := trading.ParseMovement(trading.MovementInput{ID: req.GetMovementId(), CompanyID: req.GetCompanyId(),
		WalletID: req.GetWalletId(), Currency: req.GetCurrency(), Available: req.GetAvailableDelta(), Ledger: req.GetLedgerDelta(),
		PendingOut: req.GetPendingOutDelta(), PendingIn: req.GetPendingInDelta(), Reason: req.GetReason()})
	if err != nil {
		return nil, err
	}
	res, err := l.store.ApplyMovement(ctx, m)
	if err != nil {
		return nil, err
	}
	b := res.Balance
	return &tradingv1.ApplyMovementResponse{MovementId: m.ID, Applied: res.Applied, Available: b.Available, Ledger: b.Ledger,
		PendingOut: b.PendingOut, PendingIn: b.PendingIn}, nil
}

// SetPrices replaces the USD prices of the given currencies, after validating all of them:
// an invalid entry stores nothing.
func (l *Ledger) SetPrices(ctx context.Context, req *tradingv1.SetPricesRequest) (*tradingv1.SetPricesResponse, error) {
	if err := requireSystem(ctx, PriceSystem); err != nil {
		return nil, err
	}
	in := make([]trading.PriceInput, 0, len(req.GetPrices()))
	for _, p := range req.GetPrices() {
		in = append(in, trading.PriceInput{Currency: p.GetCurrency(), USD: p.GetUsd()})
	}
	prices, err := trading.ParsePrices(in, l.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return nil, err
	}
	for _, p := range prices {
		if err := l.store.PutPrice(ctx, p); err != nil {
			return nil, err
		}
	}
	return &tradingv1.SetPricesResponse{Updated: int32(len(prices))}, nil
}
