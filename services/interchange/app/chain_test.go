package app_test

import (
	"testing"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/internal/chaintest"
)

// TestChain serves interchange as its binary does and checks its policy through the real
// interceptor chain, method by method; the handlers check no role of their own.
func TestChain(t *testing.T) {
	cfg := app.Config{Common: config.Common{ServicePrivateKeyFile: chaintest.KeyFile(t)}, TradingAddr: chaintest.Nowhere(t),
		CustodyAddr: chaintest.Nowhere(t), ComplianceAddr: chaintest.Nowhere(t), SweepInterval: 1, RecoveryGrace: 1, SettlementLease: 1}
	c := chaintest.Start(t, server.Policy(), app.Register, cfg)
	t.Run("policy", func(t *testing.T) { c.CheckPolicy(t) })
	client, operator := chaintest.ClientCompany, chaintest.OperatorCompany
	// Settlement instructions and withdrawal decisions are the venue's (DESIGN.md §8): its
	// operator's company, makers and checkers; a client, even its maker, and a viewer are
	// refused by the policy, before the request is read.
	t.Run("the venue's side", func(t *testing.T) {
		for _, m := range []string{interchangev1.InterchangeService_CreateSettlement_FullMethodName, interchangev1.InterchangeService_ConfirmWithdrawal_FullMethodName} {
			c.Admitted(t, m, "the operator", chaintest.Company(operator, chaintest.OperatedVenue))
			c.Admitted(t, m, "the operator's maker", chaintest.User(operator, principal.RoleMaker))
			c.Admitted(t, m, "the operator's checker", chaintest.User(operator, principal.RoleChecker))
			c.Refused(t, m, "the operator's viewer", chaintest.User(operator, principal.RoleViewer))
			c.Refused(t, m, "a client", chaintest.Company(client))
			c.Refused(t, m, "a client's maker", chaintest.User(client, principal.RoleMaker))
			c.Refused(t, m, "a company whose only venue id is empty", chaintest.Company(client, ""))
			c.Refused(t, m, "the settlement engine", chaintest.System(server.EngineSystem))
		}
		for _, m := range []string{interchangev1.InterchangeService_SearchSettlements_FullMethodName, interchangev1.InterchangeService_SearchWithdrawals_FullMethodName,
			interchangev1.InterchangeService_GetSettlementStatus_FullMethodName} {
			c.Admitted(t, m, "a client's viewer", chaintest.User(client, principal.RoleViewer))
			c.Admitted(t, m, "a client", chaintest.Company(client))
		}
	})
	// The settlement engine's API is the settlement engine's alone; a system naming itself
	// the engine under another key is not believed.
	t.Run("the settlement engine", func(t *testing.T) {
		engine := []string{interchangev1.SettlementEngineService_AdvanceSettlement_FullMethodName, interchangev1.SettlementEngineService_InstructSettlement_FullMethodName,
			interchangev1.SettlementEngineService_CreateWithdrawal_FullMethodName, interchangev1.SettlementEngineService_ReconcileTransit_FullMethodName}
		impostor := principal.Principal{Kind: principal.KindSystem, System: server.EngineSystem}
		for _, m := range engine {
			c.Admitted(t, m, "the settlement engine", chaintest.System(server.EngineSystem))
			c.Unauthenticated(t, m, "the engine's name in interchange's token", c.TokenOf(t, "interchange", impostor))
			for _, who := range []string{"interchange", "servicedesk", "gateway", chaintest.Intruder} {
				c.Refused(t, m, who, chaintest.System(who))
			}
			c.Refused(t, m, "the operator", chaintest.Company(operator, chaintest.OperatedVenue))
		}
	})
}
