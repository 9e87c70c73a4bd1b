package store

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/outbox"
)

// SearchVASPs returns one page of the VASPs visible to f.CompanyID that match f, sorted by
// id, and the number of all matches (mongodb.Search).
func (s *Store) SearchVASPs(ctx context.Context, f compliance.VASPFilter) ([]compliance.VASP, int64, error) {
	// Visible: unrestricted (an empty list) or restricted to the company among others; both
	// branches are equalities that the restricted_id index serves in id order ($size would
	// not use it).
	visible := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "restrictedCompanies", Value: bson.A{}}},
		bson.D{{Key: "restrictedCompanies", Value: f.CompanyID}},
	}}}
	and := bson.A{visible}
	and = mongodb.AppendIn(and, "_id", f.IDs)
	and = mongodb.AppendIn(and, "name", f.Names)
	and = mongodb.AppendIn(and, "travelRuleMethod", f.TravelRuleMethods)
	docs, total, err := mongodb.Search[vaspDoc](ctx, s.db.Collection(colVASPs), mongodb.Query{
		Filter: mongodb.And(and), Sort: mongodb.Sorted("_id", f.Page.Desc), Skip: f.Page.Offset, Limit: f.Page.Limit,
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]compliance.VASP, 0, len(docs))
	for _, d := range docs {
		out = append(out, compliance.VASP(d))
	}
	return out, total, nil
}

// Activations returns the company's activations of the given VASPs, keyed by VASP id, in one
// query; a VASP the company never switched has no entry.
func (s *Store) Activations(ctx context.Context, companyID string, vaspIDs []string) (map[string]compliance.Activation, error) {
	out := make(map[string]compliance.Activation, len(vaspIDs))
	if len(vaspIDs) == 0 {
		return out, nil
	}
	keys := make([]string, len(vaspIDs))
	for i, id := range vaspIDs {
		keys[i] = activationID(companyID, id)
	}
	opts := options.Find().SetProjection(bson.D{{Key: "history", Value: 0}, {Key: outbox.FieldOutbox, Value: 0}})
	cur, err := s.db.Collection(colActivations).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}, opts)
	if err != nil {
		return nil, fmt.Errorf("find activations of %s: %w", companyID, err)
	}
	var docs []activationDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read activations of %s: %w", companyID, err)
	}
	for _, d := range docs {
		out[d.VASPID] = d.activation()
	}
	return out, nil
}

// ActivationHistory returns the audit of a company's activation of a VASP, oldest first: one
// entry per change of state. A VASP the company never switched has an empty history.
func (s *Store) ActivationHistory(ctx context.Context, companyID, vaspID string) ([]compliance.ActivationChange, error) {
	var doc activationDoc
	err := s.db.Collection(colActivations).FindOne(ctx, bson.D{{Key: "_id", Value: activationID(companyID, vaspID)}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return []compliance.ActivationChange{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find activation history %s:%s: %w", companyID, vaspID, err)
	}
	out := make([]compliance.ActivationChange, 0, len(doc.History))
	for _, c := range doc.History {
		out = append(out, compliance.ActivationChange{Active: c.Active, At: c.At.UTC(), By: c.By})
	}
	return out, nil
}

// activationID is the _id of a company's activation of a VASP.
func activationID(companyID, vaspID string) string { return companyID + ":" + vaspID }

// errNotFound wraps apperr.ErrNotFound with what was looked for.
func errNotFound(what, id string) error { return fmt.Errorf("%s %s: %w", what, id, apperr.ErrNotFound) }
