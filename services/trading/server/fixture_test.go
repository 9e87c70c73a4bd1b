package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/trading/server"
	"github.com/zcustody/suite/services/trading/store"
)

const (
	company     = "ZTEST"
	maker       = "api-maker@ztest.example"
	accountUUID = "0b9e5b6a-2f43-4d7c-9a51-3f1c2b7d8e90"
	userUUID    = "7c2d9f10-5a4b-4e3c-8d2f-1a0b9c8d7e6f"
)

type fixture struct {
	db      *mongo.Database
	store   *store.Store
	server  *server.Server
	plugin  *plugin.Server
	operPub ed25519.PublicKey
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
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db, store: st, server: server.New(st), plugin: server.NewPlugin(st, plugin.NewLedger(db), key), operPub: pub}
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

// user is the context of a call by a user of companyID.
func user(companyID string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindUser, CompanyID: companyID,
		UserEmail: "api-viewer@" + companyID + ".example", Roles: []string{principal.RoleViewer}})
}

func (f fixture) count(t *testing.T, collection string) int64 {
	t.Helper()
	n, err := f.db.Collection(collection).CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// requestTypes are the request types the service desk sends with each service.
var requestTypes = map[string]string{"0x0003-001": "CREATE", "0x0003-002": "DEACTIVATE", "0x0003-003": "CREATE", "0x0013-001": "CREATE"}

func request(t *testing.T, requestID, serviceID string, payload map[string]any) *pluginv1.ServiceRequest {
	t.Helper()
	s, err := structpb.NewStruct(payload)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginv1.ServiceRequest{RequestId: requestID, ServiceId: serviceID, RequestType: requestTypes[serviceID], CompanyId: company,
		MakerEmail: maker, Payload: s}
}

func createPayload(name, currency string) map[string]any {
	return map[string]any{"name": []any{name}, "currency": []any{currency}, "tradingVenueId": []any{"BYBIT"},
		"accountUuid": []any{accountUUID}, "userUuid": []any{userUUID}}
}

// create validates and executes a 0x0003-001 request and returns the new wallet id.
func (f fixture) create(t *testing.T, requestID, name, currency string) string {
	t.Helper()
	r := request(t, requestID, "0x0003-001", createPayload(name, currency))
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}); err != nil {
		t.Fatal(err)
	}
	return v.GetEntityIds()[0]
}

// fund deposits amount into the company's wallet through the journal.
func (f fixture) fund(t *testing.T, walletID, currency, amount string) {
	t.Helper()
	a, err := amountOf(amount)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Deposit(context.Background(), "fund-"+walletID+"-"+currency+"-"+amount, company, walletID, currency, a); err != nil {
		t.Fatal(err)
	}
}

func amountOf(s string) (amount.Amount, error) { return amount.FromStored(s) }

// journal records e on trading's journal (no wallet ownership checked: the test names its
// own wallets).
func (f fixture) journal(t *testing.T, e journal.Entry) {
	t.Helper()
	if _, err := f.store.RecordEntry(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
}
