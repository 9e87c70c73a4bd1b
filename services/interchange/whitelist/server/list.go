package server

import (
	"context"
	"unicode/utf8"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/page"
)

// ListSettlementWalletAddresses serves endpoint 8: the generated addresses of the caller's
// company's venue settlement wallets, each signed by the operator.
func (s *Server) ListSettlementWalletAddresses(ctx context.Context, req *interchangev1.ListSettlementWalletAddressesRequest) (*interchangev1.ListSettlementWalletAddressesResponse, error) {
	company, err := companyOf(ctx)
	if err != nil {
		return nil, err
	}
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, req.GetSort(), "id", "createdAt")
	if err != nil {
		return nil, err
	}
	f := address.SettlementFilter{CompanyID: company, Page: pg}
	if f.Addresses, err = page.Filter("addresses", req.GetAddresses()); err != nil {
		return nil, err
	}
	if f.Currencies, err = page.Filter("currencies", req.GetCurrencies()); err != nil {
		return nil, err
	}
	addrs, total, err := s.book.Settlements(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &interchangev1.ListSettlementWalletAddressesResponse{Items: make([]*commonv1.GeneratedAddress, 0, len(addrs)), Total: int32(total)}
	for _, a := range addrs {
		resp.Items = append(resp.Items, a.ToProto())
	}
	return resp, nil
}

// ListWhitelistedAddresses serves endpoint 9: the caller's company's whitelisted addresses,
// oldest first.
func (s *Server) ListWhitelistedAddresses(ctx context.Context, req *interchangev1.ListWhitelistedAddressesRequest) (*interchangev1.ListWhitelistedAddressesResponse, error) {
	company, err := companyOf(ctx)
	if err != nil {
		return nil, err
	}
	f, err := whitelistFilter(company, req)
	if err != nil {
		return nil, err
	}
	found, total, err := s.book.Search(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &interchangev1.ListWhitelistedAddressesResponse{Items: make([]*interchangev1.WhitelistedAddress, 0, len(found)), Total: int32(total)}
	for _, w := range found {
		resp.Items = append(resp.Items, &interchangev1.WhitelistedAddress{Address: w.Address, AddressPurpose: w.Purposes, Status: w.Status,
			CreatedAt: apitime.Format(w.CreatedAt), Blockchain: w.Blockchain, BlockchainId: address.BlockchainID(w.Blockchain)})
	}
	return resp, nil
}

func whitelistFilter(company string, req *interchangev1.ListWhitelistedAddressesRequest) (address.Filter, error) {
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, nil, "createdAt")
	if err != nil {
		return address.Filter{}, err
	}
	if utf8.RuneCountInString(req.GetAddressFragment()) > address.MaxFragmentLength {
		return address.Filter{}, apperr.Invalid(apperr.CodeLength, "addressFragment", "addressFragment must be at most %d characters", address.MaxFragmentLength)
	}
	f := address.Filter{CompanyID: company, Fragment: req.GetAddressFragment(), Page: pg}
	for _, field := range []struct {
		name    string
		values  []string
		dst     *[]string
		allowed []string
	}{
		{"addresses", req.GetAddresses(), &f.Addresses, nil},
		{"blockchains", req.GetBlockchains(), &f.Blockchains, ledger.Ledgers()},
		{"blockchainIds", req.GetBlockchainIds(), &f.BlockchainIDs, address.BlockchainIDs()},
		{"statuses", req.GetStatuses(), &f.Statuses, address.Statuses()},
	} {
		if *field.dst, err = page.Filter(field.name, field.values, field.allowed...); err != nil {
			return address.Filter{}, err
		}
	}
	return f, nil
}
