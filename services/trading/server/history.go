package server

import (
	"context"
	"strconv"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/trading"
)

// HistoryReader is what the history extension needs from the store.
type HistoryReader interface {
	History(ctx context.Context, f trading.HistoryFilter) ([]journal.Posting, error)
}

// ListWalletHistory serves the wallet history extension: one page of the postings of one
// of the caller's company's wallets, with its balances after each.
func (s *Server) ListWalletHistory(ctx context.Context, req *tradingv1.ListWalletHistoryRequest) (*tradingv1.ListWalletHistoryResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	f, err := trading.ParseHistory(p.CompanyID, trading.HistoryInput{WalletID: req.GetWalletId(), Currency: req.GetCurrency(),
		From: req.GetFrom(), To: req.GetTo(), Reference: req.GetReference(), Cursor: req.GetCursor(), Limit: req.PaginationLimit})
	if err != nil {
		return nil, err
	}
	postings, err := s.history.History(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &tradingv1.ListWalletHistoryResponse{Items: make([]*tradingv1.WalletPosting, 0, len(postings))}
	for _, p := range postings {
		out.Items = append(out.Items, walletPosting(p))
	}
	if len(postings) == f.Limit {
		out.NextCursor = strconv.FormatInt(postings[len(postings)-1].Seq, 10)
	}
	return out, nil
}

func walletPosting(p journal.Posting) *tradingv1.WalletPosting {
	d, a := p.Delta, p.After
	return &tradingv1.WalletPosting{Sequence: p.Seq, EntryId: p.Entry, Type: p.Code, Reference: p.BusinessKey, Currency: p.Currency,
		CreatedAt: apitime.Format(p.At), AvailableChange: d.Available().String(), LedgerChange: d.Ledger().String(),
		PendingOutChange: d.PendingOut().String(), PendingInChange: d.PendingIn().String(), AvailableBalance: a.Available().String(),
		LedgerBalance: a.Ledger().String(), PendingOutBalance: a.PendingOut().String(), PendingInBalance: a.PendingIn().String()}
}
