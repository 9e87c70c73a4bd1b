package app_test

import (
	"testing"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance/app"
	"github.com/zcustody/suite/services/compliance/server"
	"github.com/zcustody/suite/services/internal/chaintest"
)

// TestChain serves compliance as its binary does and checks its policy through the real
// interceptor chain, method by method; the handlers check no role of their own.
func TestChain(t *testing.T) {
	c := chaintest.Start(t, server.Policy(), app.Register, app.Config{Common: config.Common{}})
	t.Run("policy", func(t *testing.T) { c.CheckPolicy(t) })
	t.Run("who the handlers no longer check", func(t *testing.T) {
		activation := compliancev1.ComplianceService_SetVaspActivation_FullMethodName
		c.Refused(t, activation, "a viewer", chaintest.User(chaintest.ClientCompany, principal.RoleViewer))
		c.Admitted(t, activation, "a maker", chaintest.User(chaintest.ClientCompany, principal.RoleMaker))
		c.Admitted(t, activation, "the company", chaintest.Company(chaintest.ClientCompany))
		for _, m := range []string{compliancev1.DirectoryService_CheckVasp_FullMethodName, compliancev1.DirectoryService_CheckBeneficiary_FullMethodName} {
			c.Refused(t, m, "a company", chaintest.Company(chaintest.ClientCompany))
			c.Refused(t, m, "a maker and checker", chaintest.User(chaintest.ClientCompany, principal.RoleMaker, principal.RoleChecker))
			c.Admitted(t, m, "custody", chaintest.System("custody"))
			c.Admitted(t, m, "a trusted system of no other rights", chaintest.System(chaintest.Intruder))
		}
	})
}
