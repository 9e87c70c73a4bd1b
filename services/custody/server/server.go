// Package server is the custody service's gRPC edge: the custody API (endpoint 14 here;
// endpoints 4, 12 and 13 answer Unimplemented until the issue that owns them lands) and the
// plugin API through which the service desk validates and executes the wallet services.
package server

import (
	"context"
	"time"

	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/principal"
)

// TimeFormat is how timestamps of the v2 wallet shape are written: ISO 8601 UTC with
// milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// WalletLister is what the custody API needs from the store.
type WalletLister interface {
	ListByCompany(ctx context.Context, companyID string) ([]custody.Wallet, error)
}

// Server implements custodyv1.CustodyServiceServer.
type Server struct {
	custodyv1.UnimplementedCustodyServiceServer
	wallets WalletLister
}

var _ custodyv1.CustodyServiceServer = (*Server)(nil)

// New returns the server.
func New(wallets WalletLister) *Server { return &Server{wallets: wallets} }

// ListLegacyWallets serves endpoint 14: every wallet of the caller's company, by id.
func (s *Server) ListLegacyWallets(ctx context.Context, _ *custodyv1.ListLegacyWalletsRequest) (*custodyv1.ListLegacyWalletsResponse, error) {
	companyID, err := callerCompany(ctx)
	if err != nil {
		return nil, err
	}
	wallets, err := s.wallets.ListByCompany(ctx, companyID)
	if err != nil {
		return nil, err
	}
	resp := &custodyv1.ListLegacyWalletsResponse{Wallets: make([]*custodyv1.LegacyWallet, 0, len(wallets))}
	for _, w := range wallets {
		resp.Wallets = append(resp.Wallets, legacyWallet(w))
	}
	return resp, nil
}

// callerCompany returns the company of a company-level caller or an API user.
func callerCompany(ctx context.Context) (string, error) {
	p, ok := principal.FromContext(ctx)
	if !ok || p.CompanyID == "" || (p.Kind != principal.KindUser && p.Kind != principal.KindCompany) {
		return "", apperr.Forbidden("this operation needs a company caller")
	}
	return p.CompanyID, nil
}

func legacyWallet(w custody.Wallet) *custodyv1.LegacyWallet {
	out := &custodyv1.LegacyWallet{
		WalletId: w.ID, WalletName: w.Name, WalletCompany: w.CompanyID, CreatedBy: w.CreatedBy,
		Status: w.Status, Valid: w.Valid, RegisteredComplianceKey: w.RegisteredComplianceKey,
		Blockchain: w.Blockchain, AssetBalances: make([]*custodyv1.AssetBalance, 0, len(w.AssetBalances)),
		CreatedAt: formatTime(w.CreatedAt), UpdatedAt: formatTime(w.UpdatedAt),
	}
	for _, b := range w.AssetBalances {
		out.AssetBalances = append(out.AssetBalances, &custodyv1.AssetBalance{
			Currency: b.Currency, UnitCurrency: b.UnitCurrency,
			AvailableUnitBalance: b.AvailableUnitBalance, LedgerUnitBalance: b.LedgerUnitBalance,
			PendingOutUnitBalance: b.PendingOutUnitBalance, PendingInUnitBalance: b.PendingInUnitBalance,
			AvailableBalance: b.AvailableBalance, LedgerBalance: b.LedgerBalance,
			PendingOutBalance: b.PendingOutBalance, PendingInBalance: b.PendingInBalance,
		})
	}
	return out
}

func formatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
