package outbox_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/testdb"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/outbox"
)

// entity is a document with a state, a version guard and an outbox, as a service keeps one.
type entity struct {
	ID         string     `bson:"_id"`
	Status     string     `bson:"status"`
	Version    int64      `bson:"version"`
	EventSeq   int64      `bson:"eventSeq"`
	HasPending bool       `bson:"hasPending"`
	Outbox     []bson.Raw `bson:"outbox"`
}

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes):
// the relay's query and the log's reads.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(events.LogIndexes("events"), outbox.Index("requests")),
		map[string]string{"events aggregate {}": "the tests count the whole log"}))
}

var at = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// change moves the entity from its read version to status, with one event, in one
// conditional update; it reports whether the update landed.
func change(t *testing.T, coll *mongo.Collection, e entity, status, request string) bool {
	t.Helper()
	set, push, events, err := outbox.Stage(e.EventSeq, at, outbox.Draft{Type: "service_request." + strings.ToLower(status), CompanyID: "ZTEST",
		EntityType: "service_request", EntityID: e.ID, Data: &eventsv1.ServiceRequestEventData{Status: status, PreviousStatus: &e.Status},
		RequestID: request})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Entity.Version != e.EventSeq+1 {
		t.Fatalf("staged %+v, want one event of version %d", events, e.EventSeq+1)
	}
	set = append(bson.D{{Key: "status", Value: status}, {Key: "version", Value: e.Version + 1}}, set...)
	res, err := coll.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: e.ID}, {Key: "version", Value: e.Version}},
		bson.D{{Key: "$set", Value: set}, {Key: "$push", Value: push}})
	if err != nil {
		t.Fatal(err)
	}
	return res.ModifiedCount == 1
}

func read(t *testing.T, coll *mongo.Collection, id string) entity {
	t.Helper()
	var e entity
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

func setup(t *testing.T) (*mongo.Collection, events.Collection, *mongo.Collection) {
	t.Helper()
	db := testdb.New(t)
	coll := db.Collection("requests")
	if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: "SR-1"}, {Key: "status", Value: "PENDING"}, {Key: "version", Value: int64(1)}}); err != nil {
		t.Fatal(err)
	}
	log := db.Collection("events")
	if err := mongodb.EnsureIndexes(context.Background(), db, append(events.LogIndexes("events"), outbox.Index("requests"))); err != nil {
		t.Fatal(err)
	}
	return coll, events.NewCollection(log), log
}

// TestEventsLandWithTheirChange: a change and its event are one update; a writer that lost
// the race on the version records neither.
func TestEventsLandWithTheirChange(t *testing.T) {
	t.Parallel()
	coll, _, _ := setup(t)
	before := read(t, coll, "SR-1")
	if !change(t, coll, before, "CONFIRMED", "req-1") {
		t.Fatal("the first change did not land")
	}
	if change(t, coll, before, "REJECTED", "req-2") {
		t.Fatal("a change from a stale version landed")
	}
	after := read(t, coll, "SR-1")
	if after.Status != "CONFIRMED" || after.EventSeq != 1 || !after.HasPending || len(after.Outbox) != 1 {
		t.Fatalf("after the race: %+v, want CONFIRMED, one pending event of sequence 1", after)
	}
	if !strings.Contains(after.Outbox[0].String(), "CONFIRMED") || strings.Contains(after.Outbox[0].String(), "REJECTED") {
		t.Errorf("the outbox holds %s, want the winner's event only", after.Outbox[0])
	}
}

// TestRelayMovesEventsInOrderOnce: the relay moves every pending event, in version order,
// into the sink, empties the outbox and clears the mark; a second pass finds nothing, and a
// pass repeated after a crash (the sink holding the events already) duplicates nothing.
func TestRelayMovesEventsInOrderOnce(t *testing.T) {
	t.Parallel()
	coll, sink, log := setup(t)
	for _, status := range []string{"CONFIRMED", "AUTHORISED", "COMPLETED"} {
		if !change(t, coll, read(t, coll, "SR-1"), status, "") {
			t.Fatalf("change to %s did not land", status)
		}
	}
	pending := read(t, coll, "SR-1").Outbox
	relay := outbox.NewRelay(coll, sink, nil)
	if n, err := relay.Once(context.Background()); err != nil || n != 3 {
		t.Fatalf("Once = %d, %v; want 3 events", n, err)
	}
	if n, err := relay.Once(context.Background()); err != nil || n != 0 {
		t.Fatalf("second Once = %d, %v; want nothing", n, err)
	}
	e := read(t, coll, "SR-1")
	if len(e.Outbox) != 0 || e.HasPending {
		t.Errorf("after relaying: outbox %d events, pending %v; want empty and unmarked", len(e.Outbox), e.HasPending)
	}
	got, err := sink.Events(context.Background(), "service_request", "SR-1")
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for i, ev := range got {
		if ev.Entity.Version != int64(i+1) || ev.CompanyID != "ZTEST" || ev.SchemaVersion != events.SchemaVersion || !ev.Timestamp.Equal(at) {
			t.Errorf("event %d: %+v", i, ev)
		}
		var data eventsv1.ServiceRequestEventData
		if err := protojson.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("event %d data %s: %v", i, ev.Data, err)
		}
		statuses = append(statuses, data.GetStatus())
	}
	if strings.Join(statuses, ",") != "CONFIRMED,AUTHORISED,COMPLETED" {
		t.Errorf("relayed statuses %v, want CONFIRMED,AUTHORISED,COMPLETED", statuses)
	}
	// The same events relayed again (a crash between the sink and the removal) add nothing.
	if _, err := coll.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: "SR-1"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "outbox", Value: pending}, {Key: "hasPending", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := relay.Once(context.Background()); err != nil || n != 3 {
		t.Fatalf("relay after a crash = %d, %v; want the 3 events again", n, err)
	}
	if count, err := log.CountDocuments(context.Background(), bson.D{}); err != nil || count != 3 {
		t.Errorf("the log holds %d events (%v), want 3", count, err)
	}
}

// stagingSink is the log with a writer that changes the entity while the relay is busy with
// it: what it stages then must stay in the outbox, marked, for the next pass.
type stagingSink struct {
	events.Collection
	t      *testing.T
	coll   *mongo.Collection
	staged bool
}

func (s *stagingSink) Append(ctx context.Context, events []events.Event) error {
	if !s.staged {
		s.staged = true
		if !change(s.t, s.coll, read(s.t, s.coll, "SR-1"), "CANCELLED", "req-late") {
			s.t.Fatal("the concurrent change did not land")
		}
	}
	return s.Collection.Append(ctx, events)
}

func TestRelayKeepsWhatIsStagedMeanwhile(t *testing.T) {
	t.Parallel()
	coll, log, _ := setup(t)
	if !change(t, coll, read(t, coll, "SR-1"), "CONFIRMED", "") {
		t.Fatal("change did not land")
	}
	relay := outbox.NewRelay(coll, &stagingSink{Collection: log, t: t, coll: coll}, nil)
	if n, err := relay.Once(context.Background()); err != nil || n != 1 {
		t.Fatalf("Once = %d, %v; want 1", n, err)
	}
	e := read(t, coll, "SR-1")
	if len(e.Outbox) != 1 || !e.HasPending {
		t.Fatalf("after the pass: %d pending events, marked %v; want the late one, marked", len(e.Outbox), e.HasPending)
	}
	if n, err := relay.Once(context.Background()); err != nil || n != 1 {
		t.Fatalf("next Once = %d, %v; want the late event", n, err)
	}
	got, err := log.Events(context.Background(), "service_request", "SR-1")
	if err != nil || len(got) != 2 || got[1].RequestID != "req-late" || got[1].Entity.Version != 2 {
		t.Fatalf("log = %+v, %v; want both events, the late one second", got, err)
	}
}

func TestStageRefuses(t *testing.T) {
	t.Parallel()
	good := outbox.Draft{Type: "wallet.created", CompanyID: "ZTEST", EntityType: "wallet", EntityID: "W-1", Data: &eventsv1.WalletEventData{}}
	tests := []struct {
		name   string
		change func(*outbox.Draft)
	}{
		{"upper-case type", func(d *outbox.Draft) { d.Type = "Wallet.Created" }},
		{"undotted type", func(d *outbox.Draft) { d.Type = "created" }},
		{"no company", func(d *outbox.Draft) { d.CompanyID = "" }},
		{"no entity", func(d *outbox.Draft) { d.EntityID = "" }},
		{"data over 20 KB", func(d *outbox.Draft) {
			d.Data = &eventsv1.WalletEventData{Name: strings.Repeat("x", outbox.MaxDataBytes)}
		}},
		{"type data.proto does not declare", func(d *outbox.Draft) { d.Type = "wallet.renamed" }},
		{"data of another type", func(d *outbox.Draft) { d.Data = &eventsv1.AddressEventData{} }},
		{"no data", func(d *outbox.Draft) { d.Data = nil }},
	}
	for _, tt := range tests {
		d := good
		tt.change(&d)
		if _, _, _, err := outbox.Stage(0, at, d); err == nil {
			t.Errorf("%s: staged", tt.name)
		}
	}
	_, _, events, err := outbox.Stage(4, at, good, good)
	if err != nil || len(events) != 2 || events[0].Entity.Version != 5 || events[1].Entity.Version != 6 || events[0].ID == events[1].ID {
		t.Errorf("two drafts after sequence 4: %+v, %v; want versions 5 and 6, distinct ids", events, err)
	}
}

// TestAttachRecordsTheFirstEventsOnANewDocument: an insert carries its first events; a
// document type that has its own eventSeq or outbox fields gets Stage's in their place.
func TestAttachRecordsTheFirstEventsOnANewDocument(t *testing.T) {
	t.Parallel()
	doc := entity{ID: "R-9", Status: "CREATED", Version: 1, EventSeq: 7, Outbox: []bson.Raw{}}
	got, err := outbox.NewDocument(doc, at, outbox.Draft{Type: "service_request.created", CompanyID: "ZTEST", EntityType: "service_request", EntityID: "R-9",
		Data: &eventsv1.ServiceRequestEventData{Status: "CREATED"}})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range got {
		count[e.Key]++
	}
	for _, key := range []string{"_id", "status", outbox.FieldSeq, outbox.FieldOutbox, outbox.FieldPending} {
		if count[key] != 1 {
			t.Errorf("field %s appears %d times in %v, want once", key, count[key], got)
		}
	}
	coll := testdb.New(t).Collection("requests")
	if _, err := coll.InsertOne(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	stored := read(t, coll, "R-9")
	if stored.EventSeq != 1 || !stored.HasPending || len(stored.Outbox) != 1 {
		t.Fatalf("stored %+v, want event sequence 1 and one pending event", stored)
	}
	if e, err := events.Decode(stored.Outbox[0]); err != nil || e.Entity.Version != 1 || e.Type != "service_request.created" {
		t.Fatalf("outbox event = %+v, %v", e, err)
	}
	if outbox.RequestID(context.Background()) != "" {
		t.Fatal("a context outside an API call has a request id")
	}
}

// strictSink is a sink as the events service's intake is: it refuses a call of more than
// outbox.MaxAppend events, and every event of the refused entity.
type strictSink struct {
	events.Collection
	refuse string
	calls  []int
}

func (s *strictSink) Append(ctx context.Context, evs []events.Event) error {
	s.calls = append(s.calls, len(evs))
	if len(evs) > outbox.MaxAppend {
		return fmt.Errorf("%d events in one call", len(evs))
	}
	for _, e := range evs {
		if e.Entity.ID == s.refuse {
			return fmt.Errorf("refused %s", e.Entity.ID)
		}
	}
	return s.Collection.Append(ctx, evs)
}

// TestRelayHandsABigOutboxOverInChunksAndSkipsARefusedDocument: a document holding more
// events than one call may carry (a settlement with many audiences, staged while the events
// service was away) is relayed in chunks, in order; a document whose events are refused does
// not hold up the others.
func TestRelayHandsABigOutboxOverInChunksAndSkipsARefusedDocument(t *testing.T) {
	t.Parallel()
	coll, log, _ := setup(t)
	var drafts []outbox.Draft
	for i := range 250 {
		drafts = append(drafts, outbox.Draft{Type: "settlement.received", CompanyID: fmt.Sprintf("Z%03d", i), EntityType: "settlement", EntityID: fmt.Sprintf("T-1@Z%03d", i),
			Data: &eventsv1.SettlementEventData{SettlementCount: int32(i)}})
	}
	for _, id := range []string{"BIG", "BAD"} {
		doc, err := outbox.NewDocument(bson.D{{Key: "_id", Value: id}, {Key: "version", Value: int64(1)}}, at, drafts...)
		if id == "BAD" {
			doc, err = outbox.NewDocument(bson.D{{Key: "_id", Value: id}, {Key: "version", Value: int64(1)}}, at,
				outbox.Draft{Type: "settlement.received", CompanyID: "ZBAD", EntityType: "settlement", EntityID: "T-BAD", Data: &eventsv1.SettlementEventData{}})
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := coll.InsertOne(context.Background(), doc); err != nil {
			t.Fatal(err)
		}
	}
	sink := &strictSink{Collection: log, refuse: "T-BAD"}
	n, err := outbox.NewRelay(coll, sink, nil).Once(context.Background())
	if err == nil || !strings.Contains(err.Error(), "T-BAD") {
		t.Errorf("Once error = %v, want the refused document named", err)
	}
	if n != 250 {
		t.Fatalf("relayed %d events, want BIG's 250 despite BAD", n)
	}
	if fmt.Sprint(sink.calls) != "[1 100 100 50]" {
		t.Errorf("calls carried %v events, want BAD's one refused, then BIG in chunks of at most %d", sink.calls, outbox.MaxAppend)
	}
	if big := read(t, coll, "BIG"); len(big.Outbox) != 0 || big.HasPending {
		t.Errorf("BIG keeps %d events (pending %v) after relaying, want none", len(big.Outbox), big.HasPending)
	}
	if bad := read(t, coll, "BAD"); len(bad.Outbox) != 1 || !bad.HasPending {
		t.Errorf("BAD's refused event: outbox %d, pending %v; want kept for the next pass", len(bad.Outbox), bad.HasPending)
	}
}
