package servicedesk

import (
	"encoding/json"
	"slices"

	"github.com/zcustody/suite/services/servicedesk/policy"
)

// DecidingRule is the policy rule that decides r: the one recorded when it was made, or, for
// a request made before policies, the default policy's rule for its service (one CHECKER,
// or the maker's confirmation alone where the service needs no checker).
func (r Request) DecidingRule() policy.Rule {
	if r.Rule != nil {
		return *r.Rule
	}
	var noChecker []string
	if !r.NeedsChecker {
		noChecker = []string{r.ServiceID}
	}
	p := policy.Default(r.CompanyID, noChecker)
	return p.Rules[p.Match(policy.Subject{Operation: r.ServiceID})]
}

// Approvers are the users who approved r so far, with their roles when they approved.
func (r Request) Approvers() []policy.Approver {
	var out []policy.Approver
	for _, v := range r.Versions {
		if v.Action == ActionApproved {
			out = append(out, policy.Approver{Email: v.Actor, Roles: v.Roles})
		}
	}
	return out
}

// Tally is how far r is towards its rule's quorum.
func (r Request) Tally() policy.Tally { return r.DecidingRule().Tally(r.Approvers(), r.CreatedBy) }

// Approved reports whether email already approved r.
func (r Request) Approved(email string) bool {
	return slices.ContainsFunc(r.Versions, func(v Version) bool { return v.Action == ActionApproved && v.Actor == email })
}

// DefaultPolicy is the policy of a company that adopted none: one CHECKER, and the maker's
// confirmation alone for the catalog's services that need no checker.
func DefaultPolicy(companyID string) policy.Policy {
	var noChecker []string
	for _, s := range Catalog() {
		if !s.NeedsChecker {
			noChecker = append(noChecker, s.ID)
		}
	}
	return policy.Default(companyID, noChecker)
}

// SubjectOf is what a new request of svc with payload (canonical JSON) is, for its policy's
// rules, as far as the payload tells: the service, and the wallet and currency its payload
// names (the wallet it acts on or moves money out of: sender or walletId, as a string, a
// {type, value} object or a list of one); a policy change is policy.OpPolicyChange. It has
// no USD value nor destination kind: those are the owner's to report (reported). Without a
// USD value, a rule with a USD threshold applies only as the strictest choice
// (policy.Policy.Match).
func SubjectOf(svc Service, payload string) policy.Subject {
	if svc.ID == ServicePolicyChange {
		return policy.Subject{Operation: policy.OpPolicyChange}
	}
	var p map[string]any
	_ = json.Unmarshal([]byte(payload), &p) // a canonical JSON object
	str := func(keys ...string) string {
		for _, k := range keys {
			if v := textOf(p[k]); v != "" {
				return v
			}
		}
		return ""
	}
	return policy.Subject{Operation: svc.ID, WalletID: str("sender", "walletId"), Currency: str("currency")}
}

// reported is base with what the request's owner reported in place of what the payload
// told: its wallet, currency, USD value and destination kind where the owner gave them. The
// operation stays base's (the service id, or policy.OpPolicyChange).
func reported(base, owner policy.Subject) policy.Subject {
	if owner.WalletID != "" {
		base.WalletID = owner.WalletID
	}
	if owner.Currency != "" {
		base.Currency = owner.Currency
	}
	if owner.Destination != "" {
		base.Destination = owner.Destination
	}
	if owner.USD != nil {
		base.USD = owner.USD
	}
	return base
}

// textOf reads a payload value written as a string, as a {type, value} object, or as a list
// of one of those ("" otherwise).
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		return textOf(v["value"])
	case []any:
		if len(v) == 1 {
			return textOf(v[0])
		}
	}
	return ""
}
