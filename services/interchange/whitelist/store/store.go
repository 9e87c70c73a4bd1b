// Package store is the MongoDB repository of interchange's address side: the collections
// whitelisted_addresses and settlement_addresses.
package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/outbox"
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

// Indexes are the indexes the queries and the uniqueness guards rely on. The lists are the
// company's, sorted by createdAt (whitelisted addresses), or by id or createdAt (settlement
// addresses), then _id.
func Indexes() []mongodb.Index {
	return []mongodb.Index{
		// One ACTIVE address per company, blockchain and normalised address: activeKey holds
		// that triple while ACTIVE and the document's own id once deactivated (a portable
		// stand-in for a partial unique index).
		{Collection: colWhitelisted, Name: "active_key", Keys: mongodb.Keys("activeKey"), Unique: true},
		{Collection: colWhitelisted, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		// One settlement address per company, venue and currency id: what makes generation
		// idempotent.
		{Collection: colSettlement, Name: "company_venue_currency", Keys: mongodb.Keys("companyId", "venueId", "currencyId"), Unique: true},
		{Collection: colSettlement, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		{Collection: colSettlement, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		// The relay's search for addresses with events to relay (Outboxes).
		outbox.Index(colWhitelisted),
	}
}

// EnsureIndexes creates the Indexes.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.db, Indexes())
}
