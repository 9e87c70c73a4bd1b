// Package server is the trading service's gRPC edge: endpoints 2 and 7 (TradingService) and
// the service desk's plugin API for the trading-wallet services (PluginService).
package server

import (
	"context"

	"github.com/zcustody/suite/platform/principal"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/internal/statement"
	"github.com/zcustody/suite/services/trading"
)

// Reader is what the search handlers need from the store.
type Reader interface {
	SearchWallets(ctx context.Context, f trading.WalletFilter) ([]trading.Wallet, int64, error)
	ListAddresses(ctx context.Context, f trading.AddressFilter) ([]trading.VaultAddress, int64, error)
	Prices(ctx context.Context) (trading.Prices, error)
	HistoryReader
}

// Server implements tradingv1.TradingServiceServer.
type Server struct {
	tradingv1.UnimplementedTradingServiceServer
	store      Reader
	statements statement.Server
}

var _ tradingv1.TradingServiceServer = (*Server)(nil)

// New returns the server.
func New(store Reader) *Server {
	return &Server{store: store, statements: statement.New(store, tradingCurrency)}
}

// SearchWallets serves endpoint 2: the caller's company's trading wallets, and for a venue
// operator also every client's wallets held at its venues.
func (s *Server) SearchWallets(ctx context.Context, req *tradingv1.SearchWalletsRequest) (*tradingv1.SearchWalletsResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	f, err := walletFilter(p.CompanyID, req)
	if err != nil {
		return nil, err
	}
	// A venue's operator also sees its clients' wallets there; so does interchange acting
	// for an operator (the venues in its token are the service desk's record of the company,
	// given with the operator's service request). No other system claims venues.
	if p.Kind != principal.KindSystem || p.System == MovementSystem {
		f.OperatedVenues = p.Venues()
	}
	wallets, total, err := s.store.SearchWallets(ctx, f)
	if err != nil {
		return nil, err
	}
	prices, err := s.store.Prices(ctx)
	if err != nil {
		return nil, err
	}
	resp := &tradingv1.SearchWalletsResponse{Items: make([]*tradingv1.Wallet, 0, len(wallets)), Total: int32(total)}
	for _, w := range wallets {
		item, err := walletProto(w, prices)
		if err != nil {
			return nil, err
		}
		resp.Items = append(resp.Items, item)
	}
	return resp, nil
}

func walletFilter(company string, req *tradingv1.SearchWalletsRequest) (trading.WalletFilter, error) {
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, req.GetSort(), "id", "createdAt", "updatedAt")
	if err != nil {
		return trading.WalletFilter{}, err
	}
	f := trading.WalletFilter{CompanyID: company, Page: pg}
	for _, field := range []struct {
		name    string
		values  []string
		dst     *[]string
		allowed []string
	}{
		{"ids", req.GetIds(), &f.IDs, nil},
		{"venueIds", req.GetVenueIds(), &f.VenueIDs, nil},
		{"names", req.GetNames(), &f.Names, nil},
		{"statuses", req.GetStatuses(), &f.Statuses, trading.Statuses()},
		{"companyIds", req.GetCompanyIds(), &f.CompanyIDs, nil},
		{"currencies", req.GetCurrencies(), &f.Currencies, nil},
		{"createdBy", req.GetCreatedBy(), &f.CreatedBy, nil},
	} {
		if *field.dst, err = page.Filter(field.name, field.values, field.allowed...); err != nil {
			return trading.WalletFilter{}, err
		}
	}
	return f, nil
}

// ListVaultAddresses serves endpoint 7: the generated addresses of the caller's company's
// trading wallets (of deactivated wallets too).
func (s *Server) ListVaultAddresses(ctx context.Context, req *tradingv1.ListVaultAddressesRequest) (*tradingv1.ListVaultAddressesResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, req.GetSort(), "id", "createdAt")
	if err != nil {
		return nil, err
	}
	f := trading.AddressFilter{CompanyID: p.CompanyID, Page: pg}
	if f.Addresses, err = page.Filter("addresses", req.GetAddresses()); err != nil {
		return nil, err
	}
	if f.WalletIDs, err = page.Filter("walletIds", req.GetWalletIds()); err != nil {
		return nil, err
	}
	if f.Currencies, err = page.Filter("currencies", req.GetCurrencies()); err != nil {
		return nil, err
	}
	addrs, total, err := s.store.ListAddresses(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &tradingv1.ListVaultAddressesResponse{Items: make([]*commonv1.GeneratedAddress, 0, len(addrs)), Total: int32(total)}
	for _, a := range addrs {
		resp.Items = append(resp.Items, a.ToProto())
	}
	return resp, nil
}
