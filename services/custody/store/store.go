// Package store is the custody service's MongoDB repository: the `wallets` (whose documents
// carry their journal accounts) and `fee_estimates` collections, and custody's journal. Every
// change of a wallet is one single-document write conditional on the status and version the
// caller read (DESIGN.md §3): renames, deactivations, trustlines and v2 approval decisions;
// each stages its event in that same write (events.go).
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
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/outbox"
)

const colWallets = "wallets"

// Store reads and writes the custody collections.
type Store struct {
	db      *mongo.Database
	journal *journal.Journal
	now     func() time.Time
}

// New returns a store on db.
func New(db *mongo.Database) *Store { return NewWithClock(db, nil) }

// NewWithClock returns a store on db whose times, its journal's postings included, come
// from now (time.Now when nil): a test moves it to post at the times it chooses.
func NewWithClock(db *mongo.Database, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, journal: newJournal(db, now), now: now}
}

// Indexes are the indexes the queries rely on, custody's journal's included: every query
// is scoped to a company; an approval intent id names one wallet only (sparse: wallets
// created through the service desk have no intent).
func Indexes() []mongodb.Index {
	return append([]mongodb.Index{
		{Collection: colWallets, Name: "company_id", Keys: mongodb.Keys("companyId", "_id")},
		{Collection: colWallets, Name: "intent_id", Keys: mongodb.Keys("intent.id"), Unique: true, Sparse: true},
		// The relay's query of the wallets with events not yet relayed (Outboxes).
		outbox.Index(colWallets),
	}, journal.Indexes(journalPrefix)...)
}

// EnsureIndexes creates the Indexes.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, s.db, Indexes())
}

func (s *Store) wallets() *mongo.Collection { return s.db.Collection(colWallets) }

// PutWallet creates a wallet or replaces its description as given (demo data and tests),
// its journal accounts kept, and funds each of its balances through the journal under
// fixed entry ids (put:<walletId>:<currencyId>): a repeated put moves nothing again. Its event
// sequence and outbox stay as they are: seeding records no event.
func (s *Store) PutWallet(ctx context.Context, w custody.Wallet) error {
	doc, err := toDoc(w)
	if err != nil {
		return err
	}
	set := bson.D{{Key: "name", Value: doc.Name}, {Key: "companyId", Value: doc.CompanyID}, {Key: "ownerId", Value: doc.OwnerID},
		{Key: "createdBy", Value: doc.CreatedBy}, {Key: "status", Value: doc.Status}, {Key: "valid", Value: doc.Valid},
		{Key: "registeredComplianceKey", Value: doc.RegisteredComplianceKey}, {Key: "blockchain", Value: doc.Blockchain},
		{Key: "currencyId", Value: doc.CurrencyID}, {Key: "assetBalances", Value: doc.AssetBalances}, {Key: "createdAt", Value: doc.CreatedAt},
		{Key: "updatedAt", Value: doc.UpdatedAt}, {Key: "version", Value: doc.Version}, {Key: "subentries", Value: doc.Subentries},
		{Key: "intent", Value: doc.Intent}, {Key: "lastRequestId", Value: doc.LastRequestID}}
	update := bson.D{{Key: "$set", Value: set}, {Key: "$setOnInsert", Value: bson.D{{Key: "accounts", Value: bson.D{}}}}}
	if _, err := s.wallets().UpdateOne(ctx, bson.D{{Key: "_id", Value: w.ID}}, update, options.UpdateOne().SetUpsert(true)); err != nil {
		return fmt.Errorf("put wallet %s: %w", w.ID, err)
	}
	for _, b := range w.AssetBalances {
		if err := s.fund(ctx, "put:"+w.ID+":"+b.CurrencyID, w.ID, b); err != nil {
			return err
		}
	}
	return nil
}

// InsertWallet creates a wallet under its reserved id, with its legacy_wallet.created event
// (a proposed wallet's too: its status says it awaits approval); an existing id answers
// apperr.ErrExists and records no event.
func (s *Store) InsertWallet(ctx context.Context, w custody.Wallet) error {
	doc, err := toDoc(w)
	if err != nil {
		return err
	}
	set, _, staged, err := outbox.Stage(0, s.now(), walletEvent(ctx, EventLegacyWalletCreated, doc))
	if err != nil {
		return fmt.Errorf("insert wallet %s: %w", w.ID, err)
	}
	created, err := outbox.Attach(doc, set, staged)
	if err != nil {
		return fmt.Errorf("insert wallet %s: %w", w.ID, err)
	}
	_, err = s.wallets().InsertOne(ctx, created)
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("insert wallet %s: %w", w.ID, apperr.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("insert wallet %s: %w", w.ID, err)
	}
	return nil
}

// Wallet returns the company's wallet id, or apperr.ErrNotFound (also when the wallet
// belongs to another company).
func (s *Store) Wallet(ctx context.Context, companyID, id string) (custody.Wallet, error) {
	var doc walletDoc
	err := s.wallets().FindOne(ctx, bson.D{{Key: "companyId", Value: companyID}, {Key: "_id", Value: id}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return custody.Wallet{}, fmt.Errorf("wallet %s: %w", id, apperr.ErrNotFound)
	}
	if err != nil {
		return custody.Wallet{}, fmt.Errorf("find wallet %s: %w", id, err)
	}
	return doc.wallet()
}

// ListByCompany returns every wallet of the company, sorted by id, in one query.
func (s *Store) ListByCompany(ctx context.Context, companyID string) ([]custody.Wallet, error) {
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}})
	cur, err := s.wallets().Find(ctx, bson.D{{Key: "companyId", Value: companyID}}, opts)
	if err != nil {
		return nil, fmt.Errorf("list wallets of %s: %w", companyID, err)
	}
	var docs []walletDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("list wallets of %s: %w", companyID, err)
	}
	out := make([]custody.Wallet, 0, len(docs))
	for _, d := range docs {
		w, err := d.wallet()
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// Rename sets the name of an ACTIVE wallet still at version, for request requestID, with its
// legacy_wallet.renamed event, and returns the wallet after the change. A wallet that
// changed meanwhile (or is gone, or no longer ACTIVE) answers apperr.ErrConflict and
// records no event.
func (s *Store) Rename(ctx context.Context, companyID, id string, version int64, requestID, name string) (custody.Wallet, error) {
	return s.change(ctx, companyID, id, version, requestID, EventLegacyWalletRenamed, func(d *walletDoc) { d.Name = name })
}

// Deactivate moves an ACTIVE wallet still at version to DEACTIVATED (and not valid), for
// request requestID, with its legacy_wallet.deactivated event. A wallet that changed
// meanwhile answers apperr.ErrConflict and records no event.
func (s *Store) Deactivate(ctx context.Context, companyID, id string, version int64, requestID string) (custody.Wallet, error) {
	return s.change(ctx, companyID, id, version, requestID, EventLegacyWalletDeactivated, func(d *walletDoc) {
		d.Status, d.Valid = custody.StatusDeactivated, false
	})
}

// change is the one conditional update behind Rename and Deactivate: edit changes the
// wallet as read, and the update sets what it may change, with the event of type typ.
func (s *Store) change(ctx context.Context, companyID, id string, version int64, requestID, typ string, edit func(*walletDoc)) (custody.Wallet, error) {
	filter := bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: companyID},
		{Key: "status", Value: custody.StatusActive}, {Key: "version", Value: version}}
	return s.staged(ctx, id, version, filter, func(before sequenced) (bson.D, error) {
		now := ms(s.now())
		after := before.Doc
		edit(&after)
		after.UpdatedAt, after.LastRequestID = now, requestID
		set, push, _, err := outbox.Stage(before.EventSeq, now, walletEvent(ctx, typ, after))
		if err != nil {
			return nil, err
		}
		set = append(bson.D{{Key: "name", Value: after.Name}, {Key: "status", Value: after.Status}, {Key: "valid", Value: after.Valid},
			{Key: "updatedAt", Value: now}, {Key: "lastRequestId", Value: requestID}}, set...)
		return bson.D{{Key: "$set", Value: set}, {Key: "$push", Value: push}, {Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}}}, nil
	})
}

// staged reads wallet id as filter matches it (the caller's status and version), has build
// make the update of the wallet as read with its events, numbered after the event sequence
// read, and applies it under the same filter: the version guard that keeps the change
// valid keeps the numbering gap-free, and an update that misses records no event. A wallet
// that no longer matches answers apperr.ErrConflict.
func (s *Store) staged(ctx context.Context, id string, version int64, filter bson.D, build func(before sequenced) (bson.D, error)) (custody.Wallet, error) {
	var before sequenced
	err := s.wallets().FindOne(ctx, filter).Decode(&before)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return custody.Wallet{}, fmt.Errorf("update wallet %s at version %d: %w", id, version, apperr.ErrConflict)
	}
	if err != nil {
		return custody.Wallet{}, fmt.Errorf("read wallet %s: %w", id, err)
	}
	update, err := build(before)
	if err != nil {
		return custody.Wallet{}, fmt.Errorf("update wallet %s: %w", id, err)
	}
	return s.update(ctx, id, version, filter, update)
}

// update applies one conditional update to wallet id read at version and returns the wallet
// after it; a filter that no longer matches answers apperr.ErrConflict.
func (s *Store) update(ctx context.Context, id string, version int64, filter, update bson.D) (custody.Wallet, error) {
	var doc walletDoc
	err := s.wallets().FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return custody.Wallet{}, fmt.Errorf("update wallet %s at version %d: %w", id, version, apperr.ErrConflict)
	}
	if err != nil {
		return custody.Wallet{}, fmt.Errorf("update wallet %s: %w", id, err)
	}
	return doc.wallet()
}
