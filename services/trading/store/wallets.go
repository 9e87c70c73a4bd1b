package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/trading"
)

type walletDoc struct {
	ID        string `bson:"_id"`
	VenueID   string `bson:"venueId"`
	Name      string `bson:"name"`
	Status    string `bson:"status"`
	CompanyID string `bson:"companyId"`
	Currency  string `bson:"currency"`
	// Accounts are the wallet's journal accounts by currency (the journal's counters, which
	// only the journal writes); every balance shown is derived from them.
	Accounts map[string]journal.AccountFields `bson:"accounts"`
	// CustomProperties is the JSON text as given, so it comes back byte for byte.
	CustomProperties string    `bson:"customProperties"`
	CreatedBy        string    `bson:"createdBy"`
	CreatedAt        time.Time `bson:"createdAt"`
	UpdatedAt        time.Time `bson:"updatedAt"`
	Version          int64     `bson:"version"`
	RequestID        string    `bson:"requestId"`
	DeactivatedBy    string    `bson:"deactivatedBy,omitempty"`
}

// toWalletDoc is a new wallet's document: its accounts start empty (zero), whatever
// w.Balances says; money only arrives through the journal.
func toWalletDoc(w trading.Wallet) walletDoc {
	return walletDoc{ID: w.ID, VenueID: w.VenueID, Name: w.Name, Status: w.Status, CompanyID: w.CompanyID, Currency: w.Currency,
		Accounts: map[string]journal.AccountFields{}, CustomProperties: w.CustomProperties, CreatedBy: w.CreatedBy,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Version: w.Version, RequestID: w.RequestID, DeactivatedBy: w.DeactivatedBy}
}

// wallet maps the document, deriving each currency's balance from its journal counters:
// the wallet's own currency first, then the others in order.
func (d walletDoc) wallet() (trading.Wallet, error) {
	w := trading.Wallet{ID: d.ID, VenueID: d.VenueID, Name: d.Name, Status: d.Status, CompanyID: d.CompanyID, Currency: d.Currency,
		CustomProperties: d.CustomProperties, CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
		Version: d.Version, RequestID: d.RequestID, DeactivatedBy: d.DeactivatedBy}
	counters, err := journal.DecodeAccounts(d.Accounts)
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("wallet %s: %w", d.ID, err)
	}
	currencies := slices.Sorted(maps.Keys(counters))
	if i := slices.Index(currencies, d.Currency); i >= 0 {
		currencies = append(currencies[:i], currencies[i+1:]...)
	}
	for _, cur := range append([]string{d.Currency}, currencies...) {
		c := counters[cur]
		w.Balances = append(w.Balances, trading.BalanceOf(cur, c.Available().String(), c.Ledger().String(),
			c.PendingOut().String(), c.PendingIn().String()))
	}
	return w, nil
}

// InsertWallet inserts w under its reserved id, with its wallet.created event, and returns
// the stored wallet. If the id is taken it returns the wallet already stored (a repeated
// execution), and records no event: the caller checks its RequestID.
func (s *Store) InsertWallet(ctx context.Context, w trading.Wallet) (trading.Wallet, error) {
	col := s.db.Collection(colWallets)
	created, err := s.newWalletDocument(ctx, w)
	if err != nil {
		return trading.Wallet{}, err
	}
	_, err = col.InsertOne(ctx, created)
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return trading.Wallet{}, fmt.Errorf("insert wallet %s: %w", w.ID, err)
	}
	var doc walletDoc
	if err := col.FindOne(ctx, bson.D{{Key: "_id", Value: w.ID}}, options.FindOne().SetProjection(withoutMarkers)).Decode(&doc); err != nil {
		return trading.Wallet{}, fmt.Errorf("read wallet %s: %w", w.ID, err)
	}
	return doc.wallet()
}

// withoutMarkers leaves the journal's markers and the events not yet relayed out of wallet
// reads (bounded, but of no use to a reader).
var withoutMarkers = bson.D{{Key: "ledgerMarkers", Value: 0}, {Key: outbox.FieldOutbox, Value: 0}}

// PutWallet creates a wallet or replaces its description (demo data; requests go through
// InsertWallet and Deactivate). Its accounts are the journal's and stay as they are, and so
// do its event sequence and outbox: seeding records no event.
func (s *Store) PutWallet(ctx context.Context, w trading.Wallet) error {
	doc := toWalletDoc(w)
	set := bson.D{{Key: "venueId", Value: doc.VenueID}, {Key: "name", Value: doc.Name}, {Key: "status", Value: doc.Status},
		{Key: "companyId", Value: doc.CompanyID}, {Key: "currency", Value: doc.Currency}, {Key: "customProperties", Value: doc.CustomProperties},
		{Key: "createdBy", Value: doc.CreatedBy}, {Key: "createdAt", Value: doc.CreatedAt}, {Key: "updatedAt", Value: doc.UpdatedAt},
		{Key: "version", Value: doc.Version}, {Key: "requestId", Value: doc.RequestID}}
	update := bson.D{{Key: "$set", Value: set}, {Key: "$setOnInsert", Value: bson.D{{Key: "accounts", Value: bson.D{}}}}}
	_, err := s.db.Collection(colWallets).UpdateOne(ctx, bson.D{{Key: "_id", Value: w.ID}}, update, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("put wallet %s: %w", w.ID, err)
	}
	return nil
}

// Wallet returns the company's wallet id, or apperr.ErrNotFound (also when it belongs to
// another company).
func (s *Store) Wallet(ctx context.Context, companyID, id string) (trading.Wallet, error) {
	var doc walletDoc
	err := s.db.Collection(colWallets).FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: companyID}},
		options.FindOne().SetProjection(withoutMarkers)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return trading.Wallet{}, fmt.Errorf("wallet %s: %w", id, apperr.ErrNotFound)
	}
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("find wallet %s: %w", id, err)
	}
	return doc.wallet()
}

// Deactivate deactivates w, with its wallet.deactivated event, in one conditional update
// guarded by its status (ACTIVE) and version; requestID is recorded as DeactivatedBy. The
// event is numbered after the event sequence read at that version. A wallet changed since w
// was read gives apperr.ErrConflict, and records no event.
func (s *Store) Deactivate(ctx context.Context, w trading.Wallet, requestID string) (trading.Wallet, error) {
	col := s.db.Collection(colWallets)
	filter := bson.D{{Key: "_id", Value: w.ID}, {Key: "companyId", Value: w.CompanyID},
		{Key: "status", Value: trading.StatusActive}, {Key: "version", Value: w.Version}}
	var before sequenced
	err := col.FindOne(ctx, filter, options.FindOne().SetProjection(withoutMarkers)).Decode(&before)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return trading.Wallet{}, fmt.Errorf("deactivate wallet %s version %d: %w", w.ID, w.Version, apperr.ErrConflict)
	}
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("read wallet %s: %w", w.ID, err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	after := before.Doc
	after.Status, after.UpdatedAt = trading.StatusDeactivated, now
	set, push, _, err := outbox.Stage(before.EventSeq, now, walletEvent(ctx, EventWalletDeactivated, after))
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("deactivate wallet %s: %w", w.ID, err)
	}
	update := bson.D{
		{Key: "$set", Value: append(bson.D{{Key: "status", Value: trading.StatusDeactivated},
			{Key: "updatedAt", Value: now}, {Key: "deactivatedBy", Value: requestID}}, set...)},
		{Key: "$push", Value: push},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	var doc walletDoc
	err = col.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return trading.Wallet{}, fmt.Errorf("deactivate wallet %s version %d: %w", w.ID, w.Version, apperr.ErrConflict)
	}
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("deactivate wallet %s: %w", w.ID, err)
	}
	return doc.wallet()
}

// sequenced is a wallet document with its event sequence (zero before its first event).
type sequenced struct {
	Doc      walletDoc `bson:",inline"`
	EventSeq int64     `bson:"eventSeq"`
}

// walletScope is the wallets a caller may see: its company's, and those held at the venues
// it operates.
func walletScope(companyID string, venues []string) bson.D {
	own := bson.D{{Key: "companyId", Value: companyID}}
	if len(venues) == 0 {
		return own
	}
	return bson.D{{Key: "$or", Value: bson.A{own, bson.D{{Key: "venueId", Value: bson.D{{Key: "$in", Value: venues}}}}}}}
}

// SearchWallets returns one page of the company's wallets matching f and the number of all
// matches: one find and one count.
func (s *Store) SearchWallets(ctx context.Context, f trading.WalletFilter) ([]trading.Wallet, int64, error) {
	and := bson.A{walletScope(f.CompanyID, f.OperatedVenues)}
	and = mongodb.AppendIn(and, "_id", f.IDs)
	and = mongodb.AppendIn(and, "venueId", f.VenueIDs)
	and = mongodb.AppendIn(and, "name", f.Names)
	and = mongodb.AppendIn(and, "status", f.Statuses)
	and = mongodb.AppendIn(and, "companyId", f.CompanyIDs)
	and = mongodb.AppendIn(and, "currency", f.Currencies)
	and = mongodb.AppendIn(and, "createdBy", f.CreatedBy)
	docs, total, err := mongodb.Search[walletDoc](ctx, s.db.Collection(colWallets), mongodb.Query{
		Filter: mongodb.And(and), Sort: mongodb.Sorted(sortFields[f.Page.SortBy], f.Page.Desc), Projection: withoutMarkers,
		Skip: f.Page.Offset, Limit: f.Page.Limit,
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]trading.Wallet, 0, len(docs))
	for _, d := range docs {
		w, err := d.wallet()
		if err != nil {
			return nil, 0, err
		}
		out = append(out, w)
	}
	return out, total, nil
}
