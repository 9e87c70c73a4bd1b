package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
	"github.com/zcustody/suite/services/custody/store"
	"github.com/zcustody/suite/services/internal/plugin"
)

const (
	company = "ZTEST"
	maker   = "api-maker@ztest.example"
)

type fixture struct {
	db     *mongo.Database
	store  *store.Store
	plugin *plugin.Server
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	return newFixtureWithClock(t, nil)
}

// newFixtureWithClock is newFixture with the store's clock (its journal's included) now;
// nil is the real one.
func newFixtureWithClock(t *testing.T, now func() time.Time) fixture {
	t.Helper()
	db := testdb.New(t)
	st := store.NewWithClock(db, now)
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Every test that moves money here ends with its journal reconciled.
	t.Cleanup(func() {
		r, err := st.Journal().Reconcile(context.Background())
		if err != nil || !r.Clean() {
			t.Errorf("journal does not reconcile: %v %v", err, r.Violations)
		}
	})
	return fixture{db: db, store: st, plugin: server.NewPlugin(st, startCompliance(t), plugin.NewLedger(db))}
}

// testClock is a clock the test moves by hand: a store's, for postings at the times the test
// chooses. It starts at the real time (to the millisecond) and stands still between moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Now().UTC().Truncate(time.Millisecond)} }

// Now is the clock's time.
func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d on.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// servicedesk is the context of a call by the service desk.
func servicedesk() context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: plugin.ServicedeskSystem})
}

// put stores an ACTIVE BTC wallet of the company.
func (f fixture) put(t *testing.T, companyID, id string, change func(*custody.Wallet)) custody.Wallet {
	t.Helper()
	w, err := custody.Open(custody.Opening{ID: id, Name: "Old name", CompanyID: companyID, CreatedBy: maker, CurrencyID: "btc-btc"})
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&w)
	}
	if err := f.store.PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (f fixture) count(t *testing.T, collection string) int64 {
	t.Helper()
	n, err := f.db.Collection(collection).CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func request(t *testing.T, requestID, serviceID string, payload map[string]any) *pluginv1.ServiceRequest {
	t.Helper()
	s, err := structpb.NewStruct(payload)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginv1.ServiceRequest{RequestId: requestID, ServiceId: serviceID, CompanyId: company, MakerEmail: maker, Payload: s}
}

func list(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// wantErr is the gRPC code, ER code and field a call must fail with.
type wantErr struct {
	status      codes.Code
	code, field string
}

func checkErr(t *testing.T, err error, want wantErr) {
	t.Helper()
	var appErr *apperr.Error
	if !errors.As(err, &appErr) {
		t.Fatalf("err = %v, want %s %s on %q", err, want.status, want.code, want.field)
	}
	if got := (wantErr{appErr.Status, appErr.Code, appErr.Field}); got != want {
		t.Fatalf("err = %v %s on %q (%s), want %v %s on %q", got.status, got.code, got.field, appErr.Message, want.status, want.code, want.field)
	}
}
