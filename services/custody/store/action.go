package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/outbox"
)

// AddTrustline adds the zero balance entry of a Stellar asset to an ACTIVE wallet still at
// version, and counts the trustline as a subentry, with the trustline's trustline.activated
// event; one conditional update. The caller checked at that version that the wallet does not
// hold the asset and covers the reserve; the version guard keeps that true (no negative
// filter on the array: FerretDB 1.24 matches `$ne`/`$nin`/`$not` on an array path when any
// element differs). A wallet that changed meanwhile (or holds the asset after all) answers
// apperr.ErrConflict and records no event.
func (s *Store) AddTrustline(ctx context.Context, companyID, id string, version int64, b custody.AssetBalance) (custody.Wallet, error) {
	if err := b.Check(); err != nil {
		return custody.Wallet{}, fmt.Errorf("wallet %s: %w", id, err)
	}
	filter := bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: companyID},
		{Key: "status", Value: custody.StatusActive}, {Key: "version", Value: version}}
	return s.staged(ctx, id, version, filter, func(before sequenced) (bson.D, error) {
		asset := assetOf(b)
		for _, a := range before.Doc.AssetBalances {
			if a.CurrencyID == asset.CurrencyID {
				return nil, fmt.Errorf("the trustline for %s is active already: %w", asset.CurrencyID, apperr.ErrConflict)
			}
		}
		now := ms(s.now())
		// A new trustline: its events are numbered from 1, in its own asset entry.
		set, push, staged, err := outbox.Stage(0, now, trustlineEvent(ctx, EventTrustlineActivated, before.Doc, asset, custody.StatusActive))
		if err != nil {
			return nil, err
		}
		asset.EventSeq = staged[len(staged)-1].Entity.Version
		return bson.D{
			{Key: "$push", Value: append(push, bson.E{Key: "assetBalances", Value: asset})},
			{Key: "$set", Value: append(bson.D{{Key: "updatedAt", Value: now}}, withoutSeq(set)...)},
			{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}, {Key: "subentries", Value: 1}}},
		}, nil
	})
}

// Decide records decision d on the proposed wallet w as read: w must still be PENDING_AUTH
// at w.Version with its intent unused. The wallet moves to the decision's outcome (ACTIVE and
// valid, or REJECTED_BY_AUTHORISER) in one conditional update, with its
// legacy_wallet.approved or legacy_wallet.rejected event, so of racing or replayed decisions
// exactly one is recorded; the others answer apperr.ErrConflict and record no event.
func (s *Store) Decide(ctx context.Context, w custody.Wallet, d custody.Decision) (custody.Wallet, error) {
	if w.Intent == nil {
		return custody.Wallet{}, fmt.Errorf("decide wallet %s: no intent: %w", w.ID, apperr.ErrConflict)
	}
	status, valid := custody.Outcome(d.Type)
	typ := EventLegacyWalletRejected
	if d.Type == custody.ActionApprove {
		typ = EventLegacyWalletApproved
	}
	filter := bson.D{{Key: "_id", Value: w.ID}, {Key: "companyId", Value: w.CompanyID},
		{Key: "status", Value: custody.StatusPendingAuth}, {Key: "version", Value: w.Version},
		{Key: "intent.id", Value: w.Intent.ID}, {Key: "intent.decision", Value: bson.D{{Key: "$exists", Value: false}}}}
	return s.staged(ctx, w.ID, w.Version, filter, func(before sequenced) (bson.D, error) {
		at := ms(d.At)
		after := before.Doc
		after.Status, after.Valid, after.UpdatedAt = status, valid, at
		set, push, _, err := outbox.Stage(before.EventSeq, at, walletEvent(ctx, typ, after))
		if err != nil {
			return nil, err
		}
		return bson.D{
			{Key: "$set", Value: append(bson.D{{Key: "status", Value: status}, {Key: "valid", Value: valid},
				{Key: "intent.decision", Value: toDecisionDoc(d)}, {Key: "updatedAt", Value: at}}, set...)},
			{Key: "$push", Value: push},
			{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
		}, nil
	})
}
