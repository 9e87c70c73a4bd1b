package server

import (
	"context"
	"slices"
	"strings"
	"time"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

// Internal systems allowed on the ledger API (Policy): interchange moves funds for
// settlements and withdrawals, and reads the prices to value its service requests; the
// settlement engine (with the operator's tools) records
// deposits, refreshes prices and reconciles.
const (
	MovementSystem = catalog.Interchange
	PriceSystem    = "settlement-engine"
)

// LedgerStore is what the ledger API needs from the store.
type LedgerStore interface {
	RecordEntry(ctx context.Context, e journal.Entry, wallets []store.WalletRef) (journal.Result, error)
	ResolveHold(ctx context.Context, id, holdID string, kind journal.Kind, code string) (journal.Result, error)
	Deposit(ctx context.Context, id, companyID, walletID, currency string, a amount.Amount) (journal.Result, error)
	Journal() *journal.Journal
	PutPrice(ctx context.Context, p trading.Price) error
	Prices(ctx context.Context) (trading.Prices, error)
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

// SetPrices replaces the USD prices of the given currencies, after validating all of them:
// an invalid entry stores nothing.
func (l *Ledger) SetPrices(ctx context.Context, req *tradingv1.SetPricesRequest) (*tradingv1.SetPricesResponse, error) {
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

// GetPrices answers the price table, by currency code, each price with when it was set (the
// reader decides how old a price it still trusts).
func (l *Ledger) GetPrices(ctx context.Context, _ *tradingv1.GetPricesRequest) (*tradingv1.GetPricesResponse, error) {
	prices, err := l.store.Prices(ctx)
	if err != nil {
		return nil, err
	}
	resp := &tradingv1.GetPricesResponse{Prices: make([]*tradingv1.PriceQuote, 0, len(prices))}
	for _, p := range prices {
		resp.Prices = append(resp.Prices, &tradingv1.PriceQuote{Currency: p.Currency, Usd: p.Price, UpdatedAt: p.UpdatedAt.UTC().Format(time.RFC3339Nano)})
	}
	slices.SortFunc(resp.Prices, func(a, b *tradingv1.PriceQuote) int { return strings.Compare(a.GetCurrency(), b.GetCurrency()) })
	return resp, nil
}
