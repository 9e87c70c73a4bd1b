package journal

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// AccountCounters is one account, (holder, currency), with its counters as stored.
type AccountCounters struct {
	Holder   string
	Currency string
	Counters
}

// SystemAccounts returns every account of the journal's system accounts collection (world,
// clearing, transit accounts…), by holder then currency, with their counters as stored (an
// entry in flight may be half applied among them; Reconcile accounts for that). It reads that
// collection only, never the owners' wallet collections.
func (j *Journal) SystemAccounts(ctx context.Context) ([]AccountCounters, error) {
	cur, err := j.accts.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "accounts", Value: 1}}).
		SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read system accounts: %w", err)
	}
	defer cur.Close(ctx)
	var out []AccountCounters
	for cur.Next(ctx) {
		var doc holderDoc
		if err := cur.Decode(&doc); err != nil {
			return nil, fmt.Errorf("read system account: %w", err)
		}
		for _, currency := range slices.Sorted(maps.Keys(doc.Accounts)) {
			c, err := doc.counters(currency)
			if err != nil {
				return nil, err
			}
			out = append(out, AccountCounters{Holder: doc.ID, Currency: currency, Counters: c})
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("read system accounts: %w", err)
	}
	return out, nil
}
