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
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/outbox"
)

type withdrawalDoc struct {
	TransferID         string `bson:"_id"`
	CompanyID          string `bson:"companyId"`
	WalletID           string `bson:"walletId"`
	VenueID            string `bson:"venueId"`
	Currency           string `bson:"currency"`
	Amount             string `bson:"amount"`
	DestinationAddress string `bson:"destinationAddress"`
	// DestinationWalletID and RequestID are absent on a withdrawal to an external address.
	DestinationWalletID string    `bson:"destinationWalletId,omitempty"`
	RequestID           string    `bson:"requestId,omitempty"`
	Status              string    `bson:"status"`
	Reason              string    `bson:"reason"`
	Version             int64     `bson:"version"`
	CreatedAt           time.Time `bson:"createdAt"`
	UpdatedAt           time.Time `bson:"updatedAt"`
	DecidedAt           time.Time `bson:"decidedAt"`
	HoldAttempt         int       `bson:"holdAttempt"`
	// CompletedAt is absent until the money step of the decision is done.
	CompletedAt time.Time `bson:"completedAt,omitempty"`
	// EventSeq is the event sequence (outbox.FieldSeq; absent before the first event).
	EventSeq int64 `bson:"eventSeq,omitempty"`
	// NetworkFeeLimit and NetworkFee are absent on withdrawals that hold no network fee (and
	// NetworkFee until the ACCEPT).
	NetworkFeeLimit string `bson:"networkFeeLimit,omitempty"`
	NetworkFee      string `bson:"networkFee,omitempty"`
}

func (d withdrawalDoc) withdrawal() withdrawal.Withdrawal {
	w := withdrawal.Withdrawal(d)
	w.CreatedAt, w.UpdatedAt, w.DecidedAt, w.CompletedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC(), d.DecidedAt.UTC(), d.CompletedAt.UTC()
	return w
}

// InsertWithdrawal stores w unless its transfer id is taken, with the event of its status
// (withdrawalDrafts) staged in the document; it returns the withdrawal stored under the id
// (one it did not store staged nothing).
func (st *Store) InsertWithdrawal(ctx context.Context, w withdrawal.Withdrawal) (withdrawal.Withdrawal, error) {
	col := st.db.Collection(colWithdrawals)
	inserted, err := insertedWithdrawal(ctx, w, st.stamp())
	if err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("insert withdrawal %s: %w", w.TransferID, err)
	}
	_, err = col.InsertOne(ctx, inserted)
	if err == nil {
		w.EventSeq = 1
		return w, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return withdrawal.Withdrawal{}, fmt.Errorf("insert withdrawal %s: %w", w.TransferID, err)
	}
	var doc withdrawalDoc
	if err := col.FindOne(ctx, bson.D{{Key: "_id", Value: w.TransferID}}).Decode(&doc); err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("read withdrawal %s: %w", w.TransferID, err)
	}
	return doc.withdrawal(), nil
}

// Withdrawal returns the company's withdrawal, or apperr.ErrNotFound (also when it belongs
// to another company).
func (st *Store) Withdrawal(ctx context.Context, companyID, transferID string) (withdrawal.Withdrawal, error) {
	var doc withdrawalDoc
	err := st.db.Collection(colWithdrawals).FindOne(ctx, bson.D{{Key: "_id", Value: transferID}, {Key: "companyId", Value: companyID}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return withdrawal.Withdrawal{}, fmt.Errorf("withdrawal %s: %w", transferID, apperr.ErrNotFound)
	}
	if err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("find withdrawal %s: %w", transferID, err)
	}
	return doc.withdrawal(), nil
}

// SetVenue records the venue of a withdrawal stored without one (once: a venue recorded
// stays) and returns the withdrawal as stored.
func (st *Store) SetVenue(ctx context.Context, w withdrawal.Withdrawal, venueID string) (withdrawal.Withdrawal, error) {
	col := st.db.Collection(colWithdrawals)
	filter := bson.D{{Key: "_id", Value: w.TransferID}, {Key: "venueId", Value: bson.D{{Key: "$in", Value: bson.A{nil, ""}}}}}
	if _, err := col.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "venueId", Value: venueID}}}}); err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("set the venue of withdrawal %s: %w", w.TransferID, err)
	}
	return st.Withdrawal(ctx, w.CompanyID, w.TransferID)
}

// WithdrawalAtVenues returns the withdrawal out of a wallet held at one of venues, or
// apperr.ErrNotFound (also one at another venue).
func (st *Store) WithdrawalAtVenues(ctx context.Context, venues []string, transferID string) (withdrawal.Withdrawal, error) {
	var doc withdrawalDoc
	filter := bson.D{{Key: "_id", Value: transferID}, {Key: "venueId", Value: bson.D{{Key: "$in", Value: append([]string{}, venues...)}}}}
	err := st.db.Collection(colWithdrawals).FindOne(ctx, filter).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return withdrawal.Withdrawal{}, fmt.Errorf("withdrawal %s: %w", transferID, apperr.ErrNotFound)
	}
	if err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("find withdrawal %s: %w", transferID, err)
	}
	return doc.withdrawal(), nil
}

// insertedWithdrawal is w's document as inserted, with the event of its status staged.
func insertedWithdrawal(ctx context.Context, w withdrawal.Withdrawal, now time.Time) (bson.D, error) {
	set, _, staged, err := outbox.StageEach(0, now, withdrawalDrafts(ctx, w, "")...)
	if err != nil {
		return nil, err
	}
	return outbox.Attach(withdrawalDoc(w), set, staged)
}

// Decide records the decision on a pending withdrawal, and its event (withdrawalDrafts), if
// it is unchanged since read; a changed one is apperr.ErrConflict, and nothing is staged.
func (st *Store) Decide(ctx context.Context, w withdrawal.Withdrawal, status, reason, networkFee string) (withdrawal.Withdrawal, error) {
	now := st.stamp()
	after := w
	after.Status, after.Reason, after.DecidedAt, after.UpdatedAt, after.NetworkFee = status, reason, now, now, networkFee
	seqSet, push, _, err := outbox.StageEach(w.EventSeq, now, withdrawalDrafts(ctx, after, withdrawal.StatusPending)...)
	if err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("decide withdrawal %s: %w", w.TransferID, err)
	}
	filter := bson.D{{Key: "_id", Value: w.TransferID}, {Key: "status", Value: withdrawal.StatusPending}, {Key: "version", Value: w.Version}}
	set := append(bson.D{{Key: "status", Value: status}, {Key: "reason", Value: reason}, {Key: "decidedAt", Value: now}, {Key: "updatedAt", Value: now}}, seqSet...)
	if networkFee != "" {
		set = append(set, bson.E{Key: "networkFee", Value: networkFee})
	}
	update := bson.D{
		{Key: "$set", Value: set},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
		{Key: "$push", Value: push},
	}
	var doc withdrawalDoc
	err = st.db.Collection(colWithdrawals).FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return withdrawal.Withdrawal{}, fmt.Errorf("decide withdrawal %s: %w", w.TransferID, apperr.ErrConflict)
	}
	if err != nil {
		return withdrawal.Withdrawal{}, fmt.Errorf("decide withdrawal %s: %w", w.TransferID, err)
	}
	return doc.withdrawal(), nil
}

// NextHoldAttempt moves a pending withdrawal from hold attempt n to n+1 (once: racing
// refused ACCEPTs of the same attempt move it once); a decided withdrawal keeps its attempt.
func (st *Store) NextHoldAttempt(ctx context.Context, w withdrawal.Withdrawal) error {
	// Guarded by the version read (withdrawals stored before attempts were kept have no
	// holdAttempt field to match): of racing refusals of one attempt, one moves it on.
	filter := bson.D{{Key: "_id", Value: w.TransferID}, {Key: "status", Value: withdrawal.StatusPending}, {Key: "version", Value: w.Version}}
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "holdAttempt", Value: w.Attempt() + 1}, {Key: "updatedAt", Value: st.stamp()}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}}}
	if _, err := st.db.Collection(colWithdrawals).UpdateOne(ctx, filter, update); err != nil {
		return fmt.Errorf("next hold attempt of %s: %w", w.TransferID, err)
	}
	return nil
}

// CompleteWithdrawal records that the money step of decided withdrawal w is done; a
// withdrawal recorded done already keeps its first time.
func (st *Store) CompleteWithdrawal(ctx context.Context, w withdrawal.Withdrawal) error {
	filter := bson.D{{Key: "_id", Value: w.TransferID}, {Key: "status", Value: w.Status}, {Key: "completedAt", Value: nil}}
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "completedAt", Value: st.stamp()}}}}
	if _, err := st.db.Collection(colWithdrawals).UpdateOne(ctx, filter, update); err != nil {
		return fmt.Errorf("complete withdrawal %s: %w", w.TransferID, err)
	}
	return nil
}

// PutWithdrawal creates a withdrawal unless its transfer id exists (demo data; the
// settlement engine goes through CreateWithdrawal): one already there, decided or not, is
// kept, since its money moved (or not) once. A decided one is stored with its money step
// done (at the time it is put, unless CompletedAt is set): no hold was ever made for it, so
// there is nothing for the recovery sweeper to settle or release. The event of the status it
// is put in is staged with it, as InsertWithdrawal does.
func PutWithdrawal(ctx context.Context, db *mongo.Database, w withdrawal.Withdrawal) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	if withdrawal.DecisionOf(w.Status) != "" && w.CompletedAt.IsZero() {
		w.CompletedAt = now
	}
	doc, err := insertedWithdrawal(ctx, w, now)
	if err != nil {
		return fmt.Errorf("put withdrawal %s: %w", w.TransferID, err)
	}
	_, err = db.Collection(colWithdrawals).InsertOne(ctx, doc)
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("put withdrawal %s: %w", w.TransferID, err)
	}
	return nil
}
