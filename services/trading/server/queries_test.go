package server_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/server"
	"github.com/zcustody/suite/services/trading/store"
)

// commands records the database commands a client sends.
type commands struct {
	mu    sync.Mutex
	names []string
}

func (c *commands) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.names
	c.names = nil
	return out
}

// TestSearchesCostOneFindAndOneCount: a search is one find and one count (CountDocuments is an
// aggregate); prices come from the store's cache.
func TestSearchesCostOneFindAndOneCount(t *testing.T) {
	t.Parallel()
	f := newFixture(t) // skips or fails as testdb decides when there is no database
	f.create(t, "SERV-REQ-1", "A", "USDC")
	if err := f.store.PutPrice(context.Background(), trading.Price{Currency: "USDC", Price: "1.00"}); err != nil {
		t.Fatal(err)
	}
	rec := &commands{}
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		rec.mu.Lock()
		rec.names = append(rec.names, e.CommandName)
		rec.mu.Unlock()
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(os.Getenv("MONGODB_URI")).SetMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	st := store.New(client.Database(f.db.Name()))
	srv := server.New(st)
	if _, err := st.Prices(context.Background()); err != nil { // warm the cache
		t.Fatal(err)
	}
	rec.take()
	for range 3 {
		if _, err := srv.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); len(got) != 2 || got[0] != "find" || got[1] != "aggregate" {
			t.Errorf("SearchWallets sent %v, want [find aggregate]", got)
		}
		if _, err := srv.ListVaultAddresses(user(company), &tradingv1.ListVaultAddressesRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); len(got) != 2 || got[0] != "find" || got[1] != "aggregate" {
			t.Errorf("ListVaultAddresses sent %v, want [find aggregate]", got)
		}
	}
}
