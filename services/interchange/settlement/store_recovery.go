package settlement

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// stalledWithdrawals returns up to limit decided withdrawals whose money step is not recorded
// done (completedAt absent), decided before cutoff, oldest decision first.
func (st store) stalledWithdrawals(ctx context.Context, cutoff time.Time, limit int64) ([]Withdrawal, error) {
	filter := bson.D{
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{WithdrawalAccepted, WithdrawalDeclined}}}},
		{Key: "completedAt", Value: nil},
		{Key: "decidedAt", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}},
	}
	opts := options.Find().SetSort(bson.D{{Key: "decidedAt", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(limit)
	cur, err := st.db.Collection(colWithdrawals).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("find stalled withdrawals: %w", err)
	}
	var docs []withdrawalDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read stalled withdrawals: %w", err)
	}
	return convert(docs, withdrawalDoc.withdrawal), nil
}

// stalledSettlements returns up to limit settlements with a pending transition whose lease
// ran out before cutoff, oldest lease first.
func (st store) stalledSettlements(ctx context.Context, cutoff time.Time, limit int64) ([]Settlement, error) {
	filter := bson.D{{Key: "pending.leaseUntil", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}}}
	opts := options.Find().SetSort(bson.D{{Key: "pending.leaseUntil", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(limit)
	cur, err := st.db.Collection(colSettlements).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("find stalled settlements: %w", err)
	}
	var docs []settlementDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read stalled settlements: %w", err)
	}
	return convert(docs, settlementDoc.settlement), nil
}
