package authz_test

import (
	"testing"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/internal/authz"
)

func TestRuleAllows(t *testing.T) {
	t.Parallel()
	company := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZT"}
	viewer := principal.Principal{Kind: principal.KindUser, CompanyID: "ZT", UserEmail: "v@zt", Roles: []string{principal.RoleViewer}}
	maker := principal.Principal{Kind: principal.KindUser, CompanyID: "ZT", UserEmail: "m@zt", Roles: []string{principal.RoleMaker}}
	desk := principal.Principal{Kind: principal.KindSystem, System: "servicedesk"}
	engine := principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"}
	makers := authz.Rule{Company: true, Roles: []string{principal.RoleMaker}}
	tests := []struct {
		name   string
		rule   authz.Rule
		caller principal.Principal
		want   bool
	}{
		{"anyone: company", authz.Anyone, company, true},
		{"anyone: viewer", authz.Anyone, viewer, true},
		{"anyone: not a system", authz.Anyone, desk, false},
		{"users: not a company-level caller", authz.Users, company, false},
		{"makers: a viewer is refused", makers, viewer, false},
		{"makers: a maker", makers, maker, true},
		{"system by name", authz.System("servicedesk"), desk, true},
		{"system of another name", authz.System("servicedesk"), engine, false},
		{"any system", authz.System("*"), engine, true},
		{"no kind", authz.Anyone, principal.Principal{CompanyID: "ZT"}, false},
		{"user without company", authz.Users, principal.Principal{Kind: principal.KindUser, Roles: []string{principal.RoleViewer}}, false},
	}
	for _, tt := range tests {
		if got := tt.rule.Allows(tt.caller); got != tt.want {
			t.Errorf("%s: Allows = %v, want %v", tt.name, got, tt.want)
		}
	}
}
