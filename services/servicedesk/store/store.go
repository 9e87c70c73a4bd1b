// Package store is the service desk's MongoDB repository.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/servicedesk"
)

// Collection names.
const (
	colCatalog   = "catalog"
	colCompanies = "companies"
	colUsers     = "users"
)

// Store reads and writes the service desk's collections.
type Store struct {
	db *mongo.Database
}

// New returns a store on db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

// Indexes are the indexes the queries rely on.
func Indexes() []mongodb.Index {
	return []mongodb.Index{
		{Collection: colUsers, Name: "company_email", Keys: mongodb.Keys("companyId", "email"), Unique: true},
		{Collection: colUsers, Name: "user_id", Keys: mongodb.Keys("userId")},
		{Collection: colCompanies, Name: "venue_ids", Keys: mongodb.Keys("venueIds")},
		{Collection: colCatalog, Name: "product_id", Keys: mongodb.Keys("product", "_id")},
		{Collection: colRequests, Name: "company_e2e", Keys: mongodb.Keys("companyId", "endToEndId"), Unique: true},
		{Collection: colPolicies, Name: "company_version", Keys: mongodb.Keys("companyId", "version")},
		// The search of a company's requests, by id, createdAt or updatedAt, then _id.
		{Collection: colRequests, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		{Collection: colRequests, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		{Collection: colRequests, Name: "company_updated_id", Keys: mongodb.Keys("companyId", "updatedAt", "_id")},
		// The sweeper's searches (Due): expired pending requests, authorised ones left
		// unexecuted.
		{Collection: colRequests, Name: "status_expires", Keys: mongodb.Keys("status", "expiresAt")},
		{Collection: colRequests, Name: "status_authorised", Keys: mongodb.Keys("status", "authorisedAt")},
		// The relay's search of the requests with events to relay (Outboxes).
		outbox.Index(colRequests),
	}
}

// EnsureIndexes creates the Indexes.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.db, Indexes())
}

type companyDoc struct {
	ID         string   `bson:"_id"`
	Name       string   `bson:"name"`
	Active     bool     `bson:"active"`
	PublicKeys []string `bson:"publicKeys"`
	DomainID   string   `bson:"domainId"`
	VenueIDs   []string `bson:"venueIds,omitempty"`
	Custodian  bool     `bson:"custodian,omitempty"`
}

type userDoc struct {
	ID           string   `bson:"_id"` // companyId:email
	UserID       string   `bson:"userId"`
	Email        string   `bson:"email"`
	CompanyID    string   `bson:"companyId"`
	Roles        []string `bson:"roles"`
	Entitlements []string `bson:"entitlements"`
	Active       bool     `bson:"active"`
	PublicKey    string   `bson:"publicKey"`
}

// PutCompany creates or replaces a company. A venue has one operator: a company naming a
// venue another company operates, or an empty venue id, is refused (apperr.ErrConflict).
// Onboarding is an administrator's step, one at a time; on MongoDB a unique index on
// venueIds, partial to the companies that have them, would make the rule atomic.
func (s *Store) PutCompany(ctx context.Context, c servicedesk.Company) error {
	if err := s.checkVenues(ctx, c); err != nil {
		return err
	}
	doc := companyDoc(c)
	_, err := s.db.Collection(colCompanies).ReplaceOne(ctx, bson.D{{Key: "_id", Value: c.ID}}, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("put company %s: %w", c.ID, err)
	}
	return nil
}

// checkVenues refuses an empty venue id and a venue already operated by another company.
func (s *Store) checkVenues(ctx context.Context, c servicedesk.Company) error {
	if len(c.VenueIDs) == 0 {
		return nil
	}
	if slices.Contains(c.VenueIDs, "") {
		return fmt.Errorf("company %s: an empty venue id: %w", c.ID, apperr.ErrConflict)
	}
	var other companyDoc
	filter := bson.D{{Key: "venueIds", Value: bson.D{{Key: "$in", Value: c.VenueIDs}}}, {Key: "_id", Value: bson.D{{Key: "$ne", Value: c.ID}}}}
	err := s.db.Collection(colCompanies).FindOne(ctx, filter).Decode(&other)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil
	case err != nil:
		return fmt.Errorf("find the operators of %v: %w", c.VenueIDs, err)
	}
	return fmt.Errorf("company %s: venue(s) %v already operated by %s: %w", c.ID, c.VenueIDs, other.ID, apperr.ErrConflict)
}

// PutUser creates or replaces a user.
func (s *Store) PutUser(ctx context.Context, u servicedesk.User) error {
	doc := userDoc{ID: u.CompanyID + ":" + u.Email, UserID: u.ID, Email: u.Email, CompanyID: u.CompanyID, Roles: u.Roles,
		Entitlements: u.Entitlements, Active: u.Active, PublicKey: u.PublicKey}
	_, err := s.db.Collection(colUsers).ReplaceOne(ctx, bson.D{{Key: "_id", Value: doc.ID}}, doc, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("put user %s: %w", u.Email, err)
	}
	return nil
}

// Company returns the company id, or apperr.ErrNotFound.
func (s *Store) Company(ctx context.Context, id string) (servicedesk.Company, error) {
	var doc companyDoc
	err := s.db.Collection(colCompanies).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return servicedesk.Company{}, fmt.Errorf("company %s: %w", id, apperr.ErrNotFound)
	}
	if err != nil {
		return servicedesk.Company{}, fmt.Errorf("find company %s: %w", id, err)
	}
	return servicedesk.Company(doc), nil
}

// User returns the user email of company, or apperr.ErrNotFound.
func (s *Store) User(ctx context.Context, companyID, email string) (servicedesk.User, error) {
	var doc userDoc
	err := s.db.Collection(colUsers).FindOne(ctx, bson.D{{Key: "_id", Value: companyID + ":" + email}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return servicedesk.User{}, fmt.Errorf("user %s: %w", email, apperr.ErrNotFound)
	}
	if err != nil {
		return servicedesk.User{}, fmt.Errorf("find user %s: %w", email, err)
	}
	return fromUserDoc(doc), nil
}

// UserByID returns the user with id (a UUID), or apperr.ErrNotFound.
func (s *Store) UserByID(ctx context.Context, id string) (servicedesk.User, error) {
	var doc userDoc
	err := s.db.Collection(colUsers).FindOne(ctx, bson.D{{Key: "userId", Value: id}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return servicedesk.User{}, fmt.Errorf("user %s: %w", id, apperr.ErrNotFound)
	}
	if err != nil {
		return servicedesk.User{}, fmt.Errorf("find user %s: %w", id, err)
	}
	return fromUserDoc(doc), nil
}

func fromUserDoc(doc userDoc) servicedesk.User {
	return servicedesk.User{ID: doc.UserID, Email: doc.Email, CompanyID: doc.CompanyID, Roles: doc.Roles,
		Entitlements: doc.Entitlements, Active: doc.Active, PublicKey: doc.PublicKey}
}

// MaxCompanyUsers bounds the users CompanyUsers reads (a company's API users; a policy names
// them).
const MaxCompanyUsers = 1000

// CompanyUsers returns the company's users (by the company_email index), at most
// MaxCompanyUsers.
func (s *Store) CompanyUsers(ctx context.Context, companyID string) ([]servicedesk.User, error) {
	cur, err := s.db.Collection(colUsers).Find(ctx, bson.D{{Key: "companyId", Value: companyID}}, options.Find().SetLimit(MaxCompanyUsers))
	if err != nil {
		return nil, fmt.Errorf("read the users of %s: %w", companyID, err)
	}
	var docs []userDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read the users of %s: %w", companyID, err)
	}
	out := make([]servicedesk.User, 0, len(docs))
	for _, d := range docs {
		out = append(out, fromUserDoc(d))
	}
	return out, nil
}
