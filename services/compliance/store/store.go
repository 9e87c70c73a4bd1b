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

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/outbox"
)

const (
	colVASPs         = "vasps"
	colActivations   = "vasp_activations"
	colBeneficiaries = "beneficiaries"
	// maxAttempts bounds the attempts of an activation change racing other changes.
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
		// The relay's search of the activations with events to relay (Outboxes).
		outbox.Index(colActivations),
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

// SetActivation records a company's activation choice: a change of state is appended to the
// document's history and stages its vasp.activated or vasp.deactivated event, in one
// conditional update of the version read (or the insert of the company's first choice); a
// repeat of the same state changes nothing and is read back as is. A change that loses to a
// racing one reads the document again and retries, up to maxAttempts, then gives
// apperr.ErrConflict.
func (s *Store) SetActivation(ctx context.Context, companyID, vaspID string, active bool, by string) (compliance.Activation, error) {
	id := activationID(companyID, vaspID)
	col := s.db.Collection(colActivations)
	name, named := "", false
	for range maxAttempts {
		cur, exists, err := s.activationState(ctx, id)
		if err != nil {
			return compliance.Activation{}, err
		}
		if exists && cur.Active == active {
			return cur.activation(), nil
		}
		if !named {
			if name, err = s.vaspName(ctx, vaspID); err != nil {
				return compliance.Activation{}, err
			}
			named = true
		}
		// The database keeps milliseconds: the answer is the stored value.
		now := s.now().UTC().Truncate(time.Millisecond)
		next := activationDoc{ID: id, CompanyID: companyID, VASPID: vaspID, Active: active, Version: cur.Version + 1, UpdatedAt: now, UpdatedBy: by}
		change := changeDoc{Active: active, At: now, By: by}
		event := activationEvent(ctx, next, name)
		if !exists {
			next.History = []changeDoc{change}
			doc, err := outbox.NewDocument(next, now, event)
			if err != nil {
				return compliance.Activation{}, fmt.Errorf("activation %s: %w", id, err)
			}
			_, err = col.InsertOne(ctx, doc)
			if mongo.IsDuplicateKeyError(err) {
				continue // a racing first choice was stored meanwhile: read it
			}
			if err != nil {
				return compliance.Activation{}, fmt.Errorf("insert activation %s: %w", id, err)
			}
			return next.activation(), nil
		}
		set, push, _, err := outbox.Stage(cur.EventSeq, now, event)
		if err != nil {
			return compliance.Activation{}, fmt.Errorf("activation %s: %w", id, err)
		}
		filter := bson.D{{Key: "_id", Value: id}, {Key: "version", Value: cur.Version}}
		update := bson.D{
			{Key: "$set", Value: append(bson.D{{Key: "active", Value: active}, {Key: "version", Value: next.Version},
				{Key: "updatedAt", Value: now}, {Key: "updatedBy", Value: by}}, set...)},
			{Key: "$push", Value: append(bson.D{{Key: "history", Value: change}}, push...)},
		}
		res, err := col.UpdateOne(ctx, filter, update)
		if err != nil {
			return compliance.Activation{}, fmt.Errorf("update activation %s: %w", id, err)
		}
		if res.MatchedCount == 1 {
			return next.activation(), nil
		}
		// A racing change moved the version on: read it again.
	}
	return compliance.Activation{}, fmt.Errorf("set activation %s: changed concurrently %d times: %w", id, maxAttempts, apperr.ErrConflict)
}

// activationState is an activation document as SetActivation reads it, with its event
// sequence (zero for a document stored before it had events).
type activationState struct {
	activationDoc
	EventSeq int64
}

// activationState reads activation id, and whether it exists.
func (s *Store) activationState(ctx context.Context, id string) (activationState, bool, error) {
	var raw bson.Raw
	err := s.db.Collection(colActivations).FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: "history", Value: 0}, {Key: outbox.FieldOutbox, Value: 0}})).Decode(&raw)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return activationState{}, false, nil
	}
	if err != nil {
		return activationState{}, false, fmt.Errorf("find activation %s: %w", id, err)
	}
	var st activationState
	if err := bson.Unmarshal(raw, &st.activationDoc); err != nil {
		return st, false, fmt.Errorf("read activation %s: %w", id, err)
	}
	st.EventSeq, _ = raw.Lookup(outbox.FieldSeq).AsInt64OK() // absent: zero
	return st, true, nil
}

// vaspName is the registry's name of VASP id; none when the registry lacks it.
func (s *Store) vaspName(ctx context.Context, id string) (string, error) {
	var doc struct {
		Name string `bson:"name"`
	}
	err := s.db.Collection(colVASPs).FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: "name", Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find vasp %s: %w", id, err)
	}
	return doc.Name, nil
}

func (d activationDoc) activation() compliance.Activation {
	return compliance.Activation{VASPID: d.VASPID, CompanyID: d.CompanyID, Active: d.Active,
		Version: d.Version, UpdatedAt: d.UpdatedAt.UTC(), UpdatedBy: d.UpdatedBy}
}
