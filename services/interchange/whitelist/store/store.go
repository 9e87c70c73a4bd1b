// Package store is the MongoDB repository of interchange's address side: the collections
// whitelisted_addresses and settlement_addresses.
package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

const (
	colWhitelisted = "whitelisted_addresses"
	colSettlement  = "settlement_addresses"
)

// Store reads and writes the address collections.
type Store struct {
	db  *mongo.Database
	now func() time.Time
}

// New returns a store on db.
func New(db *mongo.Database) *Store { return &Store{db: db, now: time.Now} }

// EnsureIndexes creates the indexes the queries and the uniqueness guards rely on.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	indexes := []struct {
		col   string
		model mongo.IndexModel
	}{
		// One ACTIVE address per company, blockchain and normalised address: activeKey holds
		// that triple while ACTIVE and the document's own id once deactivated (a portable
		// stand-in for a partial unique index).
		{colWhitelisted, mongo.IndexModel{Keys: bson.D{{Key: "activeKey", Value: 1}}, Options: options.Index().SetUnique(true).SetName("active_key")}},
		{colWhitelisted, mongo.IndexModel{Keys: bson.D{{Key: "companyId", Value: 1}, {Key: "createdAt", Value: 1}}, Options: options.Index().SetName("company_created")}},
		// One settlement address per company, venue and currency id: what makes generation
		// idempotent.
		{colSettlement, mongo.IndexModel{Keys: bson.D{{Key: "companyId", Value: 1}, {Key: "venueId", Value: 1}, {Key: "currencyId", Value: 1}},
			Options: options.Index().SetUnique(true).SetName("company_venue_currency")}},
		{colSettlement, mongo.IndexModel{Keys: bson.D{{Key: "companyId", Value: 1}, {Key: "createdAt", Value: 1}}, Options: options.Index().SetName("company_created")}},
	}
	// One index per command: FerretDB 1.24 drops the connection when one createIndexes
	// command names two or more indexes that already exist (docs/decisions.md).
	for _, ix := range indexes {
		if _, err := s.db.Collection(ix.col).Indexes().CreateOne(ctx, ix.model); err != nil {
			return fmt.Errorf("create index of %s: %w", ix.col, err)
		}
	}
	return nil
}
