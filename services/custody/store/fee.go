package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/custody"
)

const colFees = "fee_estimates"

// feeDoc is the latest fee estimate of one currency, keyed by currency id.
type feeDoc struct {
	CurrencyID string    `bson:"_id"`
	High       []string  `bson:"high"`
	Medium     []string  `bson:"medium"`
	Low        []string  `bson:"low"`
	ObservedAt time.Time `bson:"observedAt"`
	UpdatedAt  time.Time `bson:"updatedAt"`
}

func (s *Store) fees() *mongo.Collection { return s.db.Collection(colFees) }

// PutFee stores e as its currency's estimate unless the stored one was observed at the same
// time or later (an estimate delivered late never replaces a newer one); it reports whether
// e was stored. One conditional upsert: a newer stored estimate makes the filter miss and
// the upsert collide on the currency id.
func (s *Store) PutFee(ctx context.Context, e custody.FeeEstimate) (bool, error) {
	observed := ms(e.ObservedAt)
	filter := bson.D{{Key: "_id", Value: e.CurrencyID}, {Key: "observedAt", Value: bson.D{{Key: "$lt", Value: observed}}}}
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "high", Value: e.High}, {Key: "medium", Value: e.Medium},
		{Key: "low", Value: e.Low}, {Key: "observedAt", Value: observed}, {Key: "updatedAt", Value: ms(s.now())}}}}
	_, err := s.fees().UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put fee estimate %s: %w", e.CurrencyID, err)
	}
	return true, nil
}

// Fees returns every stored estimate, by currency id, in one query.
func (s *Store) Fees(ctx context.Context) ([]custody.FeeEstimate, error) {
	cur, err := s.fees().Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list fee estimates: %w", err)
	}
	var docs []feeDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("list fee estimates: %w", err)
	}
	out := make([]custody.FeeEstimate, 0, len(docs))
	for _, d := range docs {
		out = append(out, custody.FeeEstimate{CurrencyID: d.CurrencyID, High: d.High, Medium: d.Medium, Low: d.Low, ObservedAt: d.ObservedAt.UTC()})
	}
	return out, nil
}
