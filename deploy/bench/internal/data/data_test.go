package data_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/local/embeddb"
	"github.com/zcustody/suite/platform/mongodb"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// The bulk wallets bypass the trading store's writes; Load reads one back through the store,
// and this test runs that check (and the search the read scenario sends) on a fresh database.
func TestLoadWritesWhatTheStoreReads(t *testing.T) {
	ctx := context.Background()
	db, err := embeddb.Start(ctx, embeddb.Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	const n = 100
	if _, err := data.Load(ctx, db.URI(), n); err != nil {
		t.Fatal(err)
	}
	if _, err := data.Load(ctx, db.URI(), n); err != nil {
		t.Fatalf("a second load over the same data: %v", err)
	}
	client, err := mongodb.Connect(ctx, db.URI())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(ctx) })
	f := data.ReadFilter()
	wallets, total, err := tradingstore.New(client.Database("trading")).SearchWallets(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if total != n/10 || len(wallets) != 10 {
		t.Errorf("search at venue %s = %d of %d wallets, want 10 of %d", data.ReadVenue, len(wallets), total, n/10)
	}
}
