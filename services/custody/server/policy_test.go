package server_test

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/custody/server"
)

// TestPolicyListsEveryMethod: a method the policy forgets would be refused to everyone.
func TestPolicyListsEveryMethod(t *testing.T) {
	t.Parallel()
	policy := server.Policy()
	var methods []string
	for _, desc := range []grpc.ServiceDesc{custodyv1.CustodyService_ServiceDesc, custodyv1.CustodyAdminService_ServiceDesc,
		custodyv1.CustodyLedgerService_ServiceDesc, pluginv1.PluginService_ServiceDesc} {
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
	user := func(role string) principal.Principal {
		return principal.Principal{Kind: principal.KindUser, CompanyID: "ZTEST", UserEmail: role + "@z", Roles: []string{role}}
	}
	company := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZTEST"}
	engine := principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"}
	desk := principal.Principal{Kind: principal.KindSystem, System: "servicedesk"}
	interchange := principal.Principal{Kind: principal.KindSystem, System: "interchange"}
	tests := []struct {
		method string
		caller principal.Principal
		want   bool
	}{
		{custodyv1.CustodyService_ListLedgerFees_FullMethodName, user(principal.RoleViewer), true},
		{custodyv1.CustodyService_ListLedgerFees_FullMethodName, engine, false},
		{custodyv1.CustodyService_ListLegacyWallets_FullMethodName, company, true},
		{custodyv1.CustodyService_ActivateTrustline_FullMethodName, user(principal.RoleMaker), true},
		{custodyv1.CustodyService_ActivateTrustline_FullMethodName, user(principal.RoleChecker), false},
		{custodyv1.CustodyService_ActivateTrustline_FullMethodName, user(principal.RoleViewer), false},
		{custodyv1.CustodyService_ActivateTrustline_FullMethodName, company, false},
		{custodyv1.CustodyService_ActOnLegacyWallet_FullMethodName, company, true},
		{custodyv1.CustodyService_ActOnLegacyWallet_FullMethodName, user(principal.RoleChecker), true},
		{custodyv1.CustodyService_ActOnLegacyWallet_FullMethodName, user(principal.RoleMaker), false},
		{custodyv1.CustodyService_ActOnLegacyWallet_FullMethodName, engine, false},
		{custodyv1.CustodyAdminService_RefreshFeeEstimates_FullMethodName, engine, true},
		{custodyv1.CustodyAdminService_RefreshFeeEstimates_FullMethodName, company, false},
		{custodyv1.CustodyAdminService_ProposeLegacyWallet_FullMethodName, engine, true},
		{custodyv1.CustodyAdminService_ProposeLegacyWallet_FullMethodName, user(principal.RoleMaker), false},
		{custodyv1.CustodyLedgerService_CheckTransferTarget_FullMethodName, interchange, true},
		{custodyv1.CustodyLedgerService_CheckTransferTarget_FullMethodName, engine, false},
		{custodyv1.CustodyLedgerService_CreditTransfer_FullMethodName, interchange, true},
		{custodyv1.CustodyLedgerService_CreditTransfer_FullMethodName, desk, false},
		{custodyv1.CustodyLedgerService_CreditTransfer_FullMethodName, company, false},
		{custodyv1.CustodyLedgerService_Reconcile_FullMethodName, interchange, true},
		{custodyv1.CustodyLedgerService_Reconcile_FullMethodName, user(principal.RoleChecker), false},
		{custodyv1.CustodyLedgerService_GetSystemAccount_FullMethodName, interchange, true},
		{custodyv1.CustodyLedgerService_GetSystemAccount_FullMethodName, engine, false},
		{pluginv1.PluginService_Execute_FullMethodName, desk, true},
		{pluginv1.PluginService_Validate_FullMethodName, engine, false},
	}
	for _, tt := range tests {
		if got := policy[tt.method].Allows(tt.caller); got != tt.want {
			t.Errorf("%s by %s %s%v: Allows = %v, want %v", tt.method, tt.caller.Kind, tt.caller.System, tt.caller.Roles, got, tt.want)
		}
	}
}
