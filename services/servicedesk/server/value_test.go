package server_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// request is the maker's new withdrawal out of wallet, created (not confirmed), with the
// owner reporting subject for it.
func (q *quorumDesk) request(wallet string, subject *pluginv1.PolicySubject) (servicedesk.Request, string, error) {
	q.owner.report(subject)
	e2e := uuid.NewString()
	r, err := q.desk.Create(context.Background(), q.actor("m@zq"), servicedesk.Draft{ServiceID: servicedesk.ServiceTradingWithdrawal,
		EndToEndID: e2e, Payload: []byte(`{"sender":"` + wallet + `","destination":"ZQ-CW-1","amount":"1"}`)})
	return r, e2e, err
}

// TestOwnersValueDecidesTheRule: a request is decided by the rule matching what its owner
// reports, the USD value and destination kind included, and keeps that value: at or above a
// rule's minUsd that rule, below it the next; without a value the strictest rule that
// matches on everything else; a destination the rule does not name, not that rule. A BLOCK
// rule over a threshold refuses the request and nothing is stored. An owner reporting a
// value that is not a canonical decimal is an internal error, never a decision.
func TestOwnersValueDecidesTheRule(t *testing.T) {
	t.Parallel()
	q := newQuorumDesk(t, quorumTeam)
	q.adopt(t, 1,
		policy.Rule{Name: "huge", MinUSD: "1000000", Action: policy.ActionBlock},
		policy.Rule{Name: "large", MinUSD: "10000", Destinations: []string{policy.DestinationOwnCustody}, Action: policy.ActionApprove,
			Combine: policy.CombineAnd, Groups: []policy.Group{treasury, risk}},
		catchAll)
	toCustody := func(usd string) *pluginv1.PolicySubject {
		return &pluginv1.PolicySubject{WalletId: "ZQ-TW-1", Currency: "BTC", UsdValue: usd, Destination: policy.DestinationOwnCustody}
	}
	tests := []struct {
		name     string
		give     *pluginv1.PolicySubject
		wantRule string
		wantUSD  string
	}{
		{"at the threshold", toCustody("10000"), "large", "10000"},
		{"above it", toCustody("650000.5"), "large", "650000.5"},
		{"below it", toCustody("9999.99"), "rest", "9999.99"},
		{"no price: the strictest rule, the block", toCustody(""), "huge", ""},
		{"over the threshold, elsewhere", &pluginv1.PolicySubject{UsdValue: "50000", Destination: policy.DestinationOther}, "rest", "50000"},
		{"the owner reports nothing", nil, "huge", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, e2e, err := q.request("ZQ-TW-1", tt.give)
			if tt.wantRule == "huge" {
				wantCode(t, "a request the block rule decides", err, apperr.CodeForbidden)
				if _, err := q.st.RequestByEndToEnd(context.Background(), "ZQ", e2e); !errors.Is(err, apperr.ErrNotFound) {
					t.Errorf("a blocked request was stored: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			stored, err := q.st.Request(context.Background(), "ZQ", r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Rule == nil || stored.Rule.Name != tt.wantRule || stored.PolicyVersion != 1 || stored.USD != tt.wantUSD {
				t.Errorf("stored request decided by %+v of version %d, worth %q; want rule %s of version 1, worth %q",
					stored.Rule, stored.PolicyVersion, stored.USD, tt.wantRule, tt.wantUSD)
			}
		})
	}

	// Without a price the block rule is the strictest of those that could apply; a policy
	// without it takes the large rule (three people) over the catch-all (one).
	q.adopt(t, 2, policy.Rule{Name: "large", MinUSD: "10000", Action: policy.ActionApprove, Combine: policy.CombineAnd,
		Groups: []policy.Group{treasury, risk}}, catchAll)
	if r, _, err := q.request("ZQ-TW-1", toCustody("")); err != nil || r.Rule.Name != "large" || r.USD != "" {
		t.Errorf("no price under version 2: %+v, %q, %v; want the large rule, no value", r.Rule, r.USD, err)
	}

	_, e2e, err := q.request("ZQ-TW-1", toCustody("1e6"))
	var e *apperr.Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("an owner's value in exponent form: %v, want an internal error", err)
	}
	if _, err := q.st.RequestByEndToEnd(context.Background(), "ZQ", e2e); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("a request with an unreadable value was stored: %v", err)
	}
}
