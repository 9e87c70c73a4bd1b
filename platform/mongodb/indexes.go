package mongodb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Index is one index a store declares. The store's EnsureIndexes creates its list, and the
// store's tests check every query it issues against the same list (testdb.CheckIndexes).
type Index struct {
	Collection string
	// Name is the index name: an index is found again by it on every start.
	Name string
	// Keys are the indexed fields in order, each 1 (ascending) or -1 (descending).
	Keys bson.D
	// Unique refuses a second document with the same keys.
	Unique bool
	// Sparse leaves out the documents without the first key.
	Sparse bool
}

// Keys are ascending index keys on fields, in order.
func Keys(fields ...string) bson.D {
	keys := make(bson.D, len(fields))
	for i, f := range fields {
		keys[i] = bson.E{Key: f, Value: 1}
	}
	return keys
}

// model is the driver's description of the index.
func (ix Index) model() mongo.IndexModel {
	opts := options.Index().SetName(ix.Name)
	if ix.Unique {
		opts.SetUnique(true)
	}
	if ix.Sparse {
		opts.SetSparse(true)
	}
	return mongo.IndexModel{Keys: ix.Keys, Options: opts}
}

// EnsureIndexes creates the indexes on db that do not exist yet, in order. It sends one
// index per command: FerretDB 1.24 drops the connection (a server panic) when one
// createIndexes command names two or more indexes that already exist, i.e. on every restart
// (docs/decisions.md).
func EnsureIndexes(ctx context.Context, db *mongo.Database, indexes []Index) error {
	for _, ix := range indexes {
		if _, err := db.Collection(ix.Collection).Indexes().CreateOne(ctx, ix.model()); err != nil {
			return fmt.Errorf("create index %s.%s: %w", ix.Collection, ix.Name, err)
		}
	}
	return nil
}
