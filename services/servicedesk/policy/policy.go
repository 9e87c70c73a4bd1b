// Package policy is a company's approval policy (docs/decisions.md, "Approval policies"): a
// versioned, ordered list of rules where the first rule that matches a request decides it,
// and a catch-all rule comes last. A rule blocks the request, allows it on its maker's
// confirmation alone, or requires approvals from one or more groups of users (named users,
// or holders of a role), each with its own threshold, combined with AND or OR. The maker
// never counts towards a threshold.
//
// It is plain Go: which users exist and which operations are known come from a Directory
// the caller supplies, and the policy is stored by the service desk's store.
package policy

import (
	"slices"
	"time"

	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
)

// Actions of a rule.
const (
	// ActionAllow: the maker's confirmation authorises the request; nobody else approves.
	ActionAllow = "ALLOW"
	// ActionBlock: the request is refused when it is created.
	ActionBlock = "BLOCK"
	// ActionApprove: the request waits for its groups' approvals.
	ActionApprove = "REQUIRE_APPROVAL"
)

// How a rule combines its groups.
const (
	CombineAnd = "AND" // every group's threshold, by distinct users
	CombineOr  = "OR"  // any one group's threshold
)

// Operations besides the catalog's service ids (which a rule names as they are, e.g.
// 0x0013-001): what a venue's operator and a company's administrators do outside the
// catalog.
const (
	// OpSettlementPayables is a settlement instruction (endpoint 3) with payables: the
	// venue's money leaves its settlement wallet.
	OpSettlementPayables = "venue.settlement.payables"
	// OpSettlementInstruction is any settlement instruction of a venue.
	OpSettlementInstruction = "venue.settlement.instruction"
	// OpWithdrawalDecision is a venue's decision on a withdrawal (endpoint 11).
	OpWithdrawalDecision = "venue.withdrawal.decision"
	// OpWebhookSubscription is a change of the company's webhook subscriptions.
	OpWebhookSubscription = "webhooks.subscription.change"
	// OpPolicyChange is a new version of the company's policy: its rule always needs at
	// least two people (the maker and one approver).
	OpPolicyChange = "policy.change"
)

// Operations lists the operations a rule may name besides catalog service ids.
func Operations() []string {
	return []string{OpSettlementPayables, OpSettlementInstruction, OpWithdrawalDecision, OpWebhookSubscription, OpPolicyChange}
}

// Destination kinds a rule may match, as the requests' owners report them.
const (
	DestinationOwnCustody  = catalog.DestinationOwnCustody  // one of the company's own custody wallets
	DestinationWhitelisted = catalog.DestinationWhitelisted // an address on the company's whitelist
	DestinationOther       = catalog.DestinationOther       // anywhere else
)

// Destinations lists the destination kinds.
func Destinations() []string {
	return []string{DestinationOwnCustody, DestinationWhitelisted, DestinationOther}
}

// Policy is one version of a company's policy.
type Policy struct {
	CompanyID string
	// Version numbers the company's policies from 1; 0 is the default policy, in force until
	// the company adopts one of its own.
	Version int64
	Rules   []Rule
	// Limits bound how much may leave the company's wallets (Limit).
	Limits []Limit
	// RequestID is the service request that adopted the version ("" for the default).
	RequestID string
	CreatedBy string
	CreatedAt time.Time
}

// Rule is one rule of a policy. A condition left empty matches anything; a rule with no
// condition at all is a catch-all.
type Rule struct {
	// Name identifies the rule in its policy (unique), in the audit trail and in errors.
	Name string
	// Operations: catalog service ids or the operations of Operations().
	Operations []string
	// Wallets: the wallets the request moves money out of (or acts on).
	Wallets []string
	// Currencies: currency codes, e.g. BTC.
	Currencies []string
	// MinUSD matches requests worth at least this many US dollars (a canonical decimal); a
	// request without a USD value (no price) matches it only as the strictest choice
	// (Policy.Match).
	MinUSD string
	// Destinations: destination kinds (Destinations()).
	Destinations []string
	Action       string
	// Groups and Combine are the approvals of an ActionApprove rule.
	Groups  []Group
	Combine string
}

// Group is a set of eligible users, by email or by role, and how many of them must approve.
type Group struct {
	Name      string
	Users     []string
	Roles     []string
	Threshold int
}

// CatchAll reports whether r has no condition: it matches every request.
func (r Rule) CatchAll() bool {
	return len(r.Operations) == 0 && len(r.Wallets) == 0 && len(r.Currencies) == 0 && r.MinUSD == "" && len(r.Destinations) == 0
}

// Subject is what a request is, for matching: the operation, the wallet and currency it
// moves, its value in USD when a price is known, and the kind of its destination.
type Subject struct {
	Operation   string
	WalletID    string
	Currency    string
	Destination string
	// USD is the request's value, fixed when it was created; nil when it has none (no
	// amount, or no price for its currency).
	USD *amount.Amount
}

// Match returns the index of the rule that decides s: the first that matches. A rule with a
// USD threshold matches a request without a USD value only when it is the strictest of the
// rules that match it on everything else (DESIGN: without a price, the strictest rule that
// matches on anything else applies); otherwise the first rule matching on everything wins.
// A valid policy always matches (its catch-all).
func (p Policy) Match(s Subject) int {
	if s.USD == nil {
		// The rules that could decide s, whatever its value: those matching it on everything
		// else, up to the first without a threshold (no rule after it can come into play).
		best := -1
		for i, r := range p.Rules {
			if !r.matchesBesidesValue(s) {
				continue
			}
			if best < 0 || r.strictness() > p.Rules[best].strictness() {
				best = i
			}
			if r.MinUSD == "" {
				break
			}
		}
		return best
	}
	for i, r := range p.Rules {
		if r.matchesBesidesValue(s) && (r.MinUSD == "" || s.USD.Cmp(amount.MustStored(r.MinUSD)) >= 0) {
			return i
		}
	}
	return -1
}

func (r Rule) matchesBesidesValue(s Subject) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	return in(r.Operations, s.Operation) && in(r.Wallets, s.WalletID) && in(r.Currencies, s.Currency) && in(r.Destinations, s.Destination)
}

// strictness orders rules from the most permissive: ALLOW, then approvals by how many
// people they need at the least, then BLOCK.
func (r Rule) strictness() int {
	switch r.Action {
	case ActionBlock:
		return 1 << 30
	case ActionAllow:
		return 0
	}
	return r.Needed()
}

// Needed is how many approvals r needs at the least: the sum of the thresholds for AND, the
// smallest for OR, none for ALLOW and BLOCK.
func (r Rule) Needed() int {
	if r.Action != ActionApprove || len(r.Groups) == 0 {
		return 0
	}
	if r.Combine == CombineOr {
		least := r.Groups[0].Threshold
		for _, g := range r.Groups[1:] {
			least = min(least, g.Threshold)
		}
		return least
	}
	n := 0
	for _, g := range r.Groups {
		n += g.Threshold
	}
	return n
}

// Default is the policy in force for a company that has adopted none (version 0): today's
// behaviour, one CHECKER after the maker's confirmation, and the maker's confirmation alone
// for the catalog services that need no checker (noChecker).
func Default(companyID string, noChecker []string) Policy {
	var rules []Rule
	if len(noChecker) > 0 {
		rules = append(rules, Rule{Name: "no-checker-services", Operations: slices.Clone(noChecker), Action: ActionAllow})
	}
	rules = append(rules, Rule{Name: "default", Action: ActionApprove, Combine: CombineAnd,
		Groups: []Group{{Name: "checkers", Roles: []string{RoleChecker}, Threshold: 1}}})
	return Policy{CompanyID: companyID, Rules: rules}
}

// RoleChecker is the role the default policy's approvers hold.
const RoleChecker = "CHECKER"
