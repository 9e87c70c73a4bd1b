package principal_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
)

func TestCallerHelpers(t *testing.T) {
	t.Parallel()
	company := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZTEST", VenueIDs: []string{"BYBIT"}}
	viewer := principal.Principal{Kind: principal.KindUser, CompanyID: "ZTEST", UserEmail: "v@ztest.example", Roles: []string{principal.RoleViewer}}
	forCompany := principal.Principal{Kind: principal.KindSystem, System: "interchange", CompanyID: "ZTEST"}
	system := principal.Principal{Kind: principal.KindSystem, System: "interchange"}
	anonymous := principal.Principal{Kind: principal.KindUser, CompanyID: "ZTEST"}
	homeless := principal.Principal{Kind: principal.KindUser, UserEmail: "v@ztest.example", Roles: []string{principal.RoleViewer}}
	type helper func(context.Context) (principal.Principal, error)
	tests := []struct {
		name   string
		helper helper
		caller *principal.Principal // nil: no caller in the context
		want   codes.Code
	}{
		{"company: company-level caller", principal.Company, &company, codes.OK},
		{"company: API user", principal.Company, &viewer, codes.OK},
		{"company: a system acting for a company", principal.Company, &forCompany, codes.OK},
		{"company: a system acting for none", principal.Company, &system, codes.PermissionDenied},
		{"company: a user of no company", principal.Company, &homeless, codes.PermissionDenied},
		{"company: nobody", principal.Company, nil, codes.Unauthenticated},
		{"user: API user", principal.User, &viewer, codes.OK},
		{"user: company-level caller", principal.User, &company, codes.PermissionDenied},
		{"user: a system acting for a company", principal.User, &forCompany, codes.PermissionDenied},
		{"user: without e-mail", principal.User, &anonymous, codes.PermissionDenied},
		{"user: of no company", principal.User, &homeless, codes.PermissionDenied},
		{"user: nobody", principal.User, nil, codes.Unauthenticated},
	}
	for _, tt := range tests {
		ctx := context.Background()
		if tt.caller != nil {
			ctx = principal.NewContext(ctx, *tt.caller)
		}
		got, err := tt.helper(ctx)
		if tt.want == codes.OK {
			if err != nil {
				t.Errorf("%s: %v, want the caller", tt.name, err)
			} else if diff := cmp.Diff(*tt.caller, got); diff != "" {
				t.Errorf("%s: caller mismatch (-want +got):\n%s", tt.name, diff)
			}
			continue
		}
		var appErr *apperr.Error
		if !errors.As(err, &appErr) || appErr.Status != tt.want {
			t.Errorf("%s: %v, want an apperr with %s", tt.name, err, tt.want)
			continue
		}
		wantCode := map[codes.Code]string{codes.PermissionDenied: apperr.CodeForbidden, codes.Unauthenticated: apperr.CodeUnauthorized}[tt.want]
		if appErr.Code != wantCode {
			t.Errorf("%s: ER code %s, want %s", tt.name, appErr.Code, wantCode)
		}
		if !cmp.Equal(got, principal.Principal{}) {
			t.Errorf("%s: refused, yet returned %+v", tt.name, got)
		}
	}
}
