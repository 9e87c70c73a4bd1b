package server

import (
	"context"
	"fmt"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
)

// AdminStore is what the admin API needs from the store.
type AdminStore interface {
	InsertWallet(ctx context.Context, w custody.Wallet) error
	PutFee(ctx context.Context, e custody.FeeEstimate) (bool, error)
}

// Admin implements custodyv1.CustodyAdminServiceServer: internal systems only (Policy).
type Admin struct {
	custodyv1.UnimplementedCustodyAdminServiceServer
	store AdminStore
	now   func() time.Time
}

var _ custodyv1.CustodyAdminServiceServer = (*Admin)(nil)

// NewAdmin returns the admin server.
func NewAdmin(st AdminStore) *Admin { return &Admin{store: st, now: time.Now} }

// RefreshFeeEstimates validates every estimate first (all or nothing), then stores each
// one unless a newer estimate of its currency is already stored; `updated` counts the
// estimates stored.
func (a *Admin) RefreshFeeEstimates(ctx context.Context, req *custodyv1.RefreshFeeEstimatesRequest) (*custodyv1.RefreshFeeEstimatesResponse, error) {
	estimates, err := a.checkEstimates(req.GetEstimates())
	if err != nil {
		return nil, err
	}
	var updated int32
	for _, e := range estimates {
		stored, err := a.store.PutFee(ctx, e)
		if err != nil {
			return nil, err
		}
		if stored {
			updated++
		}
	}
	return &custodyv1.RefreshFeeEstimatesResponse{Updated: updated}, nil
}

func (a *Admin) checkEstimates(in []*custodyv1.FeeEstimate) ([]custody.FeeEstimate, error) {
	if len(in) == 0 {
		return nil, apperr.Invalid(apperr.CodeEmptyList, "estimates", "estimates must hold at least one estimate")
	}
	now := a.now()
	seen := map[string]bool{}
	out := make([]custody.FeeEstimate, 0, len(in))
	for i, e := range in {
		field := fmt.Sprintf("estimates[%d]", i)
		observed, err := observedAt(field, e.GetObservedAt(), now)
		if err != nil {
			return nil, err
		}
		checked, err := custody.CheckFeeEstimate(field, custody.FeeEstimate{CurrencyID: e.GetCurrencyId(),
			High: e.GetHigh(), Medium: e.GetMedium(), Low: e.GetLow(), ObservedAt: observed}, now)
		if err != nil {
			return nil, err
		}
		if seen[checked.CurrencyID] {
			return nil, apperr.Invalid(apperr.CodeFormat, field+".currencyId", "currency %s appears more than once", checked.CurrencyID)
		}
		seen[checked.CurrencyID] = true
		out = append(out, checked)
	}
	return out, nil
}

// observedAt parses an ISO 8601 time; empty means now.
func observedAt(field, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, apperr.Invalid(apperr.CodeFormat, field+".observedAt", "observedAt %q is not an ISO 8601 time", s)
	}
	return t, nil
}

// ProposeLegacyWallet records a new v2 wallet PENDING_AUTH with a fresh single-use intent.
func (a *Admin) ProposeLegacyWallet(ctx context.Context, req *custodyv1.ProposeLegacyWalletRequest) (*custodyv1.ProposeLegacyWalletResponse, error) {
	w, err := custody.Propose(custody.Proposal{CompanyID: req.GetCompanyId(), CreatedBy: req.GetCreatedBy(),
		Name: req.GetWalletName(), CurrencyID: req.GetCurrencyId(), At: a.now()})
	if err != nil {
		return nil, err
	}
	if err := a.store.InsertWallet(ctx, w); err != nil {
		return nil, err
	}
	return &custodyv1.ProposeLegacyWalletResponse{WalletId: w.ID, IntentId: w.Intent.ID, ProposalSignature: w.Intent.ProposalSignature}, nil
}
