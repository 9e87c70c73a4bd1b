package servicedesk_test

import (
	"errors"
	"testing"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/servicedesk"
)

// TestDecide is the four-eyes rule: the maker confirms their own request; only a CHECKER who
// is not the maker approves or rejects it, a rejection with its reason.
func TestDecide(t *testing.T) {
	t.Parallel()
	maker := servicedesk.Actor{Email: "maker@zt", CompanyID: "ZT", Roles: []string{"MAKER"}}
	makerChecker := servicedesk.Actor{Email: "maker@zt", CompanyID: "ZT", Roles: []string{"MAKER", "CHECKER"}}
	otherMaker := servicedesk.Actor{Email: "other@zt", CompanyID: "ZT", Roles: []string{"MAKER"}}
	checker := servicedesk.Actor{Email: "checker@zt", CompanyID: "ZT", Roles: []string{"CHECKER"}}
	confirming := servicedesk.Request{ID: "R1", Status: "PENDING CONFIRMATION", CreatedBy: "maker@zt", NeedsChecker: true}
	noChecker := confirming
	noChecker.NeedsChecker = false
	authorising := confirming
	authorising.Status = "PENDING AUTHORISATION"
	tests := []struct {
		name      string
		actor     servicedesk.Actor
		request   servicedesk.Request
		decision  servicedesk.Decision
		wantTo    string
		wantCode  string
		wantField string
	}{
		{"maker confirms", maker, confirming, servicedesk.Decision{Type: "Confirm"}, "PENDING AUTHORISATION", "", ""},
		{"maker confirms a service without checker", maker, noChecker, servicedesk.Decision{Type: "Confirm"}, "AUTHORISED", "", ""},
		{"another maker cannot confirm", otherMaker, confirming, servicedesk.Decision{Type: "Confirm"}, "", apperr.CodeForbidden, ""},
		{"a checker cannot confirm", checker, confirming, servicedesk.Decision{Type: "Confirm"}, "", apperr.CodeForbidden, ""},
		{"approve before confirmation", maker, confirming, servicedesk.Decision{Type: "Approve"}, "", apperr.CodeFormat, "request.type"},
		{"checker approves", checker, authorising, servicedesk.Decision{Type: "Approve"}, "AUTHORISED", "", ""},
		{"checker rejects", checker, authorising, servicedesk.Decision{Type: "Reject", RejectReason: "no"}, "REJECTED", "", ""},
		{"rejection without reason", checker, authorising, servicedesk.Decision{Type: "Reject"}, "", apperr.CodeMissing, "request.rejectReason"},
		{"unknown decision", checker, authorising, servicedesk.Decision{Type: "Confirm"}, "", apperr.CodeFormat, "request.type"},
		{"maker holding CHECKER cannot approve their own", makerChecker, authorising, servicedesk.Decision{Type: "Approve"}, "", apperr.CodeForbidden, ""},
		{"a maker cannot approve", otherMaker, authorising, servicedesk.Decision{Type: "Approve"}, "", apperr.CodeForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := servicedesk.Decide(tt.actor, tt.request, tt.decision)
			if tt.wantCode != "" {
				var ae *apperr.Error
				if !errors.As(err, &ae) || ae.Code != tt.wantCode || ae.Field != tt.wantField {
					t.Fatalf("Decide() = %+v, %v; want %s on %q", got, err, tt.wantCode, tt.wantField)
				}
				return
			}
			if err != nil || got.To != tt.wantTo || got.Actor != tt.actor.Email || got.Updated != tt.actor.Email || !got.Allowed(tt.request.Status) {
				t.Errorf("Decide() = %+v, %v; want a move to %s by %s", got, err, tt.wantTo, tt.actor.Email)
			}
		})
	}
}
