// Package store is the trading service's MongoDB repository: wallets (whose documents carry
// their journal accounts), vault_addresses, prices, and trading's journal.
package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/internal/journal"
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
func New(db *mongo.Database) *Store { return &Store{db: db, journal: newJournal(db), now: time.Now} }

// EnsureIndexes creates the indexes the queries and the idempotency guards rely on.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	indexes := map[string][]mongo.IndexModel{
		colWallets: {
			{Keys: bson.D{{Key: "companyId", Value: 1}, {Key: "createdAt", Value: 1}}, Options: options.Index().SetName("company_created")},
			{Keys: bson.D{{Key: "companyId", Value: 1}, {Key: "updatedAt", Value: 1}}, Options: options.Index().SetName("company_updated")},
			// A venue operator's searches: the wallets held at its venues (an $or branch).
			{Keys: bson.D{{Key: "venueId", Value: 1}, {Key: "createdAt", Value: 1}}, Options: options.Index().SetName("venue_created")},
		},
		colAddresses: {
			// One address per wallet and currency: what makes address generation idempotent.
			{Keys: bson.D{{Key: "walletId", Value: 1}, {Key: "currencyId", Value: 1}}, Options: options.Index().SetUnique(true).SetName("wallet_currency")},
			{Keys: bson.D{{Key: "companyId", Value: 1}, {Key: "createdAt", Value: 1}}, Options: options.Index().SetName("company_created")},
		},
	}
	if err := s.journal.EnsureIndexes(ctx); err != nil {
		return err
	}
	// One index per command: FerretDB 1.24 drops the connection (a server panic) when one
	// createIndexes command names two or more indexes that already exist, i.e. on restart.
	for col, models := range indexes {
		for _, m := range models {
			if _, err := s.db.Collection(col).Indexes().CreateOne(ctx, m); err != nil {
				return fmt.Errorf("create index of %s: %w", col, err)
			}
		}
	}
	return nil
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
