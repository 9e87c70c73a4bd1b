package server

import (
	"context"

	commonv1 "github.com/zcustody/suite/proto/common/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
)

// ListLedgerFees serves endpoint 12: one entry per supported currency (fees are network
// data, the same for every company), each with the latest estimate if it is fresh, or an
// ER-252 error in its place. One query.
func (s *Server) ListLedgerFees(ctx context.Context, _ *custodyv1.ListLedgerFeesRequest) (*custodyv1.ListLedgerFeesResponse, error) {
	estimates, err := s.store.Fees(ctx)
	if err != nil {
		return nil, err
	}
	entries := custody.FeeEntries(estimates, s.now(), s.feeMaxAge)
	resp := &custodyv1.ListLedgerFeesResponse{Items: make([]*custodyv1.LedgerFee, 0, len(entries))}
	for _, e := range entries {
		resp.Items = append(resp.Items, ledgerFee(e))
	}
	return resp, nil
}

func ledgerFee(e custody.FeeEntry) *custodyv1.LedgerFee {
	out := &custodyv1.LedgerFee{CurrencyId: e.CurrencyID, Status: e.Status, Type: e.Type, Weight: e.Weight}
	if e.Error != nil {
		out.Error = &commonv1.ErrorObject{Code: e.Error.Code, Message: e.Error.Message}
		return out
	}
	out.High = &custodyv1.FeeTier{Value: e.High}
	out.Medium = &custodyv1.FeeTier{Value: e.Medium}
	out.Low = &custodyv1.FeeTier{Value: e.Low}
	return out
}
