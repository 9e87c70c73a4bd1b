package servicedesk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// A policy change (ServicePolicyChange) is a service request like any other, decided under
// the rule the company's policy in force has for policy changes (policy.OpPolicyChange, which
// always needs at least two people), and owned by the service desk itself: proposals are
// the Owners the desk wraps around the owners' plugin API.
type proposals struct {
	Owners
	desk *Desk
}

// policyEntity is the entity id a proposal reserves: the version it would adopt.
func policyEntity(companyID string, version int64) string {
	return fmt.Sprintf("%s:policy:%d", companyID, version)
}

// Validate checks a proposed policy against the company as it is (policy.Validate, naming
// the rule and field under payload.rules) and reserves the next version: the one after the
// version in force when it was proposed.
func (p proposals) Validate(ctx context.Context, r Request, venues []string) (Validated, error) {
	if r.Owner != catalog.Servicedesk {
		return p.Owners.Validate(ctx, r, venues)
	}
	proposed, err := p.desk.proposedPolicy(ctx, r)
	if err != nil {
		return Validated{}, err
	}
	details, err := json.Marshal([]map[string]any{{"policyVersion": proposed.Version, "rules": len(proposed.Rules)}})
	if err != nil {
		return Validated{}, err
	}
	return Validated{EntityIDs: []string{policyEntity(r.CompanyID, proposed.Version)}, Details: string(details)}, nil
}

// Execute adopts an authorised proposal as the version it reserved. Another proposal that
// adopted that version first refuses this one (FAILED: propose again against the version in
// force); adopting it again is a no-op.
func (p proposals) Execute(ctx context.Context, r Request, venues []string) error {
	if r.Owner != catalog.Servicedesk {
		return p.Owners.Execute(ctx, r, venues)
	}
	version, err := reservedVersion(r)
	if err != nil {
		return &OwnerError{Failure: Refused, Code: "FailedPrecondition", Reason: err.Error()}
	}
	rules, err := parseRules(r.Payload)
	if err != nil {
		return &OwnerError{Failure: Refused, Code: "FailedPrecondition", Reason: err.Error()}
	}
	limits, err := parseLimits(r.Payload)
	if err != nil {
		return &OwnerError{Failure: Refused, Code: "FailedPrecondition", Reason: err.Error()}
	}
	adopted := policy.Policy{CompanyID: r.CompanyID, Version: version, Rules: rules, Limits: limits, RequestID: r.ID, CreatedBy: r.CreatedBy, CreatedAt: p.desk.now()}
	err = p.desk.store.InsertPolicy(ctx, adopted)
	if !errors.Is(err, apperr.ErrExists) {
		return err
	}
	current, err := p.desk.store.Policy(ctx, r.CompanyID, version)
	if err != nil {
		return err
	}
	if current.RequestID == r.ID {
		return nil
	}
	return &OwnerError{Failure: Refused, Code: "FailedPrecondition",
		Reason: fmt.Sprintf("policy version %d was adopted by request %s after this one was proposed; propose again against it", version, current.RequestID)}
}

// reservedVersion is the version a proposal reserved (its entity id).
func reservedVersion(r Request) (int64, error) {
	prefix := r.CompanyID + ":policy:"
	for _, id := range r.EntityIDs {
		if v, ok := strings.CutPrefix(id, prefix); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("request %s reserved no policy version", r.ID)
}

// proposedPolicy reads and validates a proposal's payload as the version after the one in
// force.
func (d *Desk) proposedPolicy(ctx context.Context, r Request) (policy.Policy, error) {
	rules, err := parseRules(r.Payload)
	if err != nil {
		return policy.Policy{}, err
	}
	limits, err := parseLimits(r.Payload)
	if err != nil {
		return policy.Policy{}, err
	}
	current, err := d.activePolicy(ctx, r.CompanyID)
	if err != nil {
		return policy.Policy{}, err
	}
	known, err := d.known(ctx, r.CompanyID)
	if err != nil {
		return policy.Policy{}, err
	}
	proposed := policy.Policy{CompanyID: r.CompanyID, Version: current.Version + 1, Rules: rules, Limits: limits}
	if err := policy.Validate(proposed, known); err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			if strings.HasPrefix(ae.Message, "Missing mandatory field: "+ae.Field) {
				ae.Message = strings.Replace(ae.Message, ae.Field, "payload."+ae.Field, 1)
			}
			ae.Field = "payload." + ae.Field
		}
		return policy.Policy{}, err
	}
	return proposed, nil
}

// activePolicy is the company's policy in force: its latest version, or the default.
func (d *Desk) activePolicy(ctx context.Context, companyID string) (policy.Policy, error) {
	p, err := d.store.ActivePolicy(ctx, companyID)
	if errors.Is(err, apperr.ErrNotFound) {
		return DefaultPolicy(companyID), nil
	}
	return p, err
}

// known is what a policy of the company may name: its active users, the catalog, the
// currencies and the roles.
func (d *Desk) known(ctx context.Context, companyID string) (policy.Known, error) {
	users, err := d.store.CompanyUsers(ctx, companyID)
	if err != nil {
		return policy.Known{}, err
	}
	company, err := d.store.Company(ctx, companyID)
	if err != nil && !errors.Is(err, apperr.ErrNotFound) {
		return policy.Known{}, err
	}
	k := policy.Known{Roles: []string{principal.RoleViewer, principal.RoleMaker, principal.RoleChecker},
		ApproverRoles: []string{principal.RoleMaker, principal.RoleChecker}, MakerRole: principal.RoleMaker,
		Wallet: walletOf(companyID, company.VenueIDs)}
	for _, u := range users {
		if u.Active {
			k.Users = append(k.Users, policy.Approver{Email: u.Email, Roles: u.Roles})
		}
	}
	for _, s := range Catalog() {
		k.Services = append(k.Services, s.ID)
	}
	for _, c := range ledger.Currencies() {
		if !slices.Contains(k.Currencies, c.Code) {
			k.Currencies = append(k.Currencies, c.Code)
		}
	}
	return k, nil
}

// walletOf reports whether an id has the shape of a wallet of the company: its own wallets
// (<COMPANY>-<KIND>-<10 characters>: trading TW, custody NOBENF) or, for a venue's operator,
// the wallets of its venues (<VENUE>-<KIND>-<suffix>, e.g. BYBIT-ISW-BTC). Whether the wallet
// exists is its owner's to say; this catches another company's wallet and a mistyped id.
func walletOf(companyID string, venues []string) func(string) bool {
	own := regexp.MustCompile(`^` + regexp.QuoteMeta(companyID) + `-[A-Z]+-[A-Z0-9]{10}$`)
	var venue *regexp.Regexp
	if len(venues) > 0 {
		quoted := make([]string, 0, len(venues))
		for _, v := range venues {
			quoted = append(quoted, regexp.QuoteMeta(v))
		}
		venue = regexp.MustCompile(`^(` + strings.Join(quoted, "|") + `)-[A-Z]+-[A-Z0-9]+$`)
	}
	return func(id string) bool { return own.MatchString(id) || (venue != nil && venue.MatchString(id)) }
}

// ruleJSON is a rule as a proposal's payload and the policy API write it.
type ruleJSON struct {
	Name         string      `json:"name"`
	Operations   []string    `json:"operations,omitempty"`
	Wallets      []string    `json:"wallets,omitempty"`
	Currencies   []string    `json:"currencies,omitempty"`
	MinUSD       string      `json:"minUsd,omitempty"`
	Destinations []string    `json:"destinations,omitempty"`
	Action       string      `json:"action"`
	Groups       []groupJSON `json:"groups,omitempty"`
	Combine      string      `json:"combine,omitempty"`
}

type groupJSON struct {
	Name      string   `json:"name"`
	Users     []string `json:"users,omitempty"`
	Roles     []string `json:"roles,omitempty"`
	Threshold int      `json:"threshold"`
}

// parseRules reads a proposal's payload, {"rules": [...]}, strictly: a payload that is not
// a list of rules is a 400 on payload.rules, and a rule with an unknown field or a value of
// the wrong type a 400 on payload.rules[i] naming the rule and the field in the API's terms.
// A rule requiring approvals without a combine combines its groups with AND.
func parseRules(payload string) ([]policy.Rule, error) {
	var body struct {
		Rules  []json.RawMessage `json:"rules"`
		Limits json.RawMessage   `json:"limits"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(payload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return nil, apperr.Invalid(apperr.CodeFormat, "payload.rules", "payload.rules must be a list of rules {name, operations, wallets, currencies, minUsd, destinations, action, groups, combine}")
	}
	rules := make([]policy.Rule, 0, len(body.Rules))
	for i, raw := range body.Rules {
		var r ruleJSON
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&r); err != nil {
			return nil, ruleError(i, raw, err)
		}
		rule := policy.Rule{Name: r.Name, Operations: r.Operations, Wallets: r.Wallets, Currencies: r.Currencies, MinUSD: r.MinUSD,
			Destinations: r.Destinations, Action: r.Action, Combine: r.Combine}
		if rule.Action == policy.ActionApprove && rule.Combine == "" {
			rule.Combine = policy.CombineAnd
		}
		for _, g := range r.Groups {
			rule.Groups = append(rule.Groups, policy.Group(g))
		}
		rules = append(rules, rule)
	}
	return rules, nil
}

// limitJSON is a limit as a proposal's payload and the policy API write it; window is a
// duration such as "24h" or "30m".
type limitJSON struct {
	Name              string   `json:"name"`
	Scope             string   `json:"scope"`
	Wallets           []string `json:"wallets,omitempty"`
	Currency          string   `json:"currency"`
	MaxPerTransaction string   `json:"maxPerTransaction,omitempty"`
	Amount            string   `json:"amount,omitempty"`
	Window            string   `json:"window,omitempty"`
}

// parseLimits reads a proposal's limits ({"limits": [...]}, optional) strictly, as
// parseRules reads its rules.
func parseLimits(payload string) ([]policy.Limit, error) {
	var body struct {
		Limits []limitJSON `json:"limits"`
	}
	if err := json.Unmarshal([]byte(payload), &body); err != nil {
		return nil, apperr.Invalid(apperr.CodeFormat, "payload.limits", "payload.limits must be a list of limits {name, scope, wallets, currency, maxPerTransaction, amount, window}")
	}
	var raw struct {
		Limits []json.RawMessage `json:"limits"`
	}
	_ = json.Unmarshal([]byte(payload), &raw)
	out := make([]policy.Limit, 0, len(body.Limits))
	for i, l := range body.Limits {
		d := json.NewDecoder(bytes.NewReader(raw.Limits[i]))
		d.DisallowUnknownFields()
		if err := d.Decode(&limitJSON{}); err != nil {
			return nil, apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("payload.limits[%d]", i), "payload.limits[%d] (limit %q): a limit has name, scope, wallets, currency, maxPerTransaction, amount and window", i, l.Name)
		}
		limit := policy.Limit{Name: l.Name, Scope: l.Scope, Wallets: l.Wallets, Currency: l.Currency, MaxPerTransaction: l.MaxPerTransaction, Amount: l.Amount}
		if l.Window != "" {
			w, err := time.ParseDuration(l.Window)
			if err != nil {
				return nil, apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("payload.limits[%d].window", i), "limit %q: window must be a duration such as \"24h\", got %q", l.Name, l.Window)
			}
			limit.Window = w
		}
		out = append(out, limit)
	}
	return out, nil
}

// ruleError is the 400 of rule i that does not decode, in the API's terms.
func ruleError(i int, raw json.RawMessage, err error) error {
	field := fmt.Sprintf("payload.rules[%d]", i)
	var probe struct {
		Name any `json:"name"`
	}
	which := field
	if json.Unmarshal(raw, &probe) == nil {
		if name, ok := probe.Name.(string); ok {
			which = fmt.Sprintf("%s (rule %q)", field, name)
		}
	}
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ) && typ.Field != "":
		return apperr.Invalid(apperr.CodeFormat, field+"."+typ.Field, "%s: %s must be %s, not a JSON %s", which, typ.Field, kindOf(typ.Type.Kind()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.Invalid(apperr.CodeFormat, field, "%s has an unknown field %q: a rule has name, operations, wallets, currencies, minUsd, destinations, action, groups (name, users, roles, threshold) and combine", which, name)
	}
	return apperr.Invalid(apperr.CodeFormat, field, "%s must be a rule object {name, operations, wallets, currencies, minUsd, destinations, action, groups, combine}", which)
}

// kindOf names a Go kind the way the API's documentation does.
func kindOf(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another kind of value"
}

// MaxPolicyVersions bounds the versions PolicyVersions lists.
const MaxPolicyVersions = 100

// Policy returns a version of the actor's company's policy: the one in force for version 0
// (the default policy when it adopted none); an unknown version is 404 on version.
func (d *Desk) Policy(ctx context.Context, a Actor, version int64) (policy.Policy, error) {
	if version == 0 {
		return d.activePolicy(ctx, a.CompanyID)
	}
	p, err := d.store.Policy(ctx, a.CompanyID, version)
	if errors.Is(err, apperr.ErrNotFound) {
		return p, apperr.NotFound("version", strconv.FormatInt(version, 10))
	}
	return p, err
}

// PolicyVersions lists the actor's company's policy versions, newest first, ending with the
// default policy (version 0) the first adopted version replaced.
func (d *Desk) PolicyVersions(ctx context.Context, a Actor) ([]policy.Policy, error) {
	versions, err := d.store.PolicyVersions(ctx, a.CompanyID, MaxPolicyVersions)
	if err != nil {
		return nil, err
	}
	if len(versions) < MaxPolicyVersions {
		versions = append(versions, DefaultPolicy(a.CompanyID))
	}
	return versions, nil
}

// DryRun answers which rule of the policy in force would decide a request of the actor with
// draft's body, without storing anything: the draft is checked as create checks it (service,
// entitlement, template), but not by its owner. A request a rule blocks is answered with
// that rule.
func (d *Desk) DryRun(ctx context.Context, a Actor, draft Draft) (policy.Policy, policy.Rule, error) {
	draft.EndToEndID = "00000000-0000-4000-8000-000000000000" // not used: nothing is stored
	if draft.Payload == nil {
		draft.Payload = []byte("{}")
	}
	svc, payload, err := d.checkDraft(ctx, a, draft)
	if err != nil {
		return policy.Policy{}, policy.Rule{}, err
	}
	p, err := d.activePolicy(ctx, a.CompanyID)
	if err != nil {
		return p, policy.Rule{}, err
	}
	i := p.Match(SubjectOf(svc, payload))
	if i < 0 {
		return p, policy.Rule{}, fmt.Errorf("policy version %d of %s matches no rule for %s", p.Version, a.CompanyID, svc.ID)
	}
	return p, p.Rules[i], nil
}
