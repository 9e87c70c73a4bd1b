package server

import (
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Policy is who may call each of compliance's gRPC methods (authz), the one place that
// decides it: endpoint 15 needs the company or one of its makers or checkers, the VASP search
// any caller of a company, the directory any internal system, the plugin API the service
// desk. The handlers scope what a caller sees to its company, and check no role.
func Policy() authz.Policy {
	return authz.Policy{
		compliancev1.ComplianceService_SetVaspActivation_FullMethodName: {Company: true, Roles: []string{principal.RoleMaker, principal.RoleChecker}},
		compliancev1.ComplianceService_SearchVasps_FullMethodName:       authz.Anyone,
		compliancev1.DirectoryService_CheckVasp_FullMethodName:          authz.System("*"),
		compliancev1.DirectoryService_CheckBeneficiary_FullMethodName:   authz.System("*"),
		pluginv1.PluginService_Validate_FullMethodName:                  authz.System(plugin.ServicedeskSystem),
		pluginv1.PluginService_Execute_FullMethodName:                   authz.System(plugin.ServicedeskSystem),
	}
}
