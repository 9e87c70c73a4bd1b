package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/trading"
)

// movementDoc is one applied movement, kept in its wallet's document: the wallet's history,
// and what makes a movement apply at most once (movementIds holds the ids alone, for the
// guard of the update).
type movementDoc struct {
	ID         string    `bson:"id"`
	Currency   string    `bson:"currency"`
	Available  string    `bson:"available"`
	Ledger     string    `bson:"ledger"`
	PendingOut string    `bson:"pendingOut"`
	PendingIn  string    `bson:"pendingIn"`
	Reason     string    `bson:"reason"`
	At         time.Time `bson:"at"`
}

// withoutMovements leaves the movement history out of wallet reads.
var withoutMovements = bson.D{{Key: "movements", Value: 0}, {Key: "movementIds", Value: 0}}

// maxMovementAttempts bounds the optimistic retries of one movement under contention.
const maxMovementAttempts = 100

// ApplyMovement applies m to its wallet at most once, in one conditional update of the
// wallet document guarded by its version and by m.ID not being applied yet; a concurrent
// change makes it read again and retry. A movement already applied changes nothing and
// answers the current balance (also when the balance it would need is gone: the check comes
// after the read, so a repeat is never mistaken for an overdraft). A venue settlement wallet
// is created on its first movement; any other unknown wallet (or another company's) is
// ER-102. A currency the wallet neither holds nor is denominated in is ER-111; a negative
// result is refused by trading.Movement.Apply.
func (s *Store) ApplyMovement(ctx context.Context, m trading.Movement) (trading.MovementResult, error) {
	for attempt := range maxMovementAttempts {
		doc, err := s.ledgerWallet(ctx, m)
		if err != nil {
			return trading.MovementResult{}, err
		}
		balances, next, refusal := move(doc, m)
		if refusal != nil {
			res, _, err := s.appliedBefore(ctx, m, refusal)
			return res, err
		}
		ok, err := s.writeMovement(ctx, doc, m, balances)
		if err != nil || ok {
			return trading.MovementResult{Applied: ok, Balance: next}, err
		}
		if res, applied, err := s.appliedBefore(ctx, m, nil); err != nil || applied {
			return res, err
		}
		time.Sleep(time.Duration(rand.IntN(min(attempt+1, 10))+1) * time.Millisecond)
	}
	return trading.MovementResult{}, fmt.Errorf("movement %s on wallet %s: %w", m.ID, m.WalletID, apperr.ErrConflict)
}

// appliedBefore reports whether m is already applied, answering it with the current
// balance; when it is not, the error is refusal.
func (s *Store) appliedBefore(ctx context.Context, m trading.Movement, refusal error) (trading.MovementResult, bool, error) {
	applied, err := s.applied(ctx, m)
	if err != nil {
		return trading.MovementResult{}, false, err
	}
	if !applied {
		return trading.MovementResult{}, false, refusal
	}
	doc, err := s.ledgerWallet(ctx, m)
	if err != nil {
		return trading.MovementResult{}, true, err
	}
	return trading.MovementResult{Balance: balanceOf(doc, m.Currency)}, true, nil
}

// ledgerWallet reads the wallet of m without its history, creating a venue settlement wallet
// on its first movement.
func (s *Store) ledgerWallet(ctx context.Context, m trading.Movement) (walletDoc, error) {
	col := s.db.Collection(colWallets)
	filter := bson.D{{Key: "_id", Value: m.WalletID}, {Key: "companyId", Value: m.CompanyID}}
	var doc walletDoc
	err := col.FindOne(ctx, filter, options.FindOne().SetProjection(withoutMovements)).Decode(&doc)
	if err == nil {
		return doc, nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return walletDoc{}, fmt.Errorf("find wallet %s: %w", m.WalletID, err)
	}
	venue, ok := trading.VenueWalletFor(m.CompanyID, m.WalletID, m.Currency, s.now())
	if !ok {
		return walletDoc{}, apperr.NotFound("walletId", m.WalletID)
	}
	if _, err := col.InsertOne(ctx, toWalletDoc(venue)); err != nil && !mongo.IsDuplicateKeyError(err) {
		return walletDoc{}, fmt.Errorf("create venue wallet %s: %w", venue.ID, err)
	}
	if err := col.FindOne(ctx, filter, options.FindOne().SetProjection(withoutMovements)).Decode(&doc); err != nil {
		return walletDoc{}, fmt.Errorf("read venue wallet %s: %w", venue.ID, err)
	}
	return doc, nil
}

// applied reports whether the movement's id is recorded in its wallet.
func (s *Store) applied(ctx context.Context, m trading.Movement) (bool, error) {
	n, err := s.db.Collection(colWallets).CountDocuments(ctx, bson.D{{Key: "_id", Value: m.WalletID}, {Key: "movementIds", Value: m.ID}})
	if err != nil {
		return false, fmt.Errorf("check movement %s: %w", m.ID, err)
	}
	return n > 0, nil
}

// move returns the wallet's balances with m applied, and the changed balance.
func move(doc walletDoc, m trading.Movement) ([]balanceDoc, trading.Balance, error) {
	balances := append([]balanceDoc(nil), doc.Balances...)
	i := indexOf(balances, m.Currency)
	if i < 0 {
		if m.Currency != doc.Currency {
			return nil, trading.Balance{}, apperr.Invalid(apperr.CodeCurrency, "currency", "wallet %s holds no %s", doc.ID, m.Currency)
		}
		balances = append(balances, toBalanceDoc(trading.ZeroBalance(m.Currency)))
		i = len(balances) - 1
	}
	next, err := m.Apply(balances[i].balance())
	if err != nil {
		return nil, trading.Balance{}, err
	}
	b := &balances[i]
	b.Available, b.Ledger, b.PendingOut, b.PendingIn = next.Available, next.Ledger, next.PendingOut, next.PendingIn
	return balances, next, nil
}

func indexOf(balances []balanceDoc, currency string) int {
	for i, b := range balances {
		if b.Currency == currency {
			return i
		}
	}
	return -1
}

// writeMovement stores balances and records m, if the wallet is still at doc's version and
// m is not applied yet. It reports whether it wrote.
func (s *Store) writeMovement(ctx context.Context, doc walletDoc, m trading.Movement, balances []balanceDoc) (bool, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	filter := bson.D{{Key: "_id", Value: doc.ID}, {Key: "version", Value: doc.Version}, {Key: "movementIds", Value: bson.D{{Key: "$ne", Value: m.ID}}}}
	record := movementDoc{ID: m.ID, Currency: m.Currency, Available: m.Available.String(), Ledger: m.Ledger.String(),
		PendingOut: m.PendingOut.String(), PendingIn: m.PendingIn.String(), Reason: m.Reason, At: now}
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "balances", Value: balances}, {Key: "updatedAt", Value: now}}},
		{Key: "$push", Value: bson.D{{Key: "movements", Value: record}, {Key: "movementIds", Value: m.ID}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	res, err := s.db.Collection(colWallets).UpdateOne(ctx, filter, update)
	if err != nil {
		return false, fmt.Errorf("apply movement %s to %s: %w", m.ID, doc.ID, err)
	}
	return res.MatchedCount == 1, nil
}

func balanceOf(doc walletDoc, currency string) trading.Balance {
	if i := indexOf(doc.Balances, currency); i >= 0 {
		return doc.Balances[i].balance()
	}
	return trading.ZeroBalance(currency)
}
