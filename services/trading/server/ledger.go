package server

import (
	"context"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

// Internal systems allowed on the ledger API: interchange moves funds for settlements and
// withdrawals; the settlement engine (with the operator's tools) records deposits, refreshes
// prices and reconciles.
const (
	MovementSystem = "interchange"
	PriceSystem    = "settlement-engine"
)

// LedgerStore is what the ledger API needs from the store.
type LedgerStore interface {
	RecordEntry(ctx context.Context, e journal.Entry, wallets []store.WalletRef) (journal.Result, error)
	ResolveHold(ctx context.Context, id, holdID string, kind journal.Kind, code string) (journal.Result, error)
	Deposit(ctx context.Context, id, companyID, walletID, currency string, a amount.Amount) (journal.Result, error)
	Journal() *journal.Journal
	PutPrice(ctx context.Context, p trading.Price) error
}

// Ledger implements tradingv1.TradingLedgerServiceServer: the journal and prices.
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
