package data

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// walletDoc mirrors the trading store's document (services/trading/store), which the store
// does not export. Its journal accounts start empty: money only arrives through the journal,
// so bulk wallets have zero balances. The bulk wallets are inserted with InsertMany in this shape
// because the store's own writes are slow to repeat 10,000 times on the embedded database:
// FerretDB 1.24 on SQLite scans the whole collection for every update (PutWallet's upsert)
// and even for a find by _id (InsertWallet's read-back). checkWallet reads one bulk wallet
// back through the store, so a drift between the two shapes fails the load.
type walletDoc struct {
	ID               string    `bson:"_id"`
	VenueID          string    `bson:"venueId"`
	Name             string    `bson:"name"`
	Status           string    `bson:"status"`
	CompanyID        string    `bson:"companyId"`
	Currency         string    `bson:"currency"`
	Accounts         struct{}  `bson:"accounts"`
	CustomProperties string    `bson:"customProperties"`
	CreatedBy        string    `bson:"createdBy"`
	CreatedAt        time.Time `bson:"createdAt"`
	UpdatedAt        time.Time `bson:"updatedAt"`
	Version          int64     `bson:"version"`
	RequestID        string    `bson:"requestId"`
}

func toDoc(w trading.Wallet) walletDoc {
	d := walletDoc{ID: w.ID, VenueID: w.VenueID, Name: w.Name, Status: w.Status, CompanyID: w.CompanyID, Currency: w.Currency,
		CustomProperties: w.CustomProperties, CreatedBy: w.CreatedBy, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		Version: w.Version, RequestID: w.RequestID}
	return d
}

// loadWallets inserts n bulk wallets (ids already there from an earlier run against the same
// MongoDB are skipped), then checks one through the store.
func loadWallets(ctx context.Context, db *mongo.Database, n int) error {
	wallets := make([]trading.Wallet, n)
	for i := range n {
		wallets[i] = BenchWallet(i)
	}
	if err := InsertWallets(ctx, db, wallets); err != nil {
		return err
	}
	return checkWallet(ctx, tradingstore.New(db), BenchWallet(n-1))
}

// InsertWallets inserts wallets into the wallets collection of db (a trading store's database)
// in the store's document shape, with InsertMany in batches of 1,000; ids already there (an
// earlier run against the same MongoDB) are skipped.
func InsertWallets(ctx context.Context, db *mongo.Database, wallets []trading.Wallet) error {
	col := db.Collection("wallets")
	for done := 0; done < len(wallets); {
		batch := make([]any, 0, min(1000, len(wallets)-done))
		for _, w := range wallets[done : done+cap(batch)] {
			batch = append(batch, toDoc(w))
		}
		_, err := col.InsertMany(ctx, batch, options.InsertMany().SetOrdered(false))
		if err != nil && !onlyDuplicates(err) {
			return fmt.Errorf("load wallets: %w", err)
		}
		done += len(batch)
	}
	return nil
}

// checkWallet reads want back through the trading store and fails unless it decodes equal.
func checkWallet(ctx context.Context, st *tradingstore.Store, want trading.Wallet) error {
	got, err := st.Wallet(ctx, want.CompanyID, want.ID)
	if err != nil {
		return fmt.Errorf("read a bulk wallet back: %w", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("a bulk wallet reads back differently through the trading store (-loaded +read); "+
			"update data.walletDoc to the store's document:\n%s", diff)
	}
	return nil
}

// onlyDuplicates reports whether every write error of an unordered insert is a duplicate key.
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if !we.HasErrorCode(11000) {
			return false
		}
	}
	return true
}
