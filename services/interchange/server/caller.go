package server

import (
	"context"
	"slices"

	"google.golang.org/grpc/metadata"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/interchange/funds"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
)

// EngineSystem is the internal system allowed on SettlementEngineService (Policy).
const EngineSystem = "settlement-engine"

// viewer is the caller of a read of settlements and withdrawals: its company and the venues
// it operates, which scope what it sees.
func viewer(ctx context.Context) (settlement.Viewer, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return settlement.Viewer{}, err
	}
	return settlement.Viewer{CompanyID: p.CompanyID, Venues: p.Venues()}, nil
}

// operatesVenue refuses a venueID that is not one of venues, once it is a well-formed id.
func operatesVenue(company string, venues []string, venueID string) error {
	if err := checkID("header.venueId", venueID, codePattern); err != nil {
		return err
	}
	if !slices.Contains(venues, venueID) {
		return apperr.Forbidden("header.venueId %s is not a venue that company %s operates", venueID, company)
	}
	return nil
}

// walletVenue reads the withdrawal's trading wallet as its company's and returns the venue
// that holds it: a wallet the company does not hold is 404 ER-102, one in another currency
// 400 ER-108.
func (s *Server) walletVenue(ctx context.Context, w withdrawal.Withdrawal) (string, error) {
	wallets, err := s.walletsFor(w.CompanyID)
	if err != nil {
		return "", err
	}
	found, err := wallets.Wallets(ctx, []string{w.WalletID})
	if err != nil {
		return "", err
	}
	tw, ok := found[w.WalletID]
	switch {
	case !ok:
		return "", apperr.NotFound("walletId", w.WalletID)
	case tw.VenueID == "":
		return "", apperr.Invalid(apperr.CodeFormat, "walletId", "walletId %s is held at no venue: nobody could decide its withdrawal", w.WalletID)
	case tw.Currency != w.Currency:
		return "", apperr.Invalid(apperr.CodeFormat, "currency", "currency %s: wallet %s holds %s", w.Currency, w.WalletID, tw.Currency)
	}
	return tw.VenueID, nil
}

// callerWallets reads trading wallets with the caller's principal token as it arrived.
func (s *Server) callerWallets(ctx context.Context) funds.Wallets {
	md, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	if tokens := md.Get(principal.MetadataKey); len(tokens) == 1 {
		out.Set(principal.MetadataKey, tokens[0])
	}
	return funds.NewWallets(s.deps.Wallets, out)
}

// walletsFor reads trading wallets as interchange acting for company (the settlement
// engine's instructions name a client's wallets; trading scopes the read to it), and, given
// the venues the service desk records for an operator company, for that operator: trading
// then also shows every client's wallets there.
func (s *Server) walletsFor(company string, venues ...string) (funds.Wallets, error) {
	token, err := s.deps.Signer.Sign(principal.Principal{Kind: principal.KindSystem, System: funds.System, CompanyID: company, VenueIDs: venues})
	if err != nil {
		return funds.Wallets{}, err
	}
	return funds.NewWallets(s.deps.Wallets, metadata.Pairs(principal.MetadataKey, token)), nil
}
