package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/outbox"
)

const (
	req1 = "0b6a9b8e-5d1c-4f3e-9a51-7c2d1e0f0001"
	req2 = "0b6a9b8e-5d1c-4f3e-9a51-7c2d1e0f0002"
)

// apiCall is the context of an API call with request-identifier id.
func apiCall(id string) context.Context {
	return logging.NewContext(context.Background(), logging.Request{ID: id, TraceID: strings.Repeat("a", 32), SpanID: strings.Repeat("b", 16), Flags: "01"})
}

// pending returns an address's event sequence and its events waiting for the relay.
func pending(t *testing.T, coll *mongo.Collection, id string) (int64, []events.Event) {
	t.Helper()
	var doc struct {
		EventSeq int64      `bson:"eventSeq"`
		Outbox   []bson.Raw `bson:"outbox"`
	}
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := make([]events.Event, 0, len(doc.Outbox))
	for _, raw := range doc.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return doc.EventSeq, out
}

// TestWhitelistedEvents: whitelisting and deactivating an address each stage one event to
// its company, with what endpoint 9 lists of it, numbered without a gap; an insert or a
// deactivation that does not land stages nothing; the relay hands the events to the log.
func TestWhitelistedEvents(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	coll := st.Outboxes()[0]
	if coll.Name() != "whitelisted_addresses" {
		t.Fatalf("Outboxes() = %s, want whitelisted_addresses", coll.Name())
	}
	eth := "0x4332a9b24fcCe803a4082F8764e8C40E1A4E4560"
	before := time.Now().UTC().Truncate(time.Millisecond)
	w, err := st.InsertWhitelisted(apiCall(req1), whitelisted("ZTEST", "ETH", eth, 0))
	if err != nil || w.EventSeq != 1 {
		t.Fatalf("InsertWhitelisted = %+v, %v; want event sequence 1", w, err)
	}
	if _, err := st.InsertWhitelisted(apiCall(req2), w); err != nil {
		t.Fatal(err) // a repeated execution: the stored address
	}
	if _, err := st.InsertWhitelisted(apiCall(req2), whitelisted("ZTEST", "ETH", strings.ToLower(eth), 1)); !errors.Is(err, apperr.ErrExists) {
		t.Fatalf("the same address again under another id: %v, want ErrExists", err)
	}
	seq, box := pending(t, coll, w.ID)
	if seq != 1 || len(box) != 1 {
		t.Fatalf("after the inserts: sequence %d, %d events; want 1 and 1", seq, len(box))
	}
	created := box[0]
	if created.Type != "whitelisted_address.created" || created.CompanyID != "ZTEST" || created.RequestID != req1 ||
		created.Entity != (events.Entity{Type: "whitelisted_address", ID: w.ID, Version: 1}) || created.Timestamp.Before(before) {
		t.Errorf("created event %+v", created)
	}
	var data map[string]any
	if err := json.Unmarshal(created.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"address": eth, "addressPurpose": []any{address.PurposeIncoming}, "status": address.StatusActive,
		"createdAt": "2026-03-01T12:00:00.123Z", "blockchain": "ETH", "blockchainId": "eth-eth"}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("created data (-want +got):\n%s", diff) // never the VASP, the beneficiary, the notes or the maker
	}

	stale := w
	stale.Version = 7
	if _, err := st.DeactivateWhitelisted(apiCall(req2), stale, "SERV-REQ-STALE"); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("a stale deactivation: %v, want ErrConflict", err)
	}
	if seq, box := pending(t, coll, w.ID); seq != 1 || len(box) != 1 {
		t.Fatalf("after a lost deactivation: sequence %d, %d events; want 1 and 1", seq, len(box))
	}
	done, err := st.DeactivateWhitelisted(apiCall(req2), w, "SERV-REQ-DEACTIVATE")
	if err != nil || done.EventSeq != 2 {
		t.Fatalf("DeactivateWhitelisted = %+v, %v; want event sequence 2", done, err)
	}
	_, box = pending(t, coll, w.ID)
	if len(box) != 2 || box[1].Type != "whitelisted_address.deactivated" || box[1].Entity.Version != 2 || box[1].RequestID != req2 ||
		!strings.Contains(string(box[1].Data), `"status":"DEACTIVATED","previousStatus":"ACTIVE"`) {
		t.Fatalf("after the deactivation: %+v", box)
	}

	log := events.NewCollection(coll.Database().Collection("events"))
	if err := mongodb.EnsureIndexes(ctx, coll.Database(), events.LogIndexes("events")); err != nil {
		t.Fatal(err)
	}
	if n, err := outbox.NewRelay(coll, log, nil).Once(ctx); err != nil || n != 2 {
		t.Fatalf("relay.Once = %d, %v; want 2", n, err)
	}
	logged, err := log.Events(ctx, "whitelisted_address", w.ID)
	if err != nil || len(logged) != 2 || logged[0].Type != "whitelisted_address.created" || logged[0].Entity.Version != 1 ||
		logged[1].Type != "whitelisted_address.deactivated" || logged[1].Entity.Version != 2 {
		t.Fatalf("the log: %+v, %v; want created then deactivated", logged, err)
	}
}
