package server

import (
	"github.com/zcustody/suite/platform/principal"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Policy is who may call each of interchange's gRPC methods (authz), the one place that
// decides it: settlement instructions and withdrawal decisions by a venue's operator (DESIGN.md
// §8: a company that operates a venue, or its makers and checkers; a client is refused before
// its request is read), the reads by any caller of a company (endpoint 8, which sends
// submitter-id, by its users), the settlement engine's API by the settlement engine, the
// plugin API by the service desk. The handlers scope what a caller reads and changes to its
// company and venues, and check no role.
func Policy() authz.Policy {
	operators := authz.Rule{Company: true, Roles: []string{principal.RoleMaker, principal.RoleChecker}, Operators: true}
	engine := authz.System(EngineSystem)
	return authz.Policy{
		interchangev1.InterchangeService_CreateSettlement_FullMethodName:              operators,
		interchangev1.InterchangeService_ConfirmWithdrawal_FullMethodName:             operators,
		interchangev1.InterchangeService_GetSettlementStatus_FullMethodName:           authz.Anyone,
		interchangev1.InterchangeService_SearchSettlements_FullMethodName:             authz.Anyone,
		interchangev1.InterchangeService_SearchWithdrawals_FullMethodName:             authz.Anyone,
		interchangev1.InterchangeService_ListWhitelistedAddresses_FullMethodName:      authz.Anyone,
		interchangev1.InterchangeService_ListSettlementWalletAddresses_FullMethodName: authz.Users,
		interchangev1.SettlementEngineService_AdvanceSettlement_FullMethodName:        engine,
		interchangev1.SettlementEngineService_CreateWithdrawal_FullMethodName:         engine,
		interchangev1.SettlementEngineService_InstructSettlement_FullMethodName:       engine,
		interchangev1.SettlementEngineService_ReconcileTransit_FullMethodName:         engine,
		pluginv1.PluginService_Validate_FullMethodName:                                authz.System(plugin.ServicedeskSystem),
		pluginv1.PluginService_Execute_FullMethodName:                                 authz.System(plugin.ServicedeskSystem),
	}
}
