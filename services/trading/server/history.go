package server

import (
	"context"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/statement"
	"github.com/zcustody/suite/services/trading"
)

// HistoryReader is what the statement extensions need from the store: the company's
// wallets' currencies and trading's journal.
type HistoryReader interface {
	statement.Wallets
}

// tradingCurrency reports whether a statement's currency filter names a trading currency.
func tradingCurrency(c string) bool {
	_, ok := trading.CurrencyDecimals(c)
	return ok
}

// ListWalletHistory serves the wallet history extension: one page of the postings of one
// of the caller's company's wallets, with its balances after each (statement package, shared
// with custody's wallets).
func (s *Server) ListWalletHistory(ctx context.Context, req *tradingv1.ListWalletHistoryRequest) (*tradingv1.ListWalletHistoryResponse, error) {
	return s.statements.ListWalletHistory(ctx, req)
}

// GetWalletBalanceAsOf serves the balance-as-of extension: one of the caller's company's
// wallets' balances after its last posting at or before a time.
func (s *Server) GetWalletBalanceAsOf(ctx context.Context, req *tradingv1.GetWalletBalanceAsOfRequest) (*tradingv1.GetWalletBalanceAsOfResponse, error) {
	return s.statements.GetWalletBalanceAsOf(ctx, req)
}
