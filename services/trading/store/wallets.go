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

	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/mongodb"
	"github.com/zcustody/suite/services/trading"
)

type subClientDoc struct {
	Ref     string `bson:"ref"`
	Balance string `bson:"balance"`
}

// balanceDoc holds canonical decimal strings (Decimal128 is not portable, DESIGN.md §3).
type balanceDoc struct {
	Currency   string         `bson:"currency"`
	Available  string         `bson:"available"`
	Ledger     string         `bson:"ledger"`
	PendingOut string         `bson:"pendingOut"`
	PendingIn  string         `bson:"pendingIn"`
	FeeBuffer  string         `bson:"feeBuffer"`
	SubClients []subClientDoc `bson:"subClientBalances"`
}

type walletDoc struct {
	ID        string       `bson:"_id"`
	VenueID   string       `bson:"venueId"`
	Name      string       `bson:"name"`
	Status    string       `bson:"status"`
	CompanyID string       `bson:"companyId"`
	Currency  string       `bson:"currency"`
	Balances  []balanceDoc `bson:"balances"`
	// CustomProperties is the JSON text as given, so it comes back byte for byte.
	CustomProperties string    `bson:"customProperties"`
	CreatedBy        string    `bson:"createdBy"`
	CreatedAt        time.Time `bson:"createdAt"`
	UpdatedAt        time.Time `bson:"updatedAt"`
	Version          int64     `bson:"version"`
	RequestID        string    `bson:"requestId"`
	DeactivatedBy    string    `bson:"deactivatedBy,omitempty"`
}

func toWalletDoc(w trading.Wallet) walletDoc {
	doc := walletDoc{ID: w.ID, VenueID: w.VenueID, Name: w.Name, Status: w.Status, CompanyID: w.CompanyID, Currency: w.Currency,
		Balances: []balanceDoc{}, CustomProperties: w.CustomProperties, CreatedBy: w.CreatedBy, CreatedAt: w.CreatedAt,
		UpdatedAt: w.UpdatedAt, Version: w.Version, RequestID: w.RequestID, DeactivatedBy: w.DeactivatedBy}
	for _, b := range w.Balances {
		doc.Balances = append(doc.Balances, toBalanceDoc(b))
	}
	return doc
}

func toBalanceDoc(b trading.Balance) balanceDoc {
	bd := balanceDoc{Currency: b.Currency, Available: b.Available, Ledger: b.Ledger, PendingOut: b.PendingOut,
		PendingIn: b.PendingIn, FeeBuffer: b.FeeBuffer, SubClients: []subClientDoc{}}
	for _, ref := range slices.Sorted(maps.Keys(b.SubClients)) {
		bd.SubClients = append(bd.SubClients, subClientDoc{Ref: ref, Balance: b.SubClients[ref]})
	}
	return bd
}

func (d walletDoc) wallet() trading.Wallet {
	w := trading.Wallet{ID: d.ID, VenueID: d.VenueID, Name: d.Name, Status: d.Status, CompanyID: d.CompanyID, Currency: d.Currency,
		CustomProperties: d.CustomProperties, CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
		Version: d.Version, RequestID: d.RequestID, DeactivatedBy: d.DeactivatedBy}
	for _, b := range d.Balances {
		w.Balances = append(w.Balances, b.balance())
	}
	return w
}

func (b balanceDoc) balance() trading.Balance {
	bal := trading.Balance{Currency: b.Currency, Available: b.Available, Ledger: b.Ledger, PendingOut: b.PendingOut,
		PendingIn: b.PendingIn, FeeBuffer: b.FeeBuffer, SubClients: map[string]string{}}
	for _, sc := range b.SubClients {
		bal.SubClients[sc.Ref] = sc.Balance
	}
	return bal
}

// InsertWallet inserts w under its reserved id and returns the stored wallet. If the id is
// taken it returns the wallet already stored (a repeated execution): the caller checks its
// RequestID.
func (s *Store) InsertWallet(ctx context.Context, w trading.Wallet) (trading.Wallet, error) {
	col := s.db.Collection(colWallets)
	_, err := col.InsertOne(ctx, toWalletDoc(w))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return trading.Wallet{}, fmt.Errorf("insert wallet %s: %w", w.ID, err)
	}
	var doc walletDoc
	if err := col.FindOne(ctx, bson.D{{Key: "_id", Value: w.ID}}).Decode(&doc); err != nil {
		return trading.Wallet{}, fmt.Errorf("read wallet %s: %w", w.ID, err)
	}
	return doc.wallet(), nil
}

// PutWallet creates or replaces a wallet as a whole (demo data; requests go through
// InsertWallet and Deactivate).
func (s *Store) PutWallet(ctx context.Context, w trading.Wallet) error {
	_, err := s.db.Collection(colWallets).ReplaceOne(ctx, bson.D{{Key: "_id", Value: w.ID}}, toWalletDoc(w), options.Replace().SetUpsert(true))
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
		options.FindOne().SetProjection(withoutMovements)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return trading.Wallet{}, fmt.Errorf("wallet %s: %w", id, apperr.ErrNotFound)
	}
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("find wallet %s: %w", id, err)
	}
	return doc.wallet(), nil
}

// Deactivate deactivates w in one conditional update guarded by its status (ACTIVE) and
// version; requestID is recorded as DeactivatedBy. A wallet changed since w was read gives
// apperr.ErrConflict.
func (s *Store) Deactivate(ctx context.Context, w trading.Wallet, requestID string) (trading.Wallet, error) {
	filter := bson.D{{Key: "_id", Value: w.ID}, {Key: "companyId", Value: w.CompanyID},
		{Key: "status", Value: trading.StatusActive}, {Key: "version", Value: w.Version}}
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "status", Value: trading.StatusDeactivated},
			{Key: "updatedAt", Value: s.now().UTC().Truncate(time.Millisecond)}, {Key: "deactivatedBy", Value: requestID}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	var doc walletDoc
	err := s.db.Collection(colWallets).FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return trading.Wallet{}, fmt.Errorf("deactivate wallet %s version %d: %w", w.ID, w.Version, apperr.ErrConflict)
	}
	if err != nil {
		return trading.Wallet{}, fmt.Errorf("deactivate wallet %s: %w", w.ID, err)
	}
	return doc.wallet(), nil
}

// SearchWallets returns one page of the company's wallets matching f and the number of all
// matches: one find and one count.
func (s *Store) SearchWallets(ctx context.Context, f trading.WalletFilter) ([]trading.Wallet, int64, error) {
	and := bson.A{bson.D{{Key: "companyId", Value: f.CompanyID}}}
	and = mongodb.AppendIn(and, "_id", f.IDs)
	and = mongodb.AppendIn(and, "venueId", f.VenueIDs)
	and = mongodb.AppendIn(and, "name", f.Names)
	and = mongodb.AppendIn(and, "status", f.Statuses)
	and = mongodb.AppendIn(and, "companyId", f.CompanyIDs)
	and = mongodb.AppendIn(and, "currency", f.Currencies)
	and = mongodb.AppendIn(and, "createdBy", f.CreatedBy)
	filter := mongodb.And(and)
	col := s.db.Collection(colWallets)
	opts := findPage(f.Page.Limit, f.Page.Offset, f.Page.SortBy, f.Page.Desc).SetProjection(withoutMovements)
	docs, err := findAll[walletDoc](ctx, col, filter, opts)
	if err != nil {
		return nil, 0, err
	}
	total, err := col.CountDocuments(ctx, filter)
	if err != nil {
		return nil, 0, fmt.Errorf("count wallets: %w", err)
	}
	out := make([]trading.Wallet, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.wallet())
	}
	return out, total, nil
}
