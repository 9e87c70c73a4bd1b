package server_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"google.golang.org/protobuf/proto"

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

// take returns the recorded queries: a killCursors is left out (FerretDB keeps a find's cursor
// open once its limit is met, which MongoDB closes; mongodb.FindPage closes it).
func (c *commands) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.DeleteFunc(c.names, func(n string) bool { return n == "killCursors" })
	c.names = nil
	return out
}

// TestSearchesCostOneFindAndOneCount: a search is one find and one count (CountDocuments is an
// aggregate), and only the find when the page tells the total (a page short of its limit is
// the last); prices come from the store's cache.
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
	one := proto.Int32(1)
	for range 3 {
		// One wallet: a page of 10 holds it and tells the total; a page of 1 may not.
		if _, err := srv.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); !slices.Equal(got, []string{"find"}) {
			t.Errorf("SearchWallets sent %v, want [find]", got)
		}
		resp, err := srv.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{PaginationLimit: one})
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); !slices.Equal(got, []string{"find", "aggregate"}) {
			t.Errorf("SearchWallets of a full page sent %v, want [find aggregate]", got)
		}
		if resp.GetTotal() != 1 {
			t.Errorf("SearchWallets total %d, want 1", resp.GetTotal())
		}
		if _, err := srv.ListVaultAddresses(user(company), &tradingv1.ListVaultAddressesRequest{}); err != nil {
			t.Fatal(err)
		}
		// The wallet's few addresses fit a page of 10, which tells the total.
		if got := rec.take(); !slices.Equal(got, []string{"find"}) {
			t.Errorf("ListVaultAddresses sent %v, want [find]", got)
		}
	}
}
