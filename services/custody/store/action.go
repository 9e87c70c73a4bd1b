package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/custody"
)

// AddTrustline adds the zero balance entry of a Stellar asset to an ACTIVE wallet still at
// version, and counts the trustline as a subentry; one conditional update. The caller checked
// at that version that the wallet does not hold the asset and covers the reserve; the
// version guard keeps that true (no negative filter on the array: FerretDB 1.24 matches
// `$ne`/`$nin`/`$not` on an array path when any element differs). A wallet that changed
// meanwhile answers apperr.ErrConflict.
func (s *Store) AddTrustline(ctx context.Context, companyID, id string, version int64, b custody.AssetBalance) (custody.Wallet, error) {
	if err := b.Check(); err != nil {
		return custody.Wallet{}, fmt.Errorf("wallet %s: %w", id, err)
	}
	filter := bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: companyID},
		{Key: "status", Value: custody.StatusActive}, {Key: "version", Value: version}}
	update := bson.D{
		{Key: "$push", Value: bson.D{{Key: "assetBalances", Value: assetOf(b)}}},
		{Key: "$set", Value: bson.D{{Key: "updatedAt", Value: ms(s.now())}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}, {Key: "subentries", Value: 1}}},
	}
	return s.update(ctx, id, version, filter, update)
}

// Decide records decision d on the proposed wallet w as read: w must still be PENDING_AUTH
// at w.Version with its intent unused. The wallet moves to the decision's outcome (ACTIVE and
// valid, or REJECTED_BY_AUTHORISER) in one conditional update, so of racing or replayed
// decisions exactly one is recorded; the others answer apperr.ErrConflict.
func (s *Store) Decide(ctx context.Context, w custody.Wallet, d custody.Decision) (custody.Wallet, error) {
	if w.Intent == nil {
		return custody.Wallet{}, fmt.Errorf("decide wallet %s: no intent: %w", w.ID, apperr.ErrConflict)
	}
	status, valid := custody.Outcome(d.Type)
	filter := bson.D{{Key: "_id", Value: w.ID}, {Key: "companyId", Value: w.CompanyID},
		{Key: "status", Value: custody.StatusPendingAuth}, {Key: "version", Value: w.Version},
		{Key: "intent.id", Value: w.Intent.ID}, {Key: "intent.decision", Value: bson.D{{Key: "$exists", Value: false}}}}
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "status", Value: status}, {Key: "valid", Value: valid},
			{Key: "intent.decision", Value: toDecisionDoc(d)}, {Key: "updatedAt", Value: ms(d.At)}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	return s.update(ctx, w.ID, w.Version, filter, update)
}
