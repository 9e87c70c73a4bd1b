package server_test

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance/server"
)

// TestPolicyListsEveryMethod: a method the policy forgets would be refused to everyone.
func TestPolicyListsEveryMethod(t *testing.T) {
	t.Parallel()
	policy := server.Policy()
	var methods []string
	for _, desc := range []grpc.ServiceDesc{compliancev1.ComplianceService_ServiceDesc, compliancev1.DirectoryService_ServiceDesc, pluginv1.PluginService_ServiceDesc} {
		for _, m := range desc.Methods {
			methods = append(methods, "/"+desc.ServiceName+"/"+m.MethodName)
		}
	}
	for _, m := range methods {
		if _, ok := policy[m]; !ok {
			t.Errorf("policy does not list %s", m)
		}
	}
	if len(policy) != len(methods) {
		t.Errorf("policy lists %d methods, the services have %d", len(policy), len(methods))
	}
}

func TestPolicyRules(t *testing.T) {
	t.Parallel()
	policy := server.Policy()
	company := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZTEST"}
	viewer := principal.Principal{Kind: principal.KindUser, CompanyID: "ZTEST", UserEmail: "v@z", Roles: []string{principal.RoleViewer}}
	interchange := principal.Principal{Kind: principal.KindSystem, System: "interchange"}
	desk := principal.Principal{Kind: principal.KindSystem, System: "servicedesk"}
	tests := []struct {
		method string
		caller principal.Principal
		want   bool
	}{
		{compliancev1.ComplianceService_SetVaspActivation_FullMethodName, company, true},
		{compliancev1.ComplianceService_SetVaspActivation_FullMethodName, viewer, false},
		{compliancev1.ComplianceService_SearchVasps_FullMethodName, viewer, true},
		{compliancev1.ComplianceService_SearchVasps_FullMethodName, interchange, false},
		{compliancev1.DirectoryService_CheckVasp_FullMethodName, interchange, true},
		{compliancev1.DirectoryService_CheckBeneficiary_FullMethodName, company, false},
		{pluginv1.PluginService_Execute_FullMethodName, desk, true},
		{pluginv1.PluginService_Validate_FullMethodName, interchange, false},
	}
	for _, tt := range tests {
		if got := policy[tt.method].Allows(tt.caller); got != tt.want {
			t.Errorf("%s by %s %s: Allows = %v, want %v", tt.method, tt.caller.Kind, tt.caller.System, got, tt.want)
		}
	}
}
