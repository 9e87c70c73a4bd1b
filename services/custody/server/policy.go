package server

import (
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Policy is who may call each of custody's gRPC methods (authz), the one place that decides
// it: the reads (endpoints 12 and 14, the statement extensions) any caller of a company; endpoint 13 a MAKER; endpoint
// 4 the company, or a CHECKER sending it as themselves (the signed author is checked by the
// handler); the proposal endpoint 4 signs a CHECKER; the admin API any internal system; the
// plugin API the service desk; the ledger API (transfers from trading, reconciliation,
// system-account reads) interchange alone (its token signed with its own key: the verifier
// believes a system only from itself). The handlers scope what a caller reads and changes to
// its company, and check no role.
func Policy() authz.Policy {
	return authz.Policy{
		custodyv1.CustodyService_ListLedgerFees_FullMethodName:            authz.Anyone,
		custodyv1.CustodyService_ListLegacyWallets_FullMethodName:         authz.Anyone,
		custodyv1.CustodyService_ListWalletHistory_FullMethodName:         authz.Anyone,
		custodyv1.CustodyService_GetWalletBalanceAsOf_FullMethodName:      authz.Anyone,
		custodyv1.CustodyService_ActivateTrustline_FullMethodName:         {Roles: []string{principal.RoleMaker}},
		custodyv1.CustodyService_ActOnLegacyWallet_FullMethodName:         {Company: true, Roles: []string{principal.RoleChecker}},
		custodyv1.CustodyService_GetLegacyWalletProposal_FullMethodName:   {Roles: []string{principal.RoleChecker}},
		custodyv1.CustodyAdminService_RefreshFeeEstimates_FullMethodName:  authz.System("*"),
		custodyv1.CustodyAdminService_ProposeLegacyWallet_FullMethodName:  authz.System("*"),
		custodyv1.CustodyLedgerService_CheckTransferTarget_FullMethodName: authz.System(InterchangeSystem),
		custodyv1.CustodyLedgerService_CreditTransfer_FullMethodName:      authz.System(InterchangeSystem),
		custodyv1.CustodyLedgerService_Reconcile_FullMethodName:           authz.System(InterchangeSystem),
		custodyv1.CustodyLedgerService_GetSystemAccount_FullMethodName:    authz.System(InterchangeSystem),
		pluginv1.PluginService_Validate_FullMethodName:                    authz.System(plugin.ServicedeskSystem),
		pluginv1.PluginService_Execute_FullMethodName:                     authz.System(plugin.ServicedeskSystem),
	}
}
