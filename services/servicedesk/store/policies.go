package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// colPolicies keeps every version of every company's policy, one document per version
// (<companyId>:<version>), never changed once written: the latest is in force.
const colPolicies = "policies"

type groupDoc struct {
	Name      string   `bson:"name"`
	Users     []string `bson:"users,omitempty"`
	Roles     []string `bson:"roles,omitempty"`
	Threshold int      `bson:"threshold"`
}

type ruleDoc struct {
	Name         string     `bson:"name"`
	Operations   []string   `bson:"operations,omitempty"`
	Wallets      []string   `bson:"wallets,omitempty"`
	Currencies   []string   `bson:"currencies,omitempty"`
	MinUSD       string     `bson:"minUsd,omitempty"`
	Destinations []string   `bson:"destinations,omitempty"`
	Action       string     `bson:"action"`
	Groups       []groupDoc `bson:"groups,omitempty"`
	Combine      string     `bson:"combine,omitempty"`
}

type limitDoc struct {
	Name              string   `bson:"name"`
	Scope             string   `bson:"scope"`
	Wallets           []string `bson:"wallets,omitempty"`
	Currency          string   `bson:"currency"`
	MaxPerTransaction string   `bson:"maxPerTransaction,omitempty"`
	Amount            string   `bson:"amount,omitempty"`
	WindowSeconds     int64    `bson:"windowSeconds,omitempty"`
}

type policyDoc struct {
	ID        string     `bson:"_id"`
	CompanyID string     `bson:"companyId"`
	Version   int64      `bson:"version"`
	Rules     []ruleDoc  `bson:"rules"`
	Limits    []limitDoc `bson:"limits,omitempty"`
	RequestID string     `bson:"requestId,omitempty"`
	CreatedBy string     `bson:"createdBy,omitempty"`
	CreatedAt time.Time  `bson:"createdAt"`
}

func toRuleDoc(r policy.Rule) ruleDoc {
	d := ruleDoc{Name: r.Name, Operations: r.Operations, Wallets: r.Wallets, Currencies: r.Currencies, MinUSD: r.MinUSD,
		Destinations: r.Destinations, Action: r.Action, Combine: r.Combine}
	for _, g := range r.Groups {
		d.Groups = append(d.Groups, groupDoc(g))
	}
	return d
}

func (d ruleDoc) rule() policy.Rule {
	r := policy.Rule{Name: d.Name, Operations: d.Operations, Wallets: d.Wallets, Currencies: d.Currencies, MinUSD: d.MinUSD,
		Destinations: d.Destinations, Action: d.Action, Combine: d.Combine}
	for _, g := range d.Groups {
		r.Groups = append(r.Groups, policy.Group(g))
	}
	return r
}

// InsertPolicy stores a new version of a company's policy: p.Version must be one more than
// the latest (1 for the first), and two racing versions of the same number store one
// (apperr.ErrExists for the other).
func (s *Store) InsertPolicy(ctx context.Context, p policy.Policy) error {
	doc := policyDoc{ID: fmt.Sprintf("%s:%d", p.CompanyID, p.Version), CompanyID: p.CompanyID, Version: p.Version,
		RequestID: p.RequestID, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt.UTC()}
	for _, r := range p.Rules {
		doc.Rules = append(doc.Rules, toRuleDoc(r))
	}
	for _, l := range p.Limits {
		doc.Limits = append(doc.Limits, limitDoc{Name: l.Name, Scope: l.Scope, Wallets: l.Wallets, Currency: l.Currency,
			MaxPerTransaction: l.MaxPerTransaction, Amount: l.Amount, WindowSeconds: int64(l.Window / time.Second)})
	}
	_, err := s.db.Collection(colPolicies).InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("policy version %d of %s: %w", p.Version, p.CompanyID, apperr.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("insert policy version %d of %s: %w", p.Version, p.CompanyID, err)
	}
	return nil
}

// ActivePolicy returns the company's latest policy version, or apperr.ErrNotFound.
func (s *Store) ActivePolicy(ctx context.Context, companyID string) (policy.Policy, error) {
	return s.findPolicy(ctx, bson.D{{Key: "companyId", Value: companyID}},
		options.FindOne().SetSort(bson.D{{Key: "companyId", Value: 1}, {Key: "version", Value: -1}}))
}

// Policy returns one version of the company's policy, or apperr.ErrNotFound.
func (s *Store) Policy(ctx context.Context, companyID string, version int64) (policy.Policy, error) {
	return s.findPolicy(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("%s:%d", companyID, version)}})
}

func (s *Store) findPolicy(ctx context.Context, filter bson.D, opts ...options.Lister[options.FindOneOptions]) (policy.Policy, error) {
	var doc policyDoc
	err := s.db.Collection(colPolicies).FindOne(ctx, filter, opts...).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return policy.Policy{}, fmt.Errorf("policy: %w", apperr.ErrNotFound)
	}
	if err != nil {
		return policy.Policy{}, fmt.Errorf("read policy: %w", err)
	}
	return doc.policy(), nil
}

func (doc policyDoc) policy() policy.Policy {
	p := policy.Policy{CompanyID: doc.CompanyID, Version: doc.Version, RequestID: doc.RequestID, CreatedBy: doc.CreatedBy, CreatedAt: doc.CreatedAt.UTC()}
	for _, r := range doc.Rules {
		p.Rules = append(p.Rules, r.rule())
	}
	for _, l := range doc.Limits {
		p.Limits = append(p.Limits, policy.Limit{Name: l.Name, Scope: l.Scope, Wallets: l.Wallets, Currency: l.Currency,
			MaxPerTransaction: l.MaxPerTransaction, Amount: l.Amount, Window: time.Duration(l.WindowSeconds) * time.Second})
	}
	return p
}

// PolicyVersions returns the company's policy versions, newest first, at most limit (which
// the desk bounds: servicedesk.MaxPolicyVersions).
func (s *Store) PolicyVersions(ctx context.Context, companyID string, limit int64) ([]policy.Policy, error) {
	cur, err := s.db.Collection(colPolicies).Find(ctx, bson.D{{Key: "companyId", Value: companyID}},
		options.Find().SetSort(bson.D{{Key: "companyId", Value: 1}, {Key: "version", Value: -1}}).SetLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("read the policies of %s: %w", companyID, err)
	}
	var docs []policyDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read the policies of %s: %w", companyID, err)
	}
	out := make([]policy.Policy, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.policy())
	}
	return out, nil
}
