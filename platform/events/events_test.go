package events_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/testdb"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes).
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, events.LogIndexes("events"), nil))
}

func event(id string, version int64, status string) events.Event {
	return events.Event{ID: id, Type: "settlement.status_updated", Timestamp: time.Date(2026, 11, 26, 9, 0, 0, int(version)*1e6, time.UTC),
		CompanyID: "ZTEST", Entity: events.Entity{Type: "settlement", ID: "STL-1", Version: version},
		Data: json.RawMessage(`{"status":"` + status + `"}`), RequestID: "req-" + id, SchemaVersion: events.SchemaVersion}
}

// TestLogKeepsOneEventPerVersion: the log keeps an entity's events in version order, takes
// a repeat without a change, and refuses a different event claiming a version it holds.
func TestLogKeepsOneEventPerVersion(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	if err := mongodb.EnsureIndexes(context.Background(), db, events.LogIndexes("events")); err != nil {
		t.Fatal(err)
	}
	log := events.NewCollection(db.Collection("events"))
	second, first := event("evt_b", 2, "SETTLEMENT_PAY_OUT"), event("evt_a", 1, "SETTLEMENT_PAY_IN")
	if err := log.Append(context.Background(), []events.Event{first, second}); err != nil {
		t.Fatal(err)
	}
	if err := log.Append(context.Background(), []events.Event{second}); err != nil {
		t.Errorf("a repeated event: %v, want it accepted", err)
	}
	if err := log.Append(context.Background(), []events.Event{event("evt_c", 2, "SETTLEMENT_FAILED")}); err == nil {
		t.Error("a second event of settlement STL-1 version 2 was accepted")
	}
	got, err := log.Events(context.Background(), "settlement", "STL-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "evt_a" || got[1].ID != "evt_b" {
		t.Fatalf("log = %+v, want evt_a then evt_b", got)
	}
	for i, want := range []events.Event{first, second} {
		g := got[i]
		if g.Type != want.Type || !g.Timestamp.Equal(want.Timestamp) || g.CompanyID != want.CompanyID || g.Entity != want.Entity ||
			string(g.Data) != string(want.Data) || g.RequestID != want.RequestID || g.SchemaVersion != want.SchemaVersion {
			t.Errorf("event %d read back as %+v, want %+v", i, g, want)
		}
	}
}

// TestDecodeReadsDocument: an event survives Document and Decode byte for byte in its data.
func TestDecodeReadsDocument(t *testing.T) {
	t.Parallel()
	e := event("evt_x", 3, "SETTLEMENT_COMPLETED")
	e.Data = json.RawMessage(`{"b":1,  "a":"Zürich"}`)
	raw, err := bson.Marshal(e.Document())
	if err != nil {
		t.Fatal(err)
	}
	back, err := events.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Data) != string(e.Data) || back.Entity != e.Entity || back.ID != e.ID {
		t.Errorf("Decode(Document(e)) = %+v, want %+v", back, e)
	}
	if _, err := events.Decode(bson.Raw{1, 2, 3}); err == nil {
		t.Error("Decode of garbage succeeded")
	}
}
