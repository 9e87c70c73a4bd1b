// Package store is interchange's MongoDB repository of settlements and withdrawals. Every
// change is one conditional update of one document guarded by its status and version (or
// its runner's token), so racing callers and replicas never both win.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/internal/page"
)

const (
	colSettlements = "settlements"
	colWithdrawals = "withdrawals"
)

// Store is the repository; it implements settlement.Store and withdrawal.Store.
type Store struct {
	db  *mongo.Database
	now func() time.Time
}

// New returns the store of db; now stamps updatedAt and the like (time.Now when nil).
func New(db *mongo.Database, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// Indexes are the indexes the queries rely on. A search is sorted by id, createdAt or
// updatedAt (then _id) within its scope, an $or of the company's own documents, those at the
// venues it operates and, for settlements, those whose legs name it: every branch of the
// scope has an index for every sort.
func Indexes() []mongodb.Index {
	return []mongodb.Index{
		// _id is <companyId>:<settlementRequestId>: the idempotency key of endpoint 3.
		{Collection: colSettlements, Name: "tracking", Keys: mongodb.Keys("trackingId"), Unique: true},
		{Collection: colSettlements, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		{Collection: colSettlements, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		{Collection: colSettlements, Name: "company_updated_id", Keys: mongodb.Keys("companyId", "updatedAt", "_id")},
		{Collection: colSettlements, Name: "parties_id", Keys: mongodb.Keys("parties", "_id")},
		{Collection: colSettlements, Name: "parties_created_id", Keys: mongodb.Keys("parties", "createdAt", "_id")},
		{Collection: colSettlements, Name: "parties_updated_id", Keys: mongodb.Keys("parties", "updatedAt", "_id")},
		{Collection: colSettlements, Name: "venue_id", Keys: mongodb.Keys("venueId", "_id")},
		{Collection: colSettlements, Name: "venue_created_id", Keys: mongodb.Keys("venueId", "createdAt", "_id")},
		{Collection: colSettlements, Name: "venue_updated_id", Keys: mongodb.Keys("venueId", "updatedAt", "_id")},
		// The recovery sweeper's search for transitions whose lease ran out.
		{Collection: colSettlements, Name: "pending_lease_id", Keys: mongodb.Keys("pending.leaseUntil", "_id")},
		{Collection: colWithdrawals, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		{Collection: colWithdrawals, Name: "company_created_id", Keys: mongodb.Keys("companyId", "createdAt", "_id")},
		{Collection: colWithdrawals, Name: "company_updated_id", Keys: mongodb.Keys("companyId", "updatedAt", "_id")},
		{Collection: colWithdrawals, Name: "venue_id", Keys: mongodb.Keys("venueId", "_id")},
		{Collection: colWithdrawals, Name: "venue_created_id", Keys: mongodb.Keys("venueId", "createdAt", "_id")},
		{Collection: colWithdrawals, Name: "venue_updated_id", Keys: mongodb.Keys("venueId", "updatedAt", "_id")},
		// The recovery sweeper's search for decisions whose money step is not done.
		{Collection: colWithdrawals, Name: "recovery_id", Keys: mongodb.Keys("status", "completedAt", "decidedAt", "_id")},
		// The sweeper's search for undecided withdrawals past their expiry.
		{Collection: colWithdrawals, Name: "status_created_id", Keys: mongodb.Keys("status", "createdAt", "_id")},
		// The relays' search for documents with events to relay (Outboxes).
		outbox.Index(colSettlements),
		outbox.Index(colWithdrawals),
	}
}

// EnsureIndexes creates the Indexes.
func (st *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, st.db, Indexes())
}

func settlementKey(companyID, requestID string) string { return companyID + ":" + requestID }

func (st *Store) stamp() time.Time { return st.now().UTC().Truncate(time.Millisecond) }

// InsertSettlement stores s unless its company already holds its request id, with the
// events of its status (settlementDrafts) staged in the document; it returns the settlement
// stored under that key and whether this call stored it (a settlement it did not store
// staged nothing).
func (st *Store) InsertSettlement(ctx context.Context, s settlement.Settlement) (settlement.Settlement, bool, error) {
	set, _, staged, err := outbox.StageEach(0, st.stamp(), settlementDrafts(ctx, s, "")...)
	if err != nil {
		return settlement.Settlement{}, false, fmt.Errorf("insert settlement %s: %w", s.RequestID, err)
	}
	doc, err := outbox.Attach(toSettlementDoc(s), set, staged)
	if err != nil {
		return settlement.Settlement{}, false, fmt.Errorf("insert settlement %s: %w", s.RequestID, err)
	}
	_, err = st.db.Collection(colSettlements).InsertOne(ctx, doc)
	if err == nil {
		s.EventSeq = 1
		return s, true, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return settlement.Settlement{}, false, fmt.Errorf("insert settlement %s: %w", s.RequestID, err)
	}
	stored, err := st.SettlementByRequest(ctx, s.CompanyID, s.RequestID)
	return stored, false, err
}

// SettlementByRequest returns the company's settlement with the venue's request id, or
// apperr.ErrNotFound.
func (st *Store) SettlementByRequest(ctx context.Context, companyID, requestID string) (settlement.Settlement, error) {
	return st.findSettlement(ctx, bson.D{{Key: "_id", Value: settlementKey(companyID, requestID)}})
}

// SettlementByTracking returns the settlement with the tracking id, or apperr.ErrNotFound.
func (st *Store) SettlementByTracking(ctx context.Context, trackingID string) (settlement.Settlement, error) {
	return st.findSettlement(ctx, bson.D{{Key: "trackingId", Value: trackingID}})
}

func (st *Store) findSettlement(ctx context.Context, filter bson.D) (settlement.Settlement, error) {
	var doc settlementDoc
	err := st.db.Collection(colSettlements).FindOne(ctx, filter, options.FindOne().SetProjection(withoutOutbox)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return settlement.Settlement{}, fmt.Errorf("settlement: %w", apperr.ErrNotFound)
	}
	if err != nil {
		return settlement.Settlement{}, fmt.Errorf("find settlement: %w", err)
	}
	return doc.settlement(), nil
}

// Claim records p as s's pending transition, if s is unchanged since read.
func (st *Store) Claim(ctx context.Context, s settlement.Settlement, p settlement.Pending) (settlement.Settlement, error) {
	return st.update(ctx, s, bson.D{{Key: "pending", Value: pendingDoc(p)}}, nil)
}

// Renew sets the lease of s's pending transition, if s's runner (its token) still holds it;
// it reports whether it did.
func (st *Store) Renew(ctx context.Context, s settlement.Settlement, until time.Time) (bool, error) {
	filter := bson.D{{Key: "_id", Value: settlementKey(s.CompanyID, s.RequestID)}, {Key: "pending.token", Value: s.Pending.Token}}
	res, err := st.db.Collection(colSettlements).UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "pending.leaseUntil", Value: until}}}})
	if err != nil {
		return false, fmt.Errorf("renew settlement %s: %w", s.TrackingID, err)
	}
	return res.MatchedCount == 1, nil
}

// Finish ends s's pending transition as out says, recording the step in the history and,
// when the status changes, its events (settlementDrafts), if s's runner (its token) still
// holds it; otherwise apperr.ErrConflict, and nothing is staged. The token guards the event
// sequence too: s is the settlement as its claim left it, and only the holder of the claim
// changes the status.
func (st *Store) Finish(ctx context.Context, s settlement.Settlement, out settlement.Outcome) (settlement.Settlement, error) {
	now := st.stamp()
	set := bson.D{{Key: "status", Value: out.Status}, {Key: "pending", Value: nil}, {Key: "payInAttempt", Value: out.PayInAttempt},
		{Key: "payInHold", Value: out.PayInHold}, {Key: "reverseAttempt", Value: out.ReverseAttempt}, {Key: "updatedAt", Value: now}}
	after := s
	after.Status, after.Pending, after.UpdatedAt = out.Status, nil, now
	if out.Status == settlement.StatusRejected || out.Status == settlement.StatusFailed {
		set = append(set, bson.E{Key: "reason", Value: out.Reason})
		after.Reason = out.Reason
	}
	push := bson.D{{Key: "history", Value: stepDoc{From: s.Status, To: out.Status, Reason: out.Reason, At: now}}}
	if out.Status != s.Status {
		// A transition that leaves the status as it was (a PAY_IN still short of funds, a
		// reversal refused) is no change a receiver could see but updatedAt: no event.
		seqSet, outboxPush, _, err := outbox.StageEach(s.EventSeq, now, settlementDrafts(ctx, after, s.Status)...)
		if err != nil {
			return settlement.Settlement{}, fmt.Errorf("finish settlement %s: %w", s.TrackingID, err)
		}
		set, push = append(set, seqSet...), append(push, outboxPush...)
	}
	filter := bson.D{{Key: "_id", Value: settlementKey(s.CompanyID, s.RequestID)}, {Key: "pending.token", Value: s.Pending.Token}}
	change := bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}}, {Key: "$push", Value: push}}
	var doc settlementDoc
	err := st.db.Collection(colSettlements).FindOneAndUpdate(ctx, filter, change,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return settlement.Settlement{}, fmt.Errorf("finish settlement %s: %w", s.TrackingID, apperr.ErrConflict)
	}
	if err != nil {
		return settlement.Settlement{}, fmt.Errorf("finish settlement %s: %w", s.TrackingID, err)
	}
	return doc.settlement(), nil
}

// update sets set (and pushes push) on s if its status and version are still those read,
// bumping the version and updatedAt; a changed settlement is apperr.ErrConflict.
func (st *Store) update(ctx context.Context, s settlement.Settlement, set, push bson.D) (settlement.Settlement, error) {
	filter := bson.D{{Key: "_id", Value: settlementKey(s.CompanyID, s.RequestID)}, {Key: "status", Value: s.Status}, {Key: "version", Value: s.Version}}
	change := bson.D{
		{Key: "$set", Value: append(set, bson.E{Key: "updatedAt", Value: st.stamp()})},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	if len(push) > 0 {
		change = append(change, bson.E{Key: "$push", Value: push})
	}
	var doc settlementDoc
	err := st.db.Collection(colSettlements).FindOneAndUpdate(ctx, filter, change,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return settlement.Settlement{}, fmt.Errorf("update settlement %s version %d: %w", s.TrackingID, s.Version, apperr.ErrConflict)
	}
	if err != nil {
		return settlement.Settlement{}, fmt.Errorf("update settlement %s: %w", s.TrackingID, err)
	}
	return doc.settlement(), nil
}

var sortFields = map[string]string{"id": "_id", "createdAt": "createdAt", "updatedAt": "updatedAt"}

// SearchSettlements returns one page of the settlements f's viewer may see matching f (those
// it instructed, those at its venues, those whose legs name its wallets) and the number of
// all matches: one find and one count.
func (st *Store) SearchSettlements(ctx context.Context, f settlement.Filter) ([]settlement.Settlement, int64, error) {
	and := bson.A{visibleTo(f.Viewer.CompanyID, f.Viewer.Venues, bson.D{{Key: "parties", Value: f.Viewer.CompanyID}})}
	and = mongodb.AppendIn(and, "settlementRequestId", f.RequestIDs)
	and = mongodb.AppendIn(and, "trackingId", f.TrackingIDs)
	and = mongodb.AppendIn(and, "status", f.Statuses)
	and = mongodb.AppendIn(and, "venueId", f.VenueIDs)
	docs, total, err := searchPage[settlementDoc](ctx, st.db.Collection(colSettlements), mongodb.And(and), f.Page)
	if err != nil {
		return nil, 0, fmt.Errorf("search settlements: %w", err)
	}
	return convert(docs, settlementDoc.settlement), total, nil
}

// SearchWithdrawals returns one page of the withdrawals f's viewer may see matching f (its
// own, those at its venues) and the number of all matches: one find and one count.
func (st *Store) SearchWithdrawals(ctx context.Context, f withdrawal.Filter) ([]withdrawal.Withdrawal, int64, error) {
	and := bson.A{visibleTo(f.CompanyID, f.Venues)}
	and = mongodb.AppendIn(and, "_id", f.TransferIDs)
	and = mongodb.AppendIn(and, "walletId", f.WalletIDs)
	and = mongodb.AppendIn(and, "status", f.Statuses)
	and = mongodb.AppendIn(and, "venueId", f.VenueIDs)
	docs, total, err := searchPage[withdrawalDoc](ctx, st.db.Collection(colWithdrawals), mongodb.And(and), f.Page)
	if err != nil {
		return nil, 0, fmt.Errorf("search withdrawals: %w", err)
	}
	return convert(docs, withdrawalDoc.withdrawal), total, nil
}

// visibleTo is the scope of a search: the documents of company, those at the venues it
// operates, and those the other conditions name.
func visibleTo(company string, venues []string, also ...bson.D) bson.D {
	scope := bson.A{bson.D{{Key: "companyId", Value: company}}}
	for _, c := range also {
		scope = append(scope, c)
	}
	if len(venues) > 0 {
		scope = append(scope, bson.D{{Key: "venueId", Value: bson.D{{Key: "$in", Value: venues}}}})
	}
	return bson.D{{Key: "$or", Value: scope}}
}

// searchPage finds one page of col's documents matching filter, sorted by the page's key
// (then _id), and counts all matches.
func searchPage[D any](ctx context.Context, col *mongo.Collection, filter bson.D, pg page.Page) ([]D, int64, error) {
	return mongodb.Search[D](ctx, col, mongodb.Query{Filter: filter, Sort: mongodb.Sorted(sortFields[pg.SortBy], pg.Desc),
		Projection: withoutOutbox, Skip: pg.Offset, Limit: pg.Limit})
}

var (
	_ settlement.Store = (*Store)(nil)
	_ withdrawal.Store = (*Store)(nil)
)
