package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
)

// Bounds of a policy.
const (
	MaxRules      = 64
	MaxGroups     = 8
	MaxConditions = 64 // values of one condition, members of one group
	MaxNameLength = 64
	// MaxUSDPlaces bounds the decimals of a rule's USD threshold.
	MaxUSDPlaces = 2
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._ -]*$`)

// Known is what a policy may name: the company's active users (with their roles), the
// catalog's service ids, the supported currency codes and the roles; which roles may
// approve (a group's size counts only their holders), which of them a request's maker holds
// (a policy change is proposed by one of them, who never counts), and which wallet ids are
// the company's (nil: any).
type Known struct {
	Users         []Approver
	Services      []string
	Currencies    []string
	Roles         []string
	ApproverRoles []string
	MakerRole     string
	Wallet        func(id string) bool
}

// canApprove reports whether u may send an approval at all (holds an approver role); with no
// approver roles known, everyone may.
func (k Known) canApprove(u Approver) bool {
	return len(k.ApproverRoles) == 0 || slices.ContainsFunc(u.Roles, func(r string) bool { return slices.Contains(k.ApproverRoles, r) })
}

// Validate refuses a policy a company could not live with, naming the rule and the field
// (rules[i].field) in a 400: no rules or too many; a catch-all that is not last, or none
// last; a name missing, malformed or used twice; an unknown action, operation, currency,
// destination, user or role; a USD threshold that is not a canonical decimal; approvals on
// a rule that does not require them, or none on one that does; a threshold below 1 or
// larger than its group; and a rule for policy changes that needs fewer than two people
// (the maker and at least one approver).
func Validate(p Policy, k Known) error {
	switch {
	case len(p.Rules) == 0:
		return apperr.Missing("rules")
	case len(p.Rules) > MaxRules:
		return apperr.Invalid(apperr.CodeLength, "rules", "a policy has at most %d rules, got %d", MaxRules, len(p.Rules))
	}
	names := map[string]bool{}
	for i, r := range p.Rules {
		if err := validateRule(i, r, k, names); err != nil {
			return err
		}
		last := i == len(p.Rules)-1
		switch {
		case r.CatchAll() && !last:
			return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("rules[%d]", i), "rule %q matches every request, so the rules after it could never apply: the catch-all comes last", r.Name)
		case !r.CatchAll() && last:
			return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("rules[%d]", i), "the last rule, %q, has conditions: a policy ends with a catch-all rule (no conditions)", r.Name)
		}
	}
	if err := validateLimits(p.Limits, k); err != nil {
		return err
	}
	i := p.Match(Subject{Operation: OpPolicyChange})
	r := p.Rules[i]
	if r.Action != ActionApprove {
		return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("rules[%d].action", i),
			"rule %q decides policy changes, which need at least two people: its action must be %s, not %s", r.Name, ActionApprove, r.Action)
	}
	return checkProposable(i, r, k)
}

// checkProposable refuses a rule for policy changes that some proposal could never meet:
// whichever of the company's makers proposes (and so never counts), the users who may
// approve must be able to complete the rule's quorum. Adopting such a rule would lock the
// company's policy for good.
func checkProposable(i int, r Rule, k Known) error {
	var approvers []Approver
	for _, u := range k.Users {
		if k.canApprove(u) {
			approvers = append(approvers, u)
		}
	}
	for _, maker := range k.Users {
		if k.MakerRole != "" && !slices.Contains(maker.Roles, k.MakerRole) {
			continue
		}
		if !r.Tally(approvers, maker.Email).Met {
			return apperr.Invalid(apperr.CodeLength, fmt.Sprintf("rules[%d].groups", i),
				"rule %q decides policy changes, but a proposal by %s could never be approved: its groups (%s) lack enough users other than the proposer who may approve (%s)",
				r.Name, maker.Email, r.GroupsText(), strings.Join(k.ApproverRoles, " or "))
		}
	}
	return nil
}

// GroupsText describes r's approval groups for a message: "2 of treasury AND 1 of risk"
// ("no approvers" when it has none).
func (r Rule) GroupsText() string {
	if len(r.Groups) == 0 {
		return "no approvers"
	}
	parts := make([]string, 0, len(r.Groups))
	for _, g := range r.Groups {
		parts = append(parts, fmt.Sprintf("%d of %s", g.Threshold, g.Name))
	}
	return strings.Join(parts, " "+r.Combine+" ")
}

func validateRule(i int, r Rule, k Known, names map[string]bool) error {
	field := func(f string) string { return fmt.Sprintf("rules[%d].%s", i, f) }
	switch {
	case r.Name == "":
		return apperr.Missing(field("name"))
	case len(r.Name) > MaxNameLength || !namePattern.MatchString(r.Name):
		return apperr.Invalid(apperr.CodeFormat, field("name"), "%s must be 1 to %d letters, digits, spaces, dots, dashes or underscores", field("name"), MaxNameLength)
	case names[r.Name]:
		return apperr.Invalid(apperr.CodeFormat, field("name"), "rule name %q is used twice", r.Name)
	}
	names[r.Name] = true
	ops := append(append([]string{}, k.Services...), Operations()...)
	for _, c := range []struct {
		name    string
		values  []string
		allowed []string
	}{
		{"operations", r.Operations, ops},
		{"wallets", r.Wallets, nil}, // checked below against the company's wallet ids
		{"currencies", r.Currencies, k.Currencies},
		{"destinations", r.Destinations, Destinations()},
	} {
		if err := checkValues(field(c.name), r.Name, c.values, c.allowed); err != nil {
			return err
		}
	}
	for j, w := range r.Wallets {
		if k.Wallet != nil && !k.Wallet(w) {
			return apperr.Invalid(apperr.CodeFormat, field(fmt.Sprintf("wallets[%d]", j)), "rule %q: wallets[%d] %q is not a wallet id of the company", r.Name, j, w)
		}
	}
	if r.MinUSD != "" {
		if _, err := amount.ParseAmount(r.MinUSD, MaxUSDPlaces); err != nil {
			return apperr.Invalid(apperr.CodeFormat, field("minUsd"), "rule %q: minUsd must be a canonical decimal of at most %d places such as \"100000\", got %q", r.Name, MaxUSDPlaces, r.MinUSD)
		}
	}
	switch r.Action {
	case ActionAllow, ActionBlock:
		if len(r.Groups) > 0 {
			return apperr.Invalid(apperr.CodeFormat, field("groups"), "rule %q: a %s rule has no approval groups", r.Name, r.Action)
		}
		return nil
	case ActionApprove:
	case "":
		return missing(field("action"), r.Name)
	default:
		return apperr.Invalid(apperr.CodeFormat, field("action"), "rule %q: action must be %s, %s or %s, got %q", r.Name, ActionAllow, ActionBlock, ActionApprove, r.Action)
	}
	switch {
	case r.Combine != CombineAnd && r.Combine != CombineOr:
		return apperr.Invalid(apperr.CodeFormat, field("combine"), "rule %q: combine must be %s or %s, got %q", r.Name, CombineAnd, CombineOr, r.Combine)
	case len(r.Groups) == 0:
		return missing(field("groups"), r.Name)
	case len(r.Groups) > MaxGroups:
		return apperr.Invalid(apperr.CodeLength, field("groups"), "rule %q: at most %d groups", r.Name, MaxGroups)
	}
	groups := map[string]bool{}
	for j, g := range r.Groups {
		if err := validateGroup(field(fmt.Sprintf("groups[%d]", j)), r.Name, g, k, groups); err != nil {
			return err
		}
	}
	return nil
}

func validateGroup(field, rule string, g Group, k Known, names map[string]bool) error {
	switch {
	case g.Name == "":
		return missing(field+".name", rule)
	case len(g.Name) > MaxNameLength || !namePattern.MatchString(g.Name):
		return apperr.Invalid(apperr.CodeFormat, field+".name", "rule %q: group names are 1 to %d letters, digits, spaces, dots, dashes or underscores", rule, MaxNameLength)
	case names[g.Name]:
		return apperr.Invalid(apperr.CodeFormat, field+".name", "rule %q: group name %q is used twice", rule, g.Name)
	case len(g.Users) == 0 && len(g.Roles) == 0:
		return apperr.Invalid(apperr.CodeFormat, field, "rule %q: group %q names no users and no roles", rule, g.Name)
	}
	names[g.Name] = true
	emails := make([]string, 0, len(k.Users))
	for _, u := range k.Users {
		emails = append(emails, u.Email)
	}
	if err := checkValues(field+".users", rule, g.Users, emails); err != nil {
		return err
	}
	if err := checkValues(field+".roles", rule, g.Roles, k.Roles); err != nil {
		return err
	}
	size := 0
	for _, u := range k.Users {
		if g.Has(u) && k.canApprove(u) {
			size++
		}
	}
	switch {
	case g.Threshold < 1:
		return apperr.Invalid(apperr.CodeLength, field+".threshold", "rule %q: group %q needs a threshold of at least 1", rule, g.Name)
	case g.Threshold > size:
		return apperr.Invalid(apperr.CodeLength, field+".threshold", "rule %q: group %q has %d users who may approve, fewer than its threshold %d", rule, g.Name, size, g.Threshold)
	}
	return nil
}

// missing is a 400 ER-101 on field of rule.
func missing(field, rule string) error {
	return apperr.Invalid(apperr.CodeMissing, field, "Missing mandatory field: %s (rule %q)", field, rule)
}

// checkValues refuses an over-long list, a repeated value and, when allowed is not nil, a
// value outside it.
func checkValues(field, rule string, values, allowed []string) error {
	if len(values) > MaxConditions {
		return apperr.Invalid(apperr.CodeLength, field, "rule %q: %s has at most %d values", rule, field, MaxConditions)
	}
	for j, v := range values {
		switch {
		case v == "" || len(v) > 256:
			return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("%s[%d]", field, j), "rule %q: %s[%d] is empty or longer than 256 characters", rule, field, j)
		case slices.Contains(values[:j], v):
			return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("%s[%d]", field, j), "rule %q: %q is named twice in %s", rule, v, field)
		case allowed != nil && !slices.Contains(allowed, v):
			return apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("%s[%d]", field, j), "rule %q: %s[%d] %q is not known", rule, field, j, v)
		}
	}
	return nil
}
