// Package server is the custody service's gRPC edge: the custody API (endpoints 4, 12, 13
// and 14), the internal admin API (fee estimates, v2 wallet proposals) and the plugin API
// through which the service desk validates and executes the wallet services.
package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/statement"
)

// DefaultFeeMaxAge is how old a fee estimate may be before endpoint 12 reports it
// unavailable, unless configured otherwise.
const DefaultFeeMaxAge = 10 * time.Minute

// Store is what the custody API needs from the store.
type Store interface {
	ListByCompany(ctx context.Context, companyID string) ([]custody.Wallet, error)
	Wallet(ctx context.Context, companyID, id string) (custody.Wallet, error)
	AddTrustline(ctx context.Context, companyID, id string, version int64, b custody.AssetBalance) (custody.Wallet, error)
	Decide(ctx context.Context, w custody.Wallet, d custody.Decision) (custody.Wallet, error)
	Fees(ctx context.Context) ([]custody.FeeEstimate, error)
	// The statement extensions' reads: a wallet's currency ids and custody's journal.
	statement.Wallets
}

// Authors finds the users who sign v2 wallet actions (directory.Directory); an unknown user
// answers apperr.ErrNotFound.
type Authors interface {
	Author(ctx context.Context, id string) (custody.Author, error)
	// AuthorByEmail finds the company's user by e-mail (the submitter-id of a request).
	AuthorByEmail(ctx context.Context, companyID, email string) (custody.Author, error)
}

// Options configure the custody API.
type Options struct {
	// Authors is nil when no user directory is configured: endpoint 4 then answers 503.
	Authors Authors
	// FeeMaxAge is the freshness bound of fee estimates; zero means DefaultFeeMaxAge.
	FeeMaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server implements custodyv1.CustodyServiceServer.
type Server struct {
	custodyv1.UnimplementedCustodyServiceServer
	store      Store
	authors    Authors
	feeMaxAge  time.Duration
	now        func() time.Time
	statements statement.Server
}

var _ custodyv1.CustodyServiceServer = (*Server)(nil)

// New returns the server.
func New(st Store, opts Options) *Server {
	s := &Server{store: st, authors: opts.Authors, feeMaxAge: opts.FeeMaxAge, now: opts.Now, statements: statement.New(st, custodyCurrency)}
	if s.feeMaxAge <= 0 {
		s.feeMaxAge = DefaultFeeMaxAge
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// ListLegacyWallets serves endpoint 14: every wallet of the caller's company, by id.
func (s *Server) ListLegacyWallets(ctx context.Context, _ *custodyv1.ListLegacyWalletsRequest) (*custodyv1.ListLegacyWalletsResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	wallets, err := s.store.ListByCompany(ctx, p.CompanyID)
	if err != nil {
		return nil, err
	}
	resp := &custodyv1.ListLegacyWalletsResponse{Wallets: make([]*custodyv1.LegacyWallet, 0, len(wallets))}
	for _, w := range wallets {
		resp.Wallets = append(resp.Wallets, legacyWallet(w))
	}
	return resp, nil
}

// wallet returns the company's wallet; unknown and other companies' wallets answer ER-102.
func (s *Server) wallet(ctx context.Context, companyID, id string) (custody.Wallet, error) {
	if strings.TrimSpace(id) == "" {
		return custody.Wallet{}, apperr.Missing("walletId")
	}
	w, err := s.store.Wallet(ctx, companyID, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return custody.Wallet{}, apperr.NotFound("walletId", id)
	}
	return w, err
}

func legacyWallet(w custody.Wallet) *custodyv1.LegacyWallet {
	out := &custodyv1.LegacyWallet{
		WalletId: w.ID, WalletName: w.Name, WalletCompany: w.CompanyID, CreatedBy: w.CreatedBy,
		Status: w.Status, Valid: w.Valid, RegisteredComplianceKey: w.RegisteredComplianceKey,
		Blockchain: w.Blockchain, AssetBalances: make([]*custodyv1.AssetBalance, 0, len(w.AssetBalances)),
		CreatedAt: apitime.Format(w.CreatedAt), UpdatedAt: apitime.Format(w.UpdatedAt),
	}
	for _, b := range w.AssetBalances {
		out.AssetBalances = append(out.AssetBalances, assetBalance(b))
	}
	return out
}

func assetBalance(b custody.AssetBalance) *custodyv1.AssetBalance {
	return &custodyv1.AssetBalance{
		Currency: b.Currency, UnitCurrency: b.UnitCurrency,
		AvailableUnitBalance: b.AvailableUnitBalance, LedgerUnitBalance: b.LedgerUnitBalance,
		PendingOutUnitBalance: b.PendingOutUnitBalance, PendingInUnitBalance: b.PendingInUnitBalance,
		AvailableBalance: b.AvailableBalance, LedgerBalance: b.LedgerBalance,
		PendingOutBalance: b.PendingOutBalance, PendingInBalance: b.PendingInBalance,
	}
}
