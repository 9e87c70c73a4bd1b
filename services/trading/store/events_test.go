package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

const (
	createRequest     = "3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b"
	deactivateRequest = "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"
)

// eventsEnv is a store with the log its relays append to.
type eventsEnv struct {
	st  *store.Store
	db  *mongo.Database
	log events.Collection
}

func newEventsEnv(t *testing.T) eventsEnv {
	t.Helper()
	db := testdb.New(t)
	st := store.New(db)
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := mongodb.EnsureIndexes(context.Background(), db, events.LogIndexes("events")); err != nil {
		t.Fatal(err)
	}
	return eventsEnv{st: st, db: db, log: events.NewCollection(db.Collection("events"))}
}

// apiCall is a context of an API call with request-identifier id, as the interceptors make it.
func apiCall(id string) context.Context {
	return logging.NewContext(context.Background(), logging.Continue(id, ""))
}

// boxed is what an entity's document carries of the outbox.
type boxed struct {
	EventSeq   int64      `bson:"eventSeq"`
	HasPending bool       `bson:"hasPending"`
	Outbox     []bson.Raw `bson:"outbox"`
}

// pending returns the document's event sequence and pending mark, and its outbox decoded.
func (e eventsEnv) pending(t *testing.T, collection string, id string) (boxed, []events.Event) {
	t.Helper()
	var b boxed
	if err := e.db.Collection(collection).FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&b); err != nil {
		t.Fatal(err)
	}
	out := make([]events.Event, 0, len(b.Outbox))
	for _, raw := range b.Outbox {
		ev, err := events.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return b, out
}

// relay runs one pass of the relay of every outbox of the store and returns how many events
// it moved.
func (e eventsEnv) relay(t *testing.T) int {
	t.Helper()
	n := 0
	for _, coll := range e.st.Outboxes() {
		moved, err := outbox.NewRelay(coll, e.log, nil).Once(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += moved
	}
	return n
}

func dataOf(t *testing.T, ev events.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("event %s data %s: %v", ev.Type, ev.Data, err)
	}
	return m
}

// summary is what a consumer reads first of an event.
type summary struct {
	Type, Company, EntityType, EntityID, Request string
	Version                                      int64
}

func summarize(evs []events.Event) []summary {
	out := []summary{}
	for _, e := range evs {
		out = append(out, summary{e.Type, e.CompanyID, e.Entity.Type, e.Entity.ID, e.RequestID, e.Entity.Version})
	}
	return out
}

// TestWalletEvents: creating and deactivating a wallet stage wallet.created and
// wallet.deactivated in the wallet's document, numbered 1 and 2 across a relay pass, with
// the wallet's public fields and the request-identifier of the API call; a repeated
// creation and a deactivation that loses its guard stage nothing; the relay moves them to the
// log in order and empties the outbox.
func TestWalletEvents(t *testing.T) {
	t.Parallel()
	env := newEventsEnv(t)
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0)
	w.CustomProperties = `{"accountUuid":"a","userUuid":"u"}`
	before := time.Now().Add(-time.Second)
	if _, err := env.st.InsertWallet(apiCall(createRequest), w); err != nil {
		t.Fatal(err)
	}
	again := w
	again.Name = "Other"
	if _, err := env.st.InsertWallet(apiCall(deactivateRequest), again); err != nil {
		t.Fatal(err)
	}
	doc, staged := env.pending(t, "wallets", w.ID)
	if doc.EventSeq != 1 || !doc.HasPending || len(staged) != 1 {
		t.Fatalf("after the creation and its repeat: %+v, %d events; want one pending event, sequence 1", doc, len(staged))
	}
	created := staged[0]
	if created.Timestamp.Before(before) || created.SchemaVersion != events.SchemaVersion || len(created.ID) < 5 || created.ID[:4] != "evt_" {
		t.Errorf("wallet.created envelope %+v", created)
	}
	wantData := map[string]any{"id": w.ID, "venueId": "BYBIT", "name": "Alpha", "status": "ACTIVE", "companyId": "ZTEST",
		"currency": "BTC", "customProperties": map[string]any{"accountUuid": "a", "userUuid": "u"}, "createdBy": "a@x",
		"createdAt": "2026-11-21T10:00:00.000Z", "updatedAt": "2026-11-21T10:00:00.000Z"}
	if diff := cmp.Diff(wantData, dataOf(t, created)); diff != "" {
		t.Errorf("wallet.created data (-want +got):\n%s", diff)
	}
	if n := env.relay(t); n != 1 {
		t.Fatalf("first relay pass moved %d events, want 1", n)
	}

	stale := w
	stale.Version = 7
	if _, err := env.st.Deactivate(apiCall(deactivateRequest), stale, "R-9"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("Deactivate(stale) = %v, want ErrConflict", err)
	}
	if doc, staged := env.pending(t, "wallets", w.ID); doc.EventSeq != 1 || doc.HasPending || len(staged) != 0 {
		t.Fatalf("a refused deactivation staged %+v", staged)
	}
	off, err := env.st.Deactivate(apiCall(deactivateRequest), w, "R-9")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.st.Deactivate(context.Background(), w, "R-10"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("Deactivate(deactivated) = %v, want ErrConflict", err)
	}
	doc, staged = env.pending(t, "wallets", w.ID)
	if doc.EventSeq != 2 || len(staged) != 1 {
		t.Fatalf("after the deactivation: %+v, %d events; want sequence 2, one pending event", doc, len(staged))
	}
	data := dataOf(t, staged[0])
	if data["status"] != "DEACTIVATED" || data["name"] != "Alpha" || data["updatedAt"] != off.UpdatedAt.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("wallet.deactivated data %v, want DEACTIVATED at %s", data, off.UpdatedAt)
	}
	if _, bad := data["balances"]; bad {
		t.Errorf("wallet.deactivated data carries balances: %v", data)
	}

	if n := env.relay(t); n != 1 {
		t.Fatalf("second relay pass moved %d events, want 1", n)
	}
	if doc, staged := env.pending(t, "wallets", w.ID); doc.HasPending || len(staged) != 0 || doc.EventSeq != 2 {
		t.Errorf("after relaying: %+v; want an empty outbox, unmarked, sequence 2", doc)
	}
	got, err := env.log.Events(context.Background(), store.EntityWallet, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []summary{
		{"wallet.created", "ZTEST", "wallet", w.ID, createRequest, 1},
		{"wallet.deactivated", "ZTEST", "wallet", w.ID, deactivateRequest, 2},
	}
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("the log's events (-want +got):\n%s", diff)
	}
	if got[0].ID != created.ID || string(got[0].Data) != string(created.Data) {
		t.Errorf("relayed %+v, staged %+v: want the same event, byte for byte", got[0], created)
	}
}

// TestConcurrentDeactivationsStageOneEvent: of racing deactivations, the one that lands
// records its event; the others record none.
func TestConcurrentDeactivationsStageOneEvent(t *testing.T) {
	t.Parallel()
	env := newEventsEnv(t)
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0)
	if _, err := env.st.InsertWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := env.st.Deactivate(context.Background(), w, "R-9")
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, apperr.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	doc, staged := env.pending(t, "wallets", w.ID)
	want := []summary{{"wallet.created", "ZTEST", "wallet", w.ID, "", 1}, {"wallet.deactivated", "ZTEST", "wallet", w.ID, "", 2}}
	if wins.Load() != 1 || doc.EventSeq != 2 {
		t.Errorf("%d deactivations won, event sequence %d; want one, 2", wins.Load(), doc.EventSeq)
	}
	if diff := cmp.Diff(want, summarize(staged)); diff != "" {
		t.Errorf("staged events (-want +got):\n%s", diff)
	}
}

// TestAddressEvents: each stored vault address records address.created with the address as
// the list shows it; a repeated generation stores and records nothing.
func TestAddressEvents(t *testing.T) {
	t.Parallel()
	env := newEventsEnv(t)
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "V", "A", trading.StatusActive, "USDC", "a@x", t0)
	for range 2 { // the second generation is a repeat
		for _, a := range addresses(t, w, t0) {
			if _, err := env.st.InsertAddress(apiCall(createRequest), a); err != nil {
				t.Fatal(err)
			}
		}
	}
	stored, err := env.st.WalletAddresses(context.Background(), w.ID)
	if err != nil || len(stored) != 2 {
		t.Fatalf("WalletAddresses() = %d, %v; want 2", len(stored), err)
	}
	for _, a := range stored {
		doc, staged := env.pending(t, "vault_addresses", a.Address)
		if doc.EventSeq != 1 || len(staged) != 1 {
			t.Fatalf("address %s: %+v, %d events; want one event, sequence 1", a.Address, doc, len(staged))
		}
		want := []summary{{"address.created", "ZTEST", "address", a.Address, createRequest, 1}}
		if diff := cmp.Diff(want, summarize(staged)); diff != "" {
			t.Errorf("address %s events (-want +got):\n%s", a.Address, diff)
		}
		data := dataOf(t, staged[0])
		integrity, _ := data["integrityDetails"].(map[string]any)
		owner, _ := data["walletOwner"].(map[string]any)
		if data["address"] != a.Address || data["walletId"] != w.ID || data["currencyId"] != a.CurrencyID || data["ledger"] != a.Ledger ||
			integrity["signature"] != a.Integrity.Signature || owner["id"] != "ZTEST" {
			t.Errorf("address.created data %v, want address %+v", data, a)
		}
	}
	if n := env.relay(t); n != 2 {
		t.Fatalf("relay moved %d events, want 2", n)
	}
	for _, a := range stored {
		got, err := env.log.Events(context.Background(), store.EntityAddress, a.Address)
		if err != nil || len(got) != 1 || got[0].Type != store.EventAddressCreated {
			t.Errorf("log of %s: %+v, %v", a.Address, got, err)
		}
		if doc, staged := env.pending(t, "vault_addresses", a.Address); doc.HasPending || len(staged) != 0 {
			t.Errorf("address %s after relaying: %+v", a.Address, doc)
		}
	}
}
