// Package server is the interchange service's gRPC edge: it serves InterchangeService by
// handing each method to the side that owns it.
package server

import (
	"context"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
)

// Addresses is the address side (package whitelist).
type Addresses interface {
	ListSettlementWalletAddresses(context.Context, *interchangev1.ListSettlementWalletAddressesRequest) (*interchangev1.ListSettlementWalletAddressesResponse, error)
	ListWhitelistedAddresses(context.Context, *interchangev1.ListWhitelistedAddressesRequest) (*interchangev1.ListWhitelistedAddressesResponse, error)
}

// Settlements is the settlement side (package settlement).
type Settlements interface {
	CreateSettlement(context.Context, *interchangev1.CreateSettlementRequest) (*interchangev1.CreateSettlementResponse, error)
	GetSettlementStatus(context.Context, *interchangev1.GetSettlementStatusRequest) (*interchangev1.GetSettlementStatusResponse, error)
	SearchSettlements(context.Context, *interchangev1.SearchSettlementsRequest) (*interchangev1.SearchSettlementsResponse, error)
	ConfirmWithdrawal(context.Context, *interchangev1.ConfirmWithdrawalRequest) (*interchangev1.ConfirmWithdrawalResponse, error)
}

// Server implements interchangev1.InterchangeServiceServer.
type Server struct {
	interchangev1.UnimplementedInterchangeServiceServer
	addresses   Addresses
	settlements Settlements
}

var _ interchangev1.InterchangeServiceServer = (*Server)(nil)

// New returns the server.
func New(addresses Addresses, settlements Settlements) *Server {
	return &Server{addresses: addresses, settlements: settlements}
}

// CreateSettlement serves endpoint 3.
func (s *Server) CreateSettlement(ctx context.Context, req *interchangev1.CreateSettlementRequest) (*interchangev1.CreateSettlementResponse, error) {
	return s.settlements.CreateSettlement(ctx, req)
}

// GetSettlementStatus serves the settlement status extension.
func (s *Server) GetSettlementStatus(ctx context.Context, req *interchangev1.GetSettlementStatusRequest) (*interchangev1.GetSettlementStatusResponse, error) {
	return s.settlements.GetSettlementStatus(ctx, req)
}

// SearchSettlements serves the settlement search extension.
func (s *Server) SearchSettlements(ctx context.Context, req *interchangev1.SearchSettlementsRequest) (*interchangev1.SearchSettlementsResponse, error) {
	return s.settlements.SearchSettlements(ctx, req)
}

// ConfirmWithdrawal serves endpoint 11.
func (s *Server) ConfirmWithdrawal(ctx context.Context, req *interchangev1.ConfirmWithdrawalRequest) (*interchangev1.ConfirmWithdrawalResponse, error) {
	return s.settlements.ConfirmWithdrawal(ctx, req)
}

// ListSettlementWalletAddresses serves endpoint 8.
func (s *Server) ListSettlementWalletAddresses(ctx context.Context, req *interchangev1.ListSettlementWalletAddressesRequest) (*interchangev1.ListSettlementWalletAddressesResponse, error) {
	return s.addresses.ListSettlementWalletAddresses(ctx, req)
}

// ListWhitelistedAddresses serves endpoint 9.
func (s *Server) ListWhitelistedAddresses(ctx context.Context, req *interchangev1.ListWhitelistedAddressesRequest) (*interchangev1.ListWhitelistedAddressesResponse, error) {
	return s.addresses.ListWhitelistedAddresses(ctx, req)
}
