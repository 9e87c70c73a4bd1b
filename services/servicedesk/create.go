package servicedesk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// Draft is a new request as its maker sends it.
type Draft struct {
	ServiceID  string
	EndToEndID string
	// Payload is the payload as a JSON object; nil when the maker sent none.
	Payload []byte
}

// Create stores the actor's new request once its owner validated it and the company's
// policy decided it, and returns it. The policy's rule is matched with what the owner
// reports the request to be (its wallet, currency, USD value and destination kind) over what
// the payload tells (SubjectOf); a rule that blocks it refuses it, and nothing is stored (an
// owner's Validate writes nothing). A retry with the same endToEndId and body returns the
// original request; the same endToEndId with another body is a 409 ER-104.
func (d *Desk) Create(ctx context.Context, a Actor, draft Draft) (Request, error) {
	svc, payload, err := d.checkDraft(ctx, a, draft)
	if err != nil {
		return Request{}, err
	}
	hash := BodyHash(svc.ID, payload)
	if prior, err := d.store.RequestByEndToEnd(ctx, a.CompanyID, draft.EndToEndID); err == nil {
		return replay(prior, hash)
	} else if !errors.Is(err, apperr.ErrNotFound) {
		return Request{}, err
	}
	r := NewRequest(d.newID(), Maker{Email: a.Email, CompanyID: a.CompanyID, CompanyName: a.CompanyName},
		svc, draft.EndToEndID, payload, hash, d.now())
	if r.Owner, err = OwnerFor(svc, payload); err != nil {
		return Request{}, err
	}
	validated, err := d.owners.Validate(ctx, r, a.Venues)
	if err != nil {
		return Request{}, err
	}
	if err := d.decideBy(ctx, &r, reported(SubjectOf(svc, payload), validated.Subject)); err != nil {
		return Request{}, err
	}
	r.EntityIDs, r.PluginDetails = validated.EntityIDs, validated.Details
	err = d.store.InsertRequest(ctx, r)
	if errors.Is(err, apperr.ErrExists) { // a racing create with the same endToEndId won
		prior, err := d.store.RequestByEndToEnd(ctx, a.CompanyID, draft.EndToEndID)
		if err != nil {
			return Request{}, err
		}
		return replay(prior, hash)
	}
	return r, err
}

// decideBy records on r the version of its company's policy in force (the default when the
// company adopted none), the rule that matches subject and the USD value it was matched
// with; a rule that blocks refuses the request (403 naming the rule), and nothing is stored.
func (d *Desk) decideBy(ctx context.Context, r *Request, subject policy.Subject) error {
	p, err := d.activePolicy(ctx, r.CompanyID)
	if err != nil {
		return err
	}
	i := p.Match(subject)
	if i < 0 { // a stored policy always ends with a catch-all (policy.Validate)
		return fmt.Errorf("policy version %d of %s matches no rule for %s", p.Version, r.CompanyID, subject.Operation)
	}
	rule := p.Rules[i]
	if rule.Action == policy.ActionBlock {
		return apperr.Forbidden("rule %q of policy version %d blocks this request (service %s)", rule.Name, p.Version, r.ServiceID)
	}
	r.PolicyVersion, r.Rule = p.Version, &rule
	if subject.USD != nil {
		r.USD = subject.USD.String()
	}
	return nil
}

// checkDraft validates a draft and returns its catalog service and canonical payload.
func (d *Desk) checkDraft(ctx context.Context, a Actor, draft Draft) (Service, string, error) {
	switch {
	case draft.ServiceID == "":
		return Service{}, "", apperr.Missing("serviceId")
	case draft.EndToEndID == "":
		return Service{}, "", apperr.Missing("endToEndId")
	case uuid.Validate(draft.EndToEndID) != nil || len(draft.EndToEndID) != 36:
		return Service{}, "", apperr.Invalid(apperr.CodeFormat, "endToEndId", "endToEndId must be a UUID")
	case draft.Payload == nil:
		return Service{}, "", apperr.Missing("payload")
	}
	found, err := d.store.FindCatalog(ctx, CatalogFilter{Entitled: []string{draft.ServiceID}, Venue: true, Custodian: true})
	if err != nil {
		return Service{}, "", err
	}
	if len(found) == 0 {
		return Service{}, "", apperr.NotFound("serviceId", draft.ServiceID)
	}
	svc := found[0]
	if svc.VenueOnly && len(a.Venues) == 0 {
		return svc, "", apperr.Forbidden("service %s is offered to the operators of trading venues; company %s operates none", svc.ID, a.CompanyID)
	}
	if svc.CustodianOnly {
		if custodian, err := d.IsCustodian(ctx, a.CompanyID); err != nil {
			return svc, "", err
		} else if !custodian {
			return svc, "", apperr.Forbidden("service %s is offered to the custodian's operators only; company %s is not the custodian", svc.ID, a.CompanyID)
		}
	}
	if !a.Entitled(svc.ID) {
		return svc, "", apperr.Forbidden("you are not entitled to service %s", svc.ID)
	}
	if err := checkTemplate(svc, draft.Payload); err != nil {
		return svc, "", err
	}
	payload, err := canonicalPayload(draft.Payload)
	return svc, payload, err
}

// checkTemplate refuses payload fields the service's template does not have (empty ones too,
// which the canonical payload leaves out).
func checkTemplate(svc Service, payload []byte) error {
	var template, fields map[string]any
	if err := json.Unmarshal([]byte(svc.Template), &template); err != nil {
		return fmt.Errorf("template of %s: %w", svc.ID, err)
	}
	if err := json.Unmarshal(payload, &fields); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := template[k]; !ok {
			return apperr.Invalid(apperr.CodeFormat, "payload."+k, "payload field %s is not part of service %s", k, svc.ID)
		}
	}
	return nil
}

// canonicalPayload returns the payload's canonical JSON (an object; null is empty).
func canonicalPayload(raw []byte) (string, error) {
	c, err := canonical.FromJSON(raw)
	if err != nil {
		return "", err
	}
	if string(c) == "null" {
		return "{}", nil
	}
	return string(c), nil
}

// BodyHash is the hash of a request's body (its service and canonical payload) that makes a
// retry recognisable and that the audit chain binds.
func BodyHash(serviceID, payload string) string {
	sum := sha256.Sum256([]byte(serviceID + "\n" + payload))
	return hex.EncodeToString(sum[:])
}

// replay answers a retry with the prior request of its endToEndId, if the bodies match.
func replay(prior Request, hash string) (Request, error) {
	if prior.BodyHash != hash {
		return Request{}, apperr.Conflict(apperr.CodeExists, "endToEndId %s was already used for a different request", prior.EndToEndID)
	}
	return prior, nil
}
