package authz_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	operators := authz.Rule{Company: true, Roles: []string{principal.RoleMaker}, Operators: true}
	venue := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZBYBIT", VenueIDs: []string{"BYBIT"}}
	venueMaker := principal.Principal{Kind: principal.KindUser, CompanyID: "ZBYBIT", UserEmail: "m@zbybit", Roles: []string{principal.RoleMaker}, VenueIDs: []string{"BYBIT"}}
	venueViewer := principal.Principal{Kind: principal.KindUser, CompanyID: "ZBYBIT", UserEmail: "v@zbybit", Roles: []string{principal.RoleViewer}, VenueIDs: []string{"BYBIT"}}
	emptyVenue := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZX", VenueIDs: []string{""}}
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
		{"operators: a venue's company", operators, venue, true},
		{"operators: a venue's maker", operators, venueMaker, true},
		{"operators: a venue's viewer", operators, venueViewer, false},
		{"operators: a client company", operators, company, false},
		{"operators: a client's maker", operators, maker, false},
		{"operators: an empty venue id is no venue", operators, emptyVenue, false},
		{"operators: narrows no system", authz.Rule{Operators: true, Systems: []string{"*"}}, engine, true},
		{"no kind", authz.Anyone, principal.Principal{CompanyID: "ZT"}, false},
		{"user without company", authz.Users, principal.Principal{Kind: principal.KindUser, Roles: []string{principal.RoleViewer}}, false},
	}
	for _, tt := range tests {
		if got := tt.rule.Allows(tt.caller); got != tt.want {
			t.Errorf("%s: Allows = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRefusalSaysWhy: a company refused only because it operates no venue is told so, by
// name; every other refusal names the method alone.
func TestRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	const method = "/interchange.v1.InterchangeService/CreateSettlement"
	policy := authz.Policy{method: {Company: true, Roles: []string{principal.RoleMaker}, Operators: true}}
	call := policy.UnaryServerInterceptor()
	tests := []struct {
		name   string
		caller principal.Principal
		want   string
	}{
		{"client company", principal.Principal{Kind: principal.KindCompany, CompanyID: "ZTEST"},
			"the caller may not use CreateSettlement: company ZTEST operates no trading venue"},
		{"client viewer", principal.Principal{Kind: principal.KindUser, CompanyID: "ZTEST", UserEmail: "v@ztest", Roles: []string{principal.RoleViewer}},
			"the caller may not use CreateSettlement"},
		{"venue viewer", principal.Principal{Kind: principal.KindUser, CompanyID: "ZBYBIT", UserEmail: "v@zbybit", Roles: []string{principal.RoleViewer}, VenueIDs: []string{"BYBIT"}},
			"the caller may not use CreateSettlement"},
		{"a system", principal.Principal{Kind: principal.KindSystem, System: "servicedesk"}, "the caller may not use CreateSettlement"},
	}
	for _, tt := range tests {
		ctx := principal.NewContext(context.Background(), tt.caller)
		_, err := call(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, func(context.Context, any) (any, error) { return nil, nil })
		st := status.Convert(err)
		if st.Code() != codes.PermissionDenied || st.Message() != tt.want {
			t.Errorf("%s: %v, want PermissionDenied %q", tt.name, err, tt.want)
		}
	}
}
