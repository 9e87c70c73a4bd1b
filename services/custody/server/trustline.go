package server

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
)

// ActivateTrustline serves endpoint 13: a MAKER of the wallet's company (Policy) adds a trustline for
// a non-native Stellar asset to a Stellar wallet whose available XLM covers the reserve. The
// change is one conditional update on the version read; a wallet that moved meanwhile is
// read again, so of racing activations of one asset exactly one succeeds and the others see
// it active (409 ER-104).
func (s *Server) ActivateTrustline(ctx context.Context, req *custodyv1.ActivateTrustlineRequest) (*custodyv1.ActivateTrustlineResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	cur, err := custody.TrustlineAsset(req.GetCurrencyId())
	if err != nil {
		return nil, err
	}
	for range maxAttempts {
		w, err := s.wallet(ctx, p.CompanyID, req.GetWalletId())
		if err != nil {
			return nil, err
		}
		t, err := custody.PlanTrustline(w, cur)
		if err != nil {
			return nil, err
		}
		_, err = s.store.AddTrustline(ctx, w.CompanyID, w.ID, w.Version, t.Balance)
		if errors.Is(err, apperr.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &custodyv1.ActivateTrustlineResponse{WalletId: w.ID, CurrencyId: cur.CurrencyID, Status: custody.StatusActive,
			AssetBalance: assetBalance(t.Balance), MinimumBalanceXlm: t.MinimumBalanceXLM}, nil
	}
	return nil, apperr.Conflict(apperr.CodeConflict, "wallet %s keeps changing concurrently; retry", req.GetWalletId())
}
