package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
)

// StalledWithdrawals returns up to limit decided withdrawals whose money step is not recorded
// done (completedAt absent), decided before cutoff, oldest decision first.
func (st *Store) StalledWithdrawals(ctx context.Context, cutoff time.Time, limit int64) ([]withdrawal.Withdrawal, error) {
	filter := bson.D{
		{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{withdrawal.StatusAccepted, withdrawal.StatusDeclined}}}},
		{Key: "completedAt", Value: nil},
		{Key: "decidedAt", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}},
	}
	return st.findWithdrawals(ctx, "stalled", filter, "decidedAt", limit)
}

// UndecidedWithdrawals returns up to limit withdrawals still pending that were created
// before cutoff, oldest first.
func (st *Store) UndecidedWithdrawals(ctx context.Context, cutoff time.Time, limit int64) ([]withdrawal.Withdrawal, error) {
	filter := bson.D{{Key: "status", Value: withdrawal.StatusPending}, {Key: "createdAt", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}}}
	return st.findWithdrawals(ctx, "undecided", filter, "createdAt", limit)
}

// TransitWithdrawals returns up to limit ACCEPTED withdrawals to custody wallets whose money
// step is not done, or was done at or after since (the transit reconciliation's in flight).
func (st *Store) TransitWithdrawals(ctx context.Context, since time.Time, limit int64) ([]withdrawal.Withdrawal, error) {
	filter := bson.D{
		{Key: "status", Value: withdrawal.StatusAccepted},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "completedAt", Value: nil}},
			bson.D{{Key: "completedAt", Value: bson.D{{Key: "$gte", Value: since.UTC()}}}},
		}},
		{Key: "destinationWalletId", Value: bson.D{{Key: "$gt", Value: ""}}},
	}
	return st.findWithdrawals(ctx, "in transit", filter, "decidedAt", limit)
}

// findWithdrawals returns up to limit withdrawals matching filter, by byTime then _id.
func (st *Store) findWithdrawals(ctx context.Context, what string, filter bson.D, byTime string, limit int64) ([]withdrawal.Withdrawal, error) {
	opts := options.Find().SetSort(bson.D{{Key: byTime, Value: 1}, {Key: "_id", Value: 1}}).SetLimit(limit)
	cur, err := st.db.Collection(colWithdrawals).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("find %s withdrawals: %w", what, err)
	}
	var docs []withdrawalDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read %s withdrawals: %w", what, err)
	}
	return convert(docs, withdrawalDoc.withdrawal), nil
}

// StalledSettlements returns up to limit settlements with a pending transition whose lease
// ran out before cutoff, oldest lease first.
func (st *Store) StalledSettlements(ctx context.Context, cutoff time.Time, limit int64) ([]settlement.Settlement, error) {
	filter := bson.D{{Key: "pending.leaseUntil", Value: bson.D{{Key: "$lt", Value: cutoff.UTC()}}}}
	opts := options.Find().SetSort(bson.D{{Key: "pending.leaseUntil", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(limit).SetProjection(withoutOutbox)
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
