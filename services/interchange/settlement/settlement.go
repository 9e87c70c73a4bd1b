// Package settlement is interchange's settlement side: settlement instructions (endpoint 3,
// status and search extensions), their lifecycle advanced by the settlement engine, and
// withdrawal confirmation (endpoint 11).
package settlement

import (
	"context"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/principal"
)

// Deps is what the settlement side needs.
type Deps struct {
	DB *mongo.Database
	// Trading moves funds; calls carry Signer's system principal.
	Trading tradingv1.TradingLedgerServiceClient
	Signer  *principal.Signer
	Logger  *slog.Logger
}

// Service serves the settlement side of interchange.
type Service struct {
	deps Deps
}

// Setup creates the indexes and returns the service.
func Setup(_ context.Context, deps Deps) (*Service, error) {
	return &Service{deps: deps}, nil
}

// Engine returns the internal settlement engine API.
func (s *Service) Engine() interchangev1.SettlementEngineServiceServer {
	return interchangev1.UnimplementedSettlementEngineServiceServer{}
}

// CreateSettlement serves endpoint 3.
func (s *Service) CreateSettlement(context.Context, *interchangev1.CreateSettlementRequest) (*interchangev1.CreateSettlementResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not implemented")
}

// GetSettlementStatus serves the status extension.
func (s *Service) GetSettlementStatus(context.Context, *interchangev1.GetSettlementStatusRequest) (*interchangev1.GetSettlementStatusResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not implemented")
}

// SearchSettlements serves the search extension.
func (s *Service) SearchSettlements(context.Context, *interchangev1.SearchSettlementsRequest) (*interchangev1.SearchSettlementsResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not implemented")
}

// ConfirmWithdrawal serves endpoint 11.
func (s *Service) ConfirmWithdrawal(context.Context, *interchangev1.ConfirmWithdrawalRequest) (*interchangev1.ConfirmWithdrawalResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not implemented")
}
