// Package whitelist is interchange's address side: whitelisted addresses (endpoint 9, and the
// service desk's 0x0007-007/008 through the plugin API) and generated settlement wallet
// addresses (endpoint 8).
package whitelist

import (
	"context"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/principal"
)

// Deps is what the address side needs.
type Deps struct {
	DB *mongo.Database
	// Compliance checks VASPs and beneficiaries; calls carry Signer's system principal.
	Compliance compliancev1.DirectoryServiceClient
	Signer     *principal.Signer
	Logger     *slog.Logger
}

// Service serves the address side of interchange.
type Service struct {
	deps Deps
}

// Setup creates the indexes and returns the service.
func Setup(_ context.Context, deps Deps) (*Service, error) {
	return &Service{deps: deps}, nil
}

// Plugin returns the plugin server of interchange's catalog services.
func (s *Service) Plugin() pluginv1.PluginServiceServer { return plugin.NothingYet{} }

// ListSettlementWalletAddresses serves endpoint 8.
func (s *Service) ListSettlementWalletAddresses(context.Context, *interchangev1.ListSettlementWalletAddressesRequest) (*interchangev1.ListSettlementWalletAddressesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not implemented")
}

// ListWhitelistedAddresses serves endpoint 9.
func (s *Service) ListWhitelistedAddresses(context.Context, *interchangev1.ListWhitelistedAddressesRequest) (*interchangev1.ListWhitelistedAddressesResponse, error) {
	return nil, status.Error(codes.Unimplemented, "not implemented")
}
