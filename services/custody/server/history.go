package server

import (
	"context"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/ledger"
)

// custodyCurrency reports whether a statement's currency filter names a currency id (custody
// wallets' accounts are kept by currency id, e.g. btc-btc).
func custodyCurrency(id string) bool {
	_, ok := ledger.ByID(id)
	return ok
}

// ListWalletHistory serves the custody wallets' history extension: one page of the postings
// of one of the caller's company's custody wallets in custody's journal, with its balances
// after each (statement package: the trading wallets' extension, request and answer).
func (s *Server) ListWalletHistory(ctx context.Context, req *tradingv1.ListWalletHistoryRequest) (*tradingv1.ListWalletHistoryResponse, error) {
	return s.statements.ListWalletHistory(ctx, req)
}

// GetWalletBalanceAsOf serves the custody wallets' balance-as-of extension: one of the
// caller's company's custody wallets' balances, per currency id, after its last posting at
// or before a time.
func (s *Server) GetWalletBalanceAsOf(ctx context.Context, req *tradingv1.GetWalletBalanceAsOfRequest) (*tradingv1.GetWalletBalanceAsOfResponse, error) {
	return s.statements.GetWalletBalanceAsOf(ctx, req)
}
