package app_test

import (
	"testing"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody/app"
	"github.com/zcustody/suite/services/custody/server"
	"github.com/zcustody/suite/services/internal/chaintest"
)

// TestChain serves custody as its binary does and checks its policy through the real
// interceptor chain, method by method; the handlers check no role of their own.
func TestChain(t *testing.T) {
	key := chaintest.KeyFile(t)
	cfg := app.Config{Common: config.Common{ServicePrivateKeyFile: key}, ServicedeskAddr: chaintest.Nowhere(t),
		ComplianceAddr: chaintest.Nowhere(t), RecoveryInterval: 1, RecoveryGrace: 1}
	c := chaintest.Start(t, server.Policy(), app.Register, cfg)
	t.Run("policy", func(t *testing.T) { c.CheckPolicy(t) })
	t.Run("who the handlers no longer check", func(t *testing.T) {
		client := chaintest.ClientCompany
		trustline := custodyv1.CustodyService_ActivateTrustline_FullMethodName
		c.Refused(t, trustline, "a viewer", chaintest.User(client, principal.RoleViewer))
		c.Refused(t, trustline, "a checker", chaintest.User(client, principal.RoleChecker))
		c.Refused(t, trustline, "the company", chaintest.Company(client))
		c.Admitted(t, trustline, "a maker", chaintest.User(client, principal.RoleMaker))
		proposal := custodyv1.CustodyService_GetLegacyWalletProposal_FullMethodName
		c.Refused(t, proposal, "the company (no author)", chaintest.Company(client))
		c.Refused(t, proposal, "a maker", chaintest.User(client, principal.RoleMaker))
		c.Admitted(t, proposal, "a checker", chaintest.User(client, principal.RoleChecker))
		c.Refused(t, custodyv1.CustodyService_ListLedgerFees_FullMethodName, "a system", chaintest.System("servicedesk"))
		c.Refused(t, custodyv1.CustodyService_ListLegacyWallets_FullMethodName, "a system", chaintest.System("servicedesk"))
		for _, m := range []string{custodyv1.CustodyAdminService_RefreshFeeEstimates_FullMethodName, custodyv1.CustodyAdminService_ProposeLegacyWallet_FullMethodName} {
			c.Refused(t, m, "the company", chaintest.Company(client))
			c.Refused(t, m, "a maker and checker", chaintest.User(client, principal.RoleMaker, principal.RoleChecker))
			c.Admitted(t, m, "a system", chaintest.System("settlement-engine"))
		}
		for _, m := range []string{custodyv1.CustodyLedgerService_CheckTransferTarget_FullMethodName, custodyv1.CustodyLedgerService_CreditTransfer_FullMethodName,
			custodyv1.CustodyLedgerService_Reconcile_FullMethodName, custodyv1.CustodyLedgerService_GetSystemAccount_FullMethodName} {
			c.Admitted(t, m, "interchange", chaintest.System(server.InterchangeSystem))
			c.Refused(t, m, "the settlement engine", chaintest.System("settlement-engine"))
			c.Refused(t, m, "the company", chaintest.Company(client))
		}
	})
}
