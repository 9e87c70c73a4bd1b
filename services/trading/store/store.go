// Package store is the trading service's MongoDB repository: wallets (whose documents carry
// their journal accounts), vault_addresses, prices, and trading's journal. A wallet's or an
// address's change stages its event in the same write (events.go).
package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/trading"
)

const (
	colWallets   = "wallets"
	colAddresses = "vault_addresses"
	colPrices    = "prices"
)

// PriceTTL bounds how stale the prices a store serves may be (they are cached in memory so
// a search costs one find and one count).
const PriceTTL = 10 * time.Second

// Store reads and writes the trading collections.
type Store struct {
	db      *mongo.Database
	journal *journal.Journal
	now     func() time.Time

	mu       sync.Mutex
	prices   trading.Prices
	loadedAt time.Time
}

// New returns a store on db.
func New(db *mongo.Database) *Store { return NewWithClock(db, nil) }

// NewWithClock returns a store on db whose times, its journal's postings included, come
// from now (time.Now when nil): a test moves it to post at the times it chooses.
func NewWithClock(db *mongo.Database, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, journal: newJournal(db, now), now: now}
}

// Indexes are the indexes the queries and the idempotency guards rely on, trading's
// journal's included. A wallet search is sorted by id, createdAt or updatedAt (then _id)
// within its scope, the company's wallets or (an $or branch) those held at the venues it
// operates: each has an index for every sort; an address list by id or createdAt. Wallets
// and addresses carry an outbox (Outboxes), each with the relay's index.
func Indexes() []mongodb.Index {
	return append(journal.Indexes(journalPrefix),
		mongodb.Index{Collection: colWallets, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		mongodb.Index{Collection: colWallets, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		mongodb.Index{Collection: colWallets, Name: "company_updated_id", Keys: mongodb.Keys("companyId", "updatedAt", "_id")},
		mongodb.Index{Collection: colWallets, Name: "venue_id", Keys: mongodb.Keys("venueId", "_id")},
		mongodb.Index{Collection: colWallets, Name: "venue_created_id", Keys: mongodb.Keys("venueId", "createdAt", "_id")},
		mongodb.Index{Collection: colWallets, Name: "venue_updated_id", Keys: mongodb.Keys("venueId", "updatedAt", "_id")},
		// One address per wallet and currency: what makes address generation idempotent.
		mongodb.Index{Collection: colAddresses, Name: "wallet_currency", Keys: mongodb.Keys("walletId", "currencyId"), Unique: true},
		mongodb.Index{Collection: colAddresses, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		mongodb.Index{Collection: colAddresses, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		// The relay's query of the documents with events not yet relayed.
		outbox.Index(colWallets),
		outbox.Index(colAddresses),
	)
}

// EnsureIndexes creates the Indexes.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.db, Indexes())
}

var sortFields = map[string]string{"id": "_id", "createdAt": "createdAt", "updatedAt": "updatedAt"}

// findAll runs one find and decodes every document into T.
func findAll[T any](ctx context.Context, col *mongo.Collection, filter bson.D, opts *options.FindOptionsBuilder) ([]T, error) {
	cur, err := col.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", col.Name(), err)
	}
	var docs []T
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read %s: %w", col.Name(), err)
	}
	return docs, nil
}
