// Package store is the compliance service's MongoDB repository.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/compliance"
)

const (
	colVASPs         = "vasps"
	colActivations   = "vasp_activations"
	colBeneficiaries = "beneficiaries"
	// maxAttempts bounds the retries of an activation change racing opposite changes.
	maxAttempts = 5
)

// Store reads and writes the compliance collections.
type Store struct {
	db  *mongo.Database
	now func() time.Time
}

// New returns a store on db.
func New(db *mongo.Database) *Store { return &Store{db: db, now: time.Now} }

// Indexes are the indexes the queries rely on.
func Indexes() []mongodb.Index {
	return []mongodb.Index{
		{Collection: colActivations, Name: "company_vasp", Keys: mongodb.Keys("companyId", "vaspId"), Unique: true},
		{Collection: colBeneficiaries, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		// The registry search: the VASPs restricted to the company and the unrestricted ones
		// (an empty list), each by id.
		{Collection: colVASPs, Name: "restricted_id", Keys: mongodb.Keys("restrictedCompanies", "_id")},
	}
}

// EnsureIndexes creates the Indexes.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.db, Indexes())
}

type vaspDoc struct {
	ID                  string   `bson:"_id"`
	Name                string   `bson:"name"`
	TravelRuleMethod    string   `bson:"travelRuleMethod"`
	Country             string   `bson:"country"`
	Active              bool     `bson:"active"`
	RestrictedCompanies []string `bson:"restrictedCompanies"`
}

type changeDoc struct {
	Active bool      `bson:"active"`
	At     time.Time `bson:"at"`
	By     string    `bson:"by"`
}

type activationDoc struct {
	ID        string      `bson:"_id"` // companyId:vaspId
	CompanyID string      `bson:"companyId"`
	VASPID    string      `bson:"vaspId"`
	Active    bool        `bson:"active"`
	Version   int64       `bson:"version"`
	UpdatedAt time.Time   `bson:"updatedAt"`
	UpdatedBy string      `bson:"updatedBy"`
	History   []changeDoc `bson:"history"`
}

// PutVASP creates or replaces a registry entry.
func (s *Store) PutVASP(ctx context.Context, v compliance.VASP) error {
	doc := vaspDoc(v)
	if doc.RestrictedCompanies == nil {
		doc.RestrictedCompanies = []string{}
	}
	if _, err := s.db.Collection(colVASPs).ReplaceOne(ctx, bson.D{{Key: "_id", Value: v.ID}}, doc, options.Replace().SetUpsert(true)); err != nil {
		return fmt.Errorf("put vasp %s: %w", v.ID, err)
	}
	return nil
}

// VASP returns a registry entry, or apperr.ErrNotFound.
func (s *Store) VASP(ctx context.Context, id string) (compliance.VASP, error) {
	var doc vaspDoc
	err := s.db.Collection(colVASPs).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return compliance.VASP{}, errNotFound("vasp", id)
	}
	if err != nil {
		return compliance.VASP{}, fmt.Errorf("find vasp %s: %w", id, err)
	}
	return compliance.VASP(doc), nil
}

// SetActivation records a company's activation choice in one atomic upsert; a change of
// state is appended to the document's history, a repeat of the same state is not.
func (s *Store) SetActivation(ctx context.Context, companyID, vaspID string, active bool, by string) (compliance.Activation, error) {
	id := activationID(companyID, vaspID)
	now := s.now().UTC()
	change := changeDoc{Active: active, At: now, By: by}
	// Only documents whose state differs are updated; an unchanged state is read back as is.
	filter := bson.D{{Key: "_id", Value: id}, {Key: "active", Value: bson.D{{Key: "$ne", Value: active}}}}
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "active", Value: active}, {Key: "updatedAt", Value: now}, {Key: "updatedBy", Value: by}, {Key: "companyId", Value: companyID}, {Key: "vaspId", Value: vaspID}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
		{Key: "$push", Value: bson.D{{Key: "history", Value: change}}},
	}
	col := s.db.Collection(colActivations)
	var doc activationDoc
	var err error
	for range maxAttempts {
		err = col.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
		if !mongo.IsDuplicateKeyError(err) {
			break
		}
		// The document exists and was not updated: it is already in the asked state, unless a
		// racing call of the opposite value won in between; then update it again.
		err = col.FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "active", Value: active}}).Decode(&doc)
		if !errors.Is(err, mongo.ErrNoDocuments) {
			break
		}
	}
	if err != nil {
		return compliance.Activation{}, fmt.Errorf("set activation %s: %w", id, err)
	}
	return doc.activation(), nil
}

func (d activationDoc) activation() compliance.Activation {
	return compliance.Activation{VASPID: d.VASPID, CompanyID: d.CompanyID, Active: d.Active,
		Version: d.Version, UpdatedAt: d.UpdatedAt.UTC(), UpdatedBy: d.UpdatedBy}
}
