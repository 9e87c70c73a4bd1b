package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

const withdrawal = "0x0013-004" // any catalog id: the policy only compares it

// treasuryAndRisk is the example: above 100,000 USD, two of treasury and one of
// risk; above 10,000 USD, one of treasury; withdrawals to other addresses blocked; policy
// changes by two admins; everything else one CHECKER.
func treasuryAndRisk() policy.Policy {
	return policy.Policy{CompanyID: "ZTEST", Version: 3, Rules: []policy.Rule{
		{Name: "no unknown destinations", Operations: []string{withdrawal}, Destinations: []string{policy.DestinationOther}, Action: policy.ActionBlock},
		{Name: "large", Operations: []string{withdrawal}, MinUSD: "100000", Action: policy.ActionApprove, Combine: policy.CombineAnd,
			Groups: []policy.Group{{Name: "treasury", Users: []string{"t1@z", "t2@z", "t3@z", "both@z"}, Threshold: 2}, {Name: "risk", Users: []string{"r1@z", "both@z"}, Threshold: 1}}},
		{Name: "medium", Operations: []string{withdrawal}, MinUSD: "10000", Action: policy.ActionApprove, Combine: policy.CombineOr,
			Groups: []policy.Group{{Name: "treasury", Users: []string{"t1@z", "t2@z", "t3@z", "both@z"}, Threshold: 1}, {Name: "risk", Users: []string{"r1@z", "both@z"}, Threshold: 1}}},
		{Name: "policy", Operations: []string{policy.OpPolicyChange}, Action: policy.ActionApprove, Combine: policy.CombineAnd,
			Groups: []policy.Group{{Name: "admins", Users: []string{"a1@z", "a2@z"}, Threshold: 2}}},
		{Name: "rest", Action: policy.ActionApprove, Combine: policy.CombineAnd, Groups: []policy.Group{{Name: "checkers", Roles: []string{"CHECKER"}, Threshold: 1}}},
	}}
}

func usd(s string) *amount.Amount { a := amount.MustStored(s); return &a }

func TestFirstMatchingRuleDecides(t *testing.T) {
	t.Parallel()
	p := treasuryAndRisk()
	tests := []struct {
		name string
		give policy.Subject
		want string
	}{
		{"above the large threshold", policy.Subject{Operation: withdrawal, Destination: policy.DestinationWhitelisted, USD: usd("100000")}, "large"},
		{"just below it", policy.Subject{Operation: withdrawal, Destination: policy.DestinationWhitelisted, USD: usd("99999.99")}, "medium"},
		{"small", policy.Subject{Operation: withdrawal, Destination: policy.DestinationOwnCustody, USD: usd("5")}, "rest"},
		{"a large one to another address is blocked first", policy.Subject{Operation: withdrawal, Destination: policy.DestinationOther, USD: usd("1000000")}, "no unknown destinations"},
		{"another operation", policy.Subject{Operation: "0x0013-001", USD: usd("1000000")}, "rest"},
		{"a policy change", policy.Subject{Operation: policy.OpPolicyChange}, "policy"},
		// Without a price: the strictest rule that matches on everything else.
		{"no price", policy.Subject{Operation: withdrawal, Destination: policy.DestinationWhitelisted}, "large"},
		{"no price, blocked anyway", policy.Subject{Operation: withdrawal, Destination: policy.DestinationOther}, "no unknown destinations"},
		{"no price, another operation", policy.Subject{Operation: "0x0013-001"}, "rest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := p.Rules[p.Match(tt.give)].Name; got != tt.want {
				t.Errorf("Match(%+v) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

// TestNoPriceNeverPicksAnUnreachableRule: without a price, a strict rule after an
// unconditional match cannot apply.
func TestNoPriceNeverPicksAnUnreachableRule(t *testing.T) {
	t.Parallel()
	p := policy.Policy{Rules: []policy.Rule{
		{Name: "withdrawals", Operations: []string{withdrawal}, Action: policy.ActionAllow},
		{Name: "large", Operations: []string{withdrawal}, MinUSD: "1", Action: policy.ActionBlock},
		{Name: "rest", Action: policy.ActionBlock},
	}}
	if got := p.Rules[p.Match(policy.Subject{Operation: withdrawal})].Name; got != "withdrawals" {
		t.Errorf("Match = %q, want withdrawals (the block after it is unreachable)", got)
	}
}

func TestDefaultPolicyIsOneChecker(t *testing.T) {
	t.Parallel()
	p := policy.Default("ZTEST", []string{"0x0017-001"})
	if err := policy.Validate(p, policy.Known{Users: []policy.Approver{{Email: "c@z", Roles: []string{"CHECKER"}}, {Email: "m@z", Roles: []string{"MAKER"}}},
		Services: []string{"0x0017-001", withdrawal}, Roles: []string{"MAKER", "CHECKER"}, MakerRole: "MAKER", ApproverRoles: []string{"MAKER", "CHECKER"}}); err != nil {
		t.Fatalf("the default policy is invalid: %v", err)
	}
	rule := p.Rules[p.Match(policy.Subject{Operation: withdrawal})]
	checker, maker := policy.Approver{Email: "c@z", Roles: []string{"CHECKER"}}, policy.Approver{Email: "m@z", Roles: []string{"MAKER", "CHECKER"}}
	if got := rule.Tally(nil, "m@z"); got.Met || got.Groups[0].Missing() != 1 {
		t.Errorf("no approval: %+v, want one CHECKER missing", got)
	}
	if got := rule.Tally([]policy.Approver{maker}, "m@z"); got.Met {
		t.Errorf("the maker's own approval met the default rule: %+v", got)
	}
	if got := rule.Tally([]policy.Approver{checker}, "m@z"); !got.Met {
		t.Errorf("one CHECKER did not meet the default rule: %+v", got)
	}
	if got := p.Rules[p.Match(policy.Subject{Operation: "0x0017-001"})]; got.Action != policy.ActionAllow || !got.Tally(nil, "m@z").Met {
		t.Errorf("a service that needs no checker is decided by %+v, want ALLOW", got)
	}
}

func TestQuorum(t *testing.T) {
	t.Parallel()
	large := treasuryAndRisk().Rules[1]
	medium := treasuryAndRisk().Rules[2]
	who := func(emails ...string) []policy.Approver {
		out := make([]policy.Approver, 0, len(emails))
		for _, e := range emails {
			out = append(out, policy.Approver{Email: e})
		}
		return out
	}
	tests := []struct {
		name      string
		rule      policy.Rule
		approvers []policy.Approver
		want      string // met, then each group's approvals/threshold
	}{
		{"none yet", large, nil, "false treasury 0/2 risk 0/1"},
		{"two of treasury", large, who("t1@z", "t2@z"), "false treasury 2/2 risk 0/1"},
		{"two of treasury and one of risk", large, who("t1@z", "r1@z", "t2@z"), "true treasury 2/2 risk 1/1"},
		{"one user in both groups counts once", large, who("both@z", "t1@z"), "false treasury 2/2 risk 0/1"},
		{"a user in both groups is seated where needed", large, who("t1@z", "t2@z", "both@z"), "true treasury 2/2 risk 1/1"},
		{"the same user twice", large, who("t1@z", "t1@z", "r1@z"), "false treasury 1/2 risk 1/1"},
		{"the maker counts for nothing", large, who("t3@z", "t1@z", "r1@z"), "false treasury 1/2 risk 1/1"},
		{"outsiders count for nothing", large, who("x@z", "y@z", "r1@z"), "false treasury 0/2 risk 1/1"},
		{"OR: one group is enough", medium, who("r1@z"), "true treasury 0/1 risk 1/1"},
		{"OR: nobody yet", medium, who("x@z"), "false treasury 0/1 risk 0/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.rule.Tally(tt.approvers, "t3@z")
			s := fmt.Sprint(got.Met)
			for _, g := range got.Groups {
				s += fmt.Sprintf(" %s %d/%d", g.Name, g.Approvals, g.Threshold)
			}
			if s != tt.want {
				t.Errorf("Tally = %s, want %s", s, tt.want)
			}
		})
	}
	if (policy.Rule{Action: policy.ActionBlock}).Tally(who("t1@z"), "m@z").Met {
		t.Error("a BLOCK rule's quorum was met")
	}
	if large.Eligible(policy.Approver{Email: "t3@z"}, "t3@z") || !large.Eligible(policy.Approver{Email: "t1@z"}, "t3@z") {
		t.Error("eligibility: the maker is never eligible, a group member is")
	}
}

func TestValidateNamesTheRuleAndTheField(t *testing.T) {
	t.Parallel()
	checker := []string{"CHECKER"}
	known := policy.Known{
		Users: []policy.Approver{{Email: "t1@z", Roles: checker}, {Email: "t2@z", Roles: checker}, {Email: "t3@z", Roles: checker},
			{Email: "both@z", Roles: checker}, {Email: "r1@z", Roles: checker}, {Email: "a1@z", Roles: checker}, {Email: "a2@z", Roles: checker},
			{Email: "m@z", Roles: []string{"MAKER"}}, {Email: "v@z", Roles: []string{"VIEWER"}}},
		Services:      []string{withdrawal, "0x0013-001"},
		Currencies:    []string{"BTC", "ETH"},
		Roles:         []string{"VIEWER", "MAKER", "CHECKER"},
		MakerRole:     "MAKER",
		ApproverRoles: []string{"MAKER", "CHECKER"},
		Wallet:        func(id string) bool { return strings.HasPrefix(id, "ZTEST-") },
	}
	if err := policy.Validate(treasuryAndRisk(), known); err != nil {
		t.Fatalf("a valid policy: %v", err)
	}
	with := func(change func(p *policy.Policy)) policy.Policy {
		p := treasuryAndRisk()
		change(&p)
		return p
	}
	tests := []struct {
		name        string
		give        policy.Policy
		code, field string
	}{
		{"no rules", policy.Policy{}, "ER-101", "rules"},
		{"no catch-all", with(func(p *policy.Policy) { p.Rules = p.Rules[:4] }), "ER-108", "rules[3]"},
		{"a catch-all before the end", with(func(p *policy.Policy) { p.Rules = append([]policy.Rule{p.Rules[4]}, p.Rules...) }), "ER-108", "rules[0]"},
		{"a threshold larger than its group", with(func(p *policy.Policy) { p.Rules[1].Groups[1].Threshold = 3 }), "ER-103", "rules[1].groups[1].threshold"},
		{"a role group larger than its holders", with(func(p *policy.Policy) {
			p.Rules[4].Groups[0].Roles, p.Rules[4].Groups[0].Threshold = []string{"MAKER"}, 2
		}), "ER-103", "rules[4].groups[0].threshold"},
		{"a zero threshold", with(func(p *policy.Policy) { p.Rules[1].Groups[0].Threshold = 0 }), "ER-103", "rules[1].groups[0].threshold"},
		{"an unknown user", with(func(p *policy.Policy) { p.Rules[1].Groups[0].Users[1] = "nobody@z" }), "ER-108", "rules[1].groups[0].users[1]"},
		{"an unknown role", with(func(p *policy.Policy) { p.Rules[4].Groups[0].Roles = []string{"ADMIN"} }), "ER-108", "rules[4].groups[0].roles[0]"},
		{"an unknown service", with(func(p *policy.Policy) { p.Rules[2].Operations = []string{"0x0099-001"} }), "ER-108", "rules[2].operations[0]"},
		{"an unknown currency", with(func(p *policy.Policy) { p.Rules[2].Currencies = []string{"DOGE"} }), "ER-108", "rules[2].currencies[0]"},
		{"an unknown destination", with(func(p *policy.Policy) { p.Rules[0].Destinations = []string{"MOON"} }), "ER-108", "rules[0].destinations[0]"},
		{"a malformed USD threshold", with(func(p *policy.Policy) { p.Rules[2].MinUSD = "10k" }), "ER-108", "rules[2].minUsd"},
		{"a USD threshold finer than a cent", with(func(p *policy.Policy) { p.Rules[2].MinUSD = "0.001" }), "ER-108", "rules[2].minUsd"},
		{"two rules of one name", with(func(p *policy.Policy) { p.Rules[2].Name = "large" }), "ER-108", "rules[2].name"},
		{"an unknown action", with(func(p *policy.Policy) { p.Rules[0].Action = "DENY" }), "ER-108", "rules[0].action"},
		{"groups on a block", with(func(p *policy.Policy) { p.Rules[0].Groups = p.Rules[1].Groups }), "ER-108", "rules[0].groups"},
		{"no groups on an approval", with(func(p *policy.Policy) { p.Rules[1].Groups = nil }), "ER-101", "rules[1].groups"},
		{"an unknown combination", with(func(p *policy.Policy) { p.Rules[1].Combine = "XOR" }), "ER-108", "rules[1].combine"},
		{"a group of nobody", with(func(p *policy.Policy) { p.Rules[1].Groups[0].Users = nil }), "ER-108", "rules[1].groups[0]"},
		{"policy changes by the maker alone", with(func(p *policy.Policy) {
			p.Rules[3] = policy.Rule{Name: "policy", Operations: []string{policy.OpPolicyChange}, Action: policy.ActionAllow}
		}), "ER-108", "rules[3].action"},
		{"policy changes blocked for good", with(func(p *policy.Policy) {
			p.Rules[3] = policy.Rule{Name: "policy", Operations: []string{policy.OpPolicyChange}, Action: policy.ActionBlock}
		}), "ER-108", "rules[3].action"},
		{"policy changes a proposal by one of its approvers can never meet", with(func(p *policy.Policy) {
			p.Rules[3].Groups = []policy.Group{{Name: "admins", Users: []string{"a1@z", "m@z"}, Threshold: 2}}
		}), "ER-103", "rules[3].groups"},
		{"policy changes decided by users who may not approve", func() policy.Policy {
			p := treasuryAndRisk()
			p.Rules[3].Groups = []policy.Group{{Name: "viewers", Roles: []string{"VIEWER"}, Threshold: 1}}
			return p
		}(), "ER-103", "rules[3].groups[0].threshold"},
		{"another company's wallet", with(func(p *policy.Policy) { p.Rules[1].Wallets = []string{"ZACME-TW-0000000001"} }), "ER-108", "rules[1].wallets[0]"},
		{"policy changes left to an ALLOW catch-all", with(func(p *policy.Policy) {
			p.Rules = append(p.Rules[:3], policy.Rule{Name: "rest", Action: policy.ActionAllow})
		}), "ER-108", "rules[3].action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := policy.Validate(tt.give, known)
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Code != tt.code || ae.Field != tt.field {
				t.Fatalf("Validate = %v, want %s on %s", err, tt.code, tt.field)
			}
			var i int
			if _, err := fmt.Sscanf(tt.field, "rules[%d]", &i); err == nil && !strings.Contains(ae.Message, fmt.Sprintf("%q", tt.give.Rules[i].Name)) {
				t.Errorf("message %q does not name rule %q", ae.Message, tt.give.Rules[i].Name)
			}
		})
	}
}

func TestTallyMissing(t *testing.T) {
	t.Parallel()
	p := treasuryAndRisk()
	large, medium := p.Rules[1], p.Rules[2]
	tests := []struct {
		name      string
		rule      policy.Rule
		approvers []string
		want      int
	}{
		{"AND: every group's missing approvals", large, nil, 3},
		{"AND: one of treasury given", large, []string{"t1@z"}, 2},
		{"OR: the fewest of one group", medium, nil, 1},
		{"met", medium, []string{"r1@z"}, 0},
		{"ALLOW needs none", policy.Rule{Action: policy.ActionAllow}, nil, 0},
	}
	for _, tt := range tests {
		var who []policy.Approver
		for _, e := range tt.approvers {
			who = append(who, policy.Approver{Email: e})
		}
		if got := tt.rule.Tally(who, "m@z").Missing(); got != tt.want {
			t.Errorf("%s: Missing = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestValidateLimits(t *testing.T) {
	t.Parallel()
	known := policy.Known{Users: []policy.Approver{{Email: "c@z", Roles: []string{"CHECKER"}}, {Email: "m@z", Roles: []string{"MAKER"}}},
		Services: []string{withdrawal}, Currencies: []string{"BTC", "ETH"}, Roles: []string{"MAKER", "CHECKER"},
		MakerRole: "MAKER", ApproverRoles: []string{"MAKER", "CHECKER"}, Wallet: func(id string) bool { return strings.HasPrefix(id, "ZTEST-") }}
	daily := policy.Limit{Name: "daily", Scope: policy.ScopeWallet, Wallets: []string{"ZTEST-TW-0000000001"}, Currency: "BTC",
		MaxPerTransaction: "0.9", Amount: "1", Window: 24 * time.Hour}
	with := func(change func(l *policy.Limit)) []policy.Limit {
		l := daily
		change(&l)
		return []policy.Limit{l}
	}
	tests := []struct {
		name        string
		give        []policy.Limit
		code, field string
	}{
		{"valid", []policy.Limit{daily, {Name: "company", Scope: policy.ScopeCompany, Currency: "ETH", Amount: "10", Window: time.Hour}}, "", ""},
		{"a per-transaction maximum alone", with(func(l *policy.Limit) { l.Amount, l.Window = "", 0 }), "", ""},
		{"a limit in USD", with(func(l *policy.Limit) { l.Currency, l.MaxPerTransaction, l.Amount = "USD", "50000", "100000.5" }), "", ""},
		{"USD finer than cents", with(func(l *policy.Limit) { l.Currency, l.Amount = "USD", "0.001" }), "ER-108", "limits[0].amount"},
		{"no name", with(func(l *policy.Limit) { l.Name = "" }), "ER-101", "limits[0].name"},
		{"an unknown scope", with(func(l *policy.Limit) { l.Scope = "DESK" }), "ER-108", "limits[0].scope"},
		{"a company limit naming wallets", with(func(l *policy.Limit) { l.Scope = policy.ScopeCompany }), "ER-108", "limits[0].wallets"},
		{"an unknown currency", with(func(l *policy.Limit) { l.Currency = "DOGE" }), "ER-108", "limits[0].currency"},
		{"nothing bounded", with(func(l *policy.Limit) { l.Amount, l.MaxPerTransaction = "", "" }), "ER-101", "limits[0].amount"},
		{"a zero amount", with(func(l *policy.Limit) { l.Amount = "0" }), "ER-108", "limits[0].amount"},
		{"a malformed maximum", with(func(l *policy.Limit) { l.MaxPerTransaction = "1e3" }), "ER-108", "limits[0].maxPerTransaction"},
		{"a window too short", with(func(l *policy.Limit) { l.Window = time.Second }), "ER-103", "limits[0].window"},
		{"a window too long", with(func(l *policy.Limit) { l.Window = 32 * 24 * time.Hour }), "ER-103", "limits[0].window"},
		{"another company's wallet", with(func(l *policy.Limit) { l.Wallets = []string{"ZACME-TW-0000000001"} }), "ER-108", "limits[0].wallets[0]"},
		{"two limits of one name", []policy.Limit{daily, daily}, "ER-108", "limits[1].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := policy.Default("ZTEST", nil)
			p.Limits = tt.give
			err := policy.Validate(p, known)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want valid", err)
				}
				return
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Code != tt.code || ae.Field != tt.field {
				t.Fatalf("Validate = %v, want %s on %s", err, tt.code, tt.field)
			}
		})
	}
	if !daily.Applies("ZTEST-TW-0000000001", "BTC") || daily.Applies("ZTEST-TW-0000000002", "BTC") || daily.Applies("ZTEST-TW-0000000001", "ETH") {
		t.Error("a wallet limit applies to its wallets in its currency only")
	}
	if usd := (policy.Limit{Scope: policy.ScopeCompany, Currency: "USD"}); !usd.Applies("ZTEST-TW-0000000001", "ETH") {
		t.Error("a limit in USD applies to every currency")
	}
}
