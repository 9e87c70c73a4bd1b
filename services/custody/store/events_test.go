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
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/store"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Request-identifiers of the API calls of the tests.
const (
	requestA = "3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b"
	requestB = "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"
	requestC = "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
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

// boxed is what a wallet's document carries of the outbox.
type boxed struct {
	EventSeq   int64      `bson:"eventSeq"`
	HasPending bool       `bson:"hasPending"`
	Outbox     []bson.Raw `bson:"outbox"`
}

// pending returns the wallet document's event sequence and pending mark, and its outbox
// decoded.
func (e eventsEnv) pending(t *testing.T, id string) (boxed, []events.Event) {
	t.Helper()
	var b boxed
	if err := e.db.Collection("wallets").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&b); err != nil {
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

// logOf returns the log's events of one entity, in version order.
func (e eventsEnv) logOf(t *testing.T, entityType, id string) []events.Event {
	t.Helper()
	got, err := e.log.Events(context.Background(), entityType, id)
	if err != nil {
		t.Fatal(err)
	}
	return got
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

// unchanged fails unless the wallet's outbox still holds exactly want (a change refused).
func (e eventsEnv) unchanged(t *testing.T, id string, seq int64, want []events.Event) {
	t.Helper()
	doc, staged := e.pending(t, id)
	if doc.EventSeq != seq || len(staged) != len(want) {
		t.Fatalf("after a refused change: sequence %d, %d events; want %d, %d", doc.EventSeq, len(staged), seq, len(want))
	}
	for i := range want {
		if staged[i].ID != want[i].ID {
			t.Errorf("after a refused change: event %d is %+v, want %+v", i, staged[i], want[i])
		}
	}
}

// TestLegacyWalletEvents: creating, renaming twice and deactivating a wallet stage
// legacy_wallet.created, .renamed, .renamed and .deactivated in the wallet's document,
// numbered 1 to 4 across relay passes, with the wallet's public fields after each change and
// the request-identifier of its API call; a repeated creation and changes that lose their
// guard stage nothing; the relay moves them to the log in order and empties the outbox.
func TestLegacyWalletEvents(t *testing.T) {
	t.Parallel()
	env := newEventsEnv(t)
	w := wallet(t, "ZT", "ZT-NOBENF-0000000001", "btc-btc", "")
	w.LastRequestID = "SERV-REQ-C"
	if err := env.st.InsertWallet(apiCall(requestA), w); err != nil {
		t.Fatal(err)
	}
	_, staged := env.pending(t, w.ID)
	if err := env.st.InsertWallet(apiCall(requestB), w); !errors.Is(err, apperr.ErrExists) {
		t.Fatalf("second InsertWallet() = %v, want ErrExists", err)
	}
	env.unchanged(t, w.ID, 1, staged)
	wantCreated := map[string]any{"walletId": w.ID, "walletName": "Wallet " + w.ID, "walletCompany": "ZT", "createdBy": "maker@ZT",
		"status": "ACTIVE", "valid": true, "registeredComplianceKey": false, "blockchain": "BTC", "currencyId": "btc-btc",
		"createdAt": "2024-02-03T04:05:06.789Z", "updatedAt": "2024-02-03T04:05:06.789Z"}
	if diff := cmp.Diff(wantCreated, dataOf(t, staged[0])); diff != "" {
		t.Errorf("legacy_wallet.created data (-want +got):\n%s", diff)
	}

	renamed, err := env.st.Rename(apiCall(requestB), "ZT", w.ID, 1, "SERV-REQ-R", "First")
	if err != nil {
		t.Fatal(err)
	}
	_, staged = env.pending(t, w.ID)
	if _, err := env.st.Rename(apiCall(requestC), "ZT", w.ID, 1, "SERV-REQ-X", "Stale"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("Rename(stale) = %v, want ErrConflict", err)
	}
	if _, err := env.st.Deactivate(apiCall(requestC), "OTHER", w.ID, 2, "SERV-REQ-X"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("Deactivate(other company) = %v, want ErrConflict", err)
	}
	env.unchanged(t, w.ID, 2, staged)
	data := dataOf(t, staged[1])
	if data["walletName"] != "First" || data["status"] != "ACTIVE" || data["updatedAt"] != renamed.UpdatedAt.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("legacy_wallet.renamed data %v, want the new name at %s", data, renamed.UpdatedAt)
	}
	if n := env.relay(t); n != 2 {
		t.Fatalf("first relay pass moved %d events, want 2", n)
	}

	if _, err := env.st.Rename(apiCall(requestC), "ZT", w.ID, 2, "SERV-REQ-R2", "Second"); err != nil {
		t.Fatal(err)
	}
	off, err := env.st.Deactivate(context.Background(), "ZT", w.ID, 3, "SERV-REQ-D")
	if err != nil {
		t.Fatal(err)
	}
	doc, staged := env.pending(t, w.ID)
	if off.Status != custody.StatusDeactivated || doc.EventSeq != 4 || len(staged) != 2 {
		t.Fatalf("after the second rename and the deactivation: %+v, %d events; want sequence 4, two pending", doc, len(staged))
	}
	if data := dataOf(t, staged[1]); data["status"] != "DEACTIVATED" || data["valid"] != false || data["walletName"] != "Second" {
		t.Errorf("legacy_wallet.deactivated data %v, want DEACTIVATED, not valid, named Second", data)
	}
	if _, err := env.st.Rename(apiCall(requestC), "ZT", w.ID, 4, "SERV-REQ-Y", "Y"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("Rename(deactivated) = %v, want ErrConflict", err)
	}
	env.unchanged(t, w.ID, 4, staged)
	if n := env.relay(t); n != 2 {
		t.Fatalf("second relay pass moved %d events, want 2", n)
	}
	if doc, staged := env.pending(t, w.ID); doc.HasPending || len(staged) != 0 || doc.EventSeq != 4 {
		t.Errorf("after relaying: %+v; want an empty outbox, unmarked, sequence 4", doc)
	}
	want := []summary{
		{"legacy_wallet.created", "ZT", "legacy_wallet", w.ID, requestA, 1},
		{"legacy_wallet.renamed", "ZT", "legacy_wallet", w.ID, requestB, 2},
		{"legacy_wallet.renamed", "ZT", "legacy_wallet", w.ID, requestC, 3},
		{"legacy_wallet.deactivated", "ZT", "legacy_wallet", w.ID, "", 4},
	}
	got := env.logOf(t, store.EntityLegacyWallet, w.ID)
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("the log's events (-want +got):\n%s", diff)
	}
	for _, ev := range got {
		if ev.SchemaVersion != events.SchemaVersion || ev.Timestamp.IsZero() {
			t.Errorf("event %+v: want schema version %d and a timestamp", ev, events.SchemaVersion)
		}
		for _, secret := range []string{"intent", "proposalSignature", "accounts", "assetBalances", "lastRequestId"} {
			if _, bad := dataOf(t, ev)[secret]; bad {
				t.Errorf("%s data carries %s: %s", ev.Type, secret, ev.Data)
			}
		}
	}
}

// TestDecisionEvents: a proposed wallet records legacy_wallet.created as PENDING_AUTH; the
// one decision that lands records legacy_wallet.approved (or .rejected) with the outcome,
// the racing and replayed ones nothing.
func TestDecisionEvents(t *testing.T) {
	t.Parallel()
	env := newEventsEnv(t)
	approved := pendingWallet(t, "ZT", "ZT-NOBENF-P1", "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a")
	rejected := pendingWallet(t, "ZT", "ZT-NOBENF-P2", "3c2b1a0f-8e7d-4c6b-9a59-4e3d2c1b0a9f")
	for _, w := range []custody.Wallet{approved, rejected} {
		if err := env.st.InsertWallet(apiCall(requestA), w); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 4, 5, 6, 7, 8, 9_000_000, time.UTC)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := env.st.Decide(apiCall(requestB), approved, custody.Decision{Type: custody.ActionApprove, AuthorID: "a1", AuthorEmail: "checker@zt", At: at})
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, apperr.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d decisions won, want 1", wins.Load())
	}
	if _, err := env.st.Decide(apiCall(requestC), rejected, custody.Decision{Type: custody.ActionReject, AuthorID: "a1", At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.st.Decide(apiCall(requestC), rejected, custody.Decision{Type: custody.ActionApprove, AuthorID: "a1", At: at}); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("replayed Decide() = %v, want ErrConflict", err)
	}
	if n := env.relay(t); n != 4 {
		t.Fatalf("relay moved %d events, want 4", n)
	}
	for _, tt := range []struct {
		w              custody.Wallet
		typ, status    string
		valid          bool
		decisionReqID  string
		createdStatus  string
		createdIsValid bool
	}{
		{approved, "legacy_wallet.approved", "ACTIVE", true, requestB, "PENDING_AUTH", false},
		{rejected, "legacy_wallet.rejected", "REJECTED_BY_AUTHORISER", false, requestC, "PENDING_AUTH", false},
	} {
		got := env.logOf(t, store.EntityLegacyWallet, tt.w.ID)
		want := []summary{
			{"legacy_wallet.created", "ZT", "legacy_wallet", tt.w.ID, requestA, 1},
			{tt.typ, "ZT", "legacy_wallet", tt.w.ID, tt.decisionReqID, 2},
		}
		if diff := cmp.Diff(want, summarize(got)); diff != "" {
			t.Errorf("%s: the log's events (-want +got):\n%s", tt.w.ID, diff)
			continue
		}
		if d := dataOf(t, got[0]); d["status"] != tt.createdStatus || d["valid"] != tt.createdIsValid {
			t.Errorf("%s created data %v, want %s", tt.w.ID, d, tt.createdStatus)
		}
		if d := dataOf(t, got[1]); d["status"] != tt.status || d["valid"] != tt.valid || d["updatedAt"] != "2026-04-05T06:07:08.009Z" {
			t.Errorf("%s decision data %v, want %s, valid %t", tt.w.ID, d, tt.status, tt.valid)
		}
		if !got[1].Timestamp.Equal(at) {
			t.Errorf("%s decision at %s, want %s", tt.w.ID, got[1].Timestamp, at)
		}
	}
}

// TestTrustlineEvents: each activated trustline records trustline.activated as its own
// entity (wallet id and currency id), numbered from 1 apart from the wallet's own events;
// an activation that loses its guard, or finds the trustline active, records nothing.
func TestTrustlineEvents(t *testing.T) {
	t.Parallel()
	env := newEventsEnv(t)
	w := wallet(t, "ZT", "ZT-NOBENF-XLM", "xlm-xlm", "250")
	if err := env.st.PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if doc, staged := env.pending(t, w.ID); doc.EventSeq != 0 || len(staged) != 0 {
		t.Fatalf("seeding staged %+v", staged)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := env.st.AddTrustline(apiCall(requestA), "ZT", w.ID, 1, zeroBalance(t, "usdc-xlm"))
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, apperr.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	doc, staged := env.pending(t, w.ID)
	if wins.Load() != 1 || len(staged) != 1 || doc.EventSeq != 0 {
		t.Fatalf("%d activations won, %d events staged, wallet sequence %d; want 1, 1, 0", wins.Load(), len(staged), doc.EventSeq)
	}
	usdc := zeroBalance(t, "usdc-xlm")
	if diff := cmp.Diff(map[string]any{"walletId": w.ID, "currencyId": "usdc-xlm", "currency": usdc.Currency, "unitCurrency": usdc.UnitCurrency,
		"status": "ACTIVE", "minimumBalanceXlm": "1.5"}, dataOf(t, staged[0])); diff != "" {
		t.Errorf("trustline.activated data (-want +got):\n%s", diff)
	}
	if _, err := env.st.AddTrustline(apiCall(requestB), "ZT", w.ID, 2, zeroBalance(t, "usdc-xlm")); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("AddTrustline(active already) = %v, want ErrConflict", err)
	}
	env.unchanged(t, w.ID, 0, staged)
	if _, err := env.st.AddTrustline(apiCall(requestB), "ZT", w.ID, 2, zeroBalance(t, "eurc-xlm")); err != nil {
		t.Fatal(err)
	}
	if _, err := env.st.Rename(apiCall(requestC), "ZT", w.ID, 3, "SERV-REQ-R", "Renamed"); err != nil {
		t.Fatal(err)
	}
	// Three changes, and the posting of the balance the wallet was seeded with.
	if n := env.relay(t); n != 4 {
		t.Fatalf("relay moved %d events, want 4", n)
	}
	eurc := env.logOf(t, store.EntityTrustline, store.TrustlineID(w.ID, "eurc-xlm"))
	for _, tt := range []struct {
		got  []events.Event
		want []summary
	}{
		{env.logOf(t, store.EntityTrustline, w.ID+":usdc-xlm"), []summary{{"trustline.activated", "ZT", "trustline", w.ID + ":usdc-xlm", requestA, 1}}},
		{eurc, []summary{{"trustline.activated", "ZT", "trustline", w.ID + ":eurc-xlm", requestB, 1}}},
		{env.logOf(t, store.EntityLegacyWallet, w.ID), []summary{{"legacy_wallet.renamed", "ZT", "legacy_wallet", w.ID, requestC, 1}}},
	} {
		if diff := cmp.Diff(tt.want, summarize(tt.got)); diff != "" {
			t.Errorf("the log's events (-want +got):\n%s", diff)
		}
	}
	if len(eurc) == 1 && dataOf(t, eurc[0])["minimumBalanceXlm"] != "2" {
		t.Errorf("second trustline data %s, want a minimum balance of 2 XLM", eurc[0].Data)
	}
	if got, err := env.st.Wallet(context.Background(), "ZT", w.ID); err != nil || got.Subentries != 2 || len(got.AssetBalances) != 3 {
		t.Errorf("wallet after two trustlines: %+v, %v", got, err)
	}
}
