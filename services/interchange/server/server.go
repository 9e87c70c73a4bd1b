// Package server is the interchange service's gRPC edge: InterchangeService (settlements,
// withdrawal decisions, and the address side's reads) and the internal SettlementEngineService.
// It turns protos into the aggregates of packages settlement and withdrawal and back; the
// work is theirs.
package server

import (
	"context"

	"github.com/zcustody/suite/platform/principal"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
)

// Addresses is the address side (package whitelist).
type Addresses interface {
	ListSettlementWalletAddresses(context.Context, *interchangev1.ListSettlementWalletAddressesRequest) (*interchangev1.ListSettlementWalletAddressesResponse, error)
	ListWhitelistedAddresses(context.Context, *interchangev1.ListWhitelistedAddressesRequest) (*interchangev1.ListWhitelistedAddressesResponse, error)
}

// Deps is what the server hands its work to.
type Deps struct {
	Addresses   Addresses
	Settlements *settlement.Service
	Withdrawals *withdrawal.Service
	// Wallets reads trading wallets for the settlement checks, as the instructing company.
	Wallets tradingv1.TradingServiceClient
	// Signer signs interchange's principal when it reads trading for a company.
	Signer *principal.Signer
	// Rules bound every instruction (whether payables are allowed depends on the caller).
	Rules settlement.Rules
	// Custody checks the custody wallet a requested withdrawal credits.
	Custody CustodyTargets
	// Transit reads the in-transit accounts of trading and custody.
	Transit withdrawal.Transit
	// Prices values requested withdrawals and instructions in US dollars for the approval
	// policy (funds.Prices); nil values none.
	Prices Valuer
}

// Valuer values an amount in US dollars (funds.Prices).
type Valuer interface {
	// USDValue is amount of currency in US dollars, a canonical decimal; "" without a recent
	// price (never an error: a request is never refused for it).
	USDValue(ctx context.Context, currency, amount string) string
}

// Server implements interchangev1.InterchangeServiceServer.
type Server struct {
	interchangev1.UnimplementedInterchangeServiceServer
	deps Deps
}

var _ interchangev1.InterchangeServiceServer = (*Server)(nil)

// New returns the server.
func New(deps Deps) *Server { return &Server{deps: deps} }

// Engine returns the internal settlement engine API over the same work.
func (s *Server) Engine() *Engine { return &Engine{srv: s} }

// ListSettlementWalletAddresses serves endpoint 8.
func (s *Server) ListSettlementWalletAddresses(ctx context.Context, req *interchangev1.ListSettlementWalletAddressesRequest) (*interchangev1.ListSettlementWalletAddressesResponse, error) {
	return s.deps.Addresses.ListSettlementWalletAddresses(ctx, req)
}

// ListWhitelistedAddresses serves endpoint 9.
func (s *Server) ListWhitelistedAddresses(ctx context.Context, req *interchangev1.ListWhitelistedAddressesRequest) (*interchangev1.ListWhitelistedAddressesResponse, error) {
	return s.deps.Addresses.ListWhitelistedAddresses(ctx, req)
}
