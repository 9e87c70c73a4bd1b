package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/events/store"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes).
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, store.Indexes(), map[string]string{
		"sequencers find {} sort _id": "the retention pass lists every company's sequencer by _id",
		"inbox aggregate {}":          "the tests count what is left in the inbox",
	}))
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)} }

// newStore returns a store on db with its indexes.
func newStore(t *testing.T, db *mongo.Database, owner string, lease time.Duration, now func() time.Time) *store.Store {
	t.Helper()
	st := store.New(db, owner, lease, now)
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// event makes an event of company about entity at version.
func event(company, entity string, version int64) pevents.Event {
	return pevents.Event{ID: "evt_" + uuid.Must(uuid.NewV7()).String(), Type: "settlement.settled", Timestamp: time.Now().UTC().Truncate(time.Millisecond),
		CompanyID: company, Entity: pevents.Entity{Type: "settlement", ID: entity, Version: version},
		Data: json.RawMessage(fmt.Sprintf(`{"id":%q,"version":%d}`, entity, version)), SchemaVersion: pevents.SchemaVersion}
}

// all reads every committed event of company.
func all(t *testing.T, st *store.Store, company string) []store.Logged {
	t.Helper()
	head, err := st.Head(context.Background(), company)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := st.Read(context.Background(), store.Query{CompanyID: company, After: head.Floor - 1, Below: head.Next, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkGapless fails unless logged holds positions from..from+len-1 in order.
func checkGapless(t *testing.T, logged []store.Logged, from int64) {
	t.Helper()
	for i, l := range logged {
		if l.Seq != from+int64(i) {
			t.Fatalf("position %d is %d, want %d (positions %v)", i, l.Seq, from+int64(i), seqs(logged))
		}
	}
}

func seqs(logged []store.Logged) []int64 {
	out := make([]int64, len(logged))
	for i, l := range logged {
		out[i] = l.Seq
	}
	return out
}

func sequence(t *testing.T, st *store.Store) int {
	t.Helper()
	n, err := st.Sequence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAppendIsIdempotentAndSequencingIsGapless(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	c := newClock()
	st := newStore(t, db, "one", time.Minute, c.now)
	a1, a2, b1 := event("ZA", "S-1", 1), event("ZA", "S-1", 2), event("ZB", "S-9", 1)
	if n, err := st.Append(ctx, []pevents.Event{a1, a2, b1}); err != nil || n != 3 {
		t.Fatalf("Append = %d, %v; want 3 new", n, err)
	}
	if n, err := st.Append(ctx, []pevents.Event{a1}); err != nil || n != 0 {
		t.Fatalf("Append again = %d, %v; want 0 new, no error", n, err)
	}
	if n := sequence(t, st); n != 3 {
		t.Fatalf("Sequence placed %d, want 3", n)
	}
	za := all(t, st, "ZA")
	checkGapless(t, za, 1)
	if len(za) != 2 || za[0].ID != a1.ID || za[1].ID != a2.ID || string(za[1].Data) != string(a2.Data) {
		t.Fatalf("ZA's log = %+v, want a1, a2 with their data", za)
	}
	if zb := all(t, st, "ZB"); len(zb) != 1 || zb[0].ID != b1.ID || zb[0].Seq != 1 {
		t.Fatalf("ZB's log = %+v, want b1 at 1: each company has its own positions", zb)
	}
	// A relay repeating an event after it was placed (its outbox removal was lost) changes
	// nothing.
	if _, err := st.Append(ctx, []pevents.Event{a2, event("ZA", "S-2", 1)}); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	za = all(t, st, "ZA")
	checkGapless(t, za, 1)
	if len(za) != 3 {
		t.Fatalf("ZA's log has %d events after a repeat and one new, want 3", len(za))
	}
	if n, _ := db.Collection("inbox").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("the inbox holds %d events after sequencing, want 0", n)
	}
}

func TestEntityOrderHoldsWhenAppendsRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, testdb.New(t), "one", time.Minute, newClock().now)
	v1, v2, v3, other := event("ZA", "S-1", 1), event("ZA", "S-1", 2), event("ZA", "S-1", 3), event("ZA", "S-2", 1)
	// Version 3 and 2 arrive before 1 (all in the same pass).
	if _, err := st.Append(ctx, []pevents.Event{v3, other, v2, v1}); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	var got []string
	for _, l := range all(t, st, "ZA") {
		got = append(got, fmt.Sprintf("%s/%d", l.Entity.ID, l.Entity.Version))
	}
	want := []string{"S-1/1", "S-2/1", "S-1/2", "S-1/3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("log order = %v, want %v (S-1 in version order in its own slots)", got, want)
	}
}

func TestOneWriterPerCompanyUnderALease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	c := newClock()
	first := newStore(t, db, "first", 10*time.Second, c.now)
	second := newStore(t, db, "second", 10*time.Second, c.now)
	if _, err := first.Append(ctx, []pevents.Event{event("ZA", "S-1", 1)}); err != nil {
		t.Fatal(err)
	}
	sequence(t, first)
	if _, err := second.Append(ctx, []pevents.Event{event("ZA", "S-1", 2)}); err != nil {
		t.Fatal(err)
	}
	if n := sequence(t, second); n != 0 {
		t.Fatalf("the second replica placed %d events of a company the first holds, want 0", n)
	}
	// The first stops renewing (it died); once its lease ran out the second takes over.
	c.add(11 * time.Second)
	if n := sequence(t, second); n != 1 {
		t.Fatalf("the second replica placed %d after the lease expired, want 1", n)
	}
	logged := all(t, first, "ZA")
	checkGapless(t, logged, 1)
	if len(logged) != 2 {
		t.Fatalf("log = %v, want 2 events", seqs(logged))
	}
}

func TestATakeoverAfterACrashLeavesNoGapAndNoRepeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	c := newClock()
	st := newStore(t, db, "first", 10*time.Second, c.now)
	placed := event("ZA", "S-1", 1)
	if _, err := st.Append(ctx, []pevents.Event{placed}); err != nil {
		t.Fatal(err)
	}
	// The first writer crashed right after placing the event at position 1: the watermark
	// did not move and the event is still in the inbox.
	doc := append(bson.D{{Key: "_id", Value: placed.ID}, {Key: "seq", Value: int64(1)}, {Key: "logged", Value: c.now()}}, placed.Document()...)
	if _, err := db.Collection("log").InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("sequencers").InsertOne(ctx, bson.D{{Key: "_id", Value: "ZA"}, {Key: "owner", Value: "crashed"},
		{Key: "until", Value: c.now().Add(time.Second)}, {Key: "next", Value: int64(1)}, {Key: "floor", Value: int64(1)}}); err != nil {
		t.Fatal(err)
	}
	if got := all(t, st, "ZA"); len(got) != 0 {
		t.Fatalf("readers see %d events above the watermark, want none", len(got))
	}
	later := event("ZA", "S-1", 2)
	if _, err := st.Append(ctx, []pevents.Event{later}); err != nil {
		t.Fatal(err)
	}
	c.add(2 * time.Second)
	sequence(t, st)
	logged := all(t, st, "ZA")
	checkGapless(t, logged, 1)
	if len(logged) != 2 || logged[0].ID != placed.ID || logged[1].ID != later.ID {
		t.Fatalf("log after the takeover = %+v, want the placed event once at 1 and the later at 2", logged)
	}
}

func TestAnEventClaimingATakenVersionIsSetAside(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	st := newStore(t, db, "one", time.Minute, newClock().now)
	if _, err := st.Append(ctx, []pevents.Event{event("ZA", "S-1", 1)}); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	impostor, next := event("ZA", "S-1", 1), event("ZA", "S-1", 2)
	if _, err := st.Append(ctx, []pevents.Event{impostor, next}); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	logged := all(t, st, "ZA")
	checkGapless(t, logged, 1)
	if len(logged) != 2 || logged[1].ID != next.ID {
		t.Fatalf("log = %+v, want the first event and the next one; the impostor held nothing up", logged)
	}
	var rejected bson.M
	if err := db.Collection("rejected").FindOne(ctx, bson.D{{Key: "_id", Value: impostor.ID}}).Decode(&rejected); err != nil {
		t.Fatalf("the impostor is not set aside: %v", err)
	}
}

func TestReadersStopAtTheWatermarkAndPagesFollowOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, testdb.New(t), "one", time.Minute, newClock().now)
	var evs []pevents.Event
	for i := range 5 {
		evs = append(evs, event("ZA", fmt.Sprintf("S-%d", i), 1))
	}
	if _, err := st.Append(ctx, evs); err != nil {
		t.Fatal(err)
	}
	sequence(t, st)
	page, more, err := st.Read(ctx, store.Query{CompanyID: "ZA", After: 0, Below: 6, Limit: 2})
	if err != nil || len(page) != 2 || !more || page[1].Seq != 2 {
		t.Fatalf("first page = %v, more %v, %v; want 1, 2 and more", seqs(page), more, err)
	}
	page, more, err = st.Read(ctx, store.Query{CompanyID: "ZA", After: 2, Below: 4, Limit: 10})
	if err != nil || len(page) != 1 || more || page[0].Seq != 3 {
		t.Fatalf("page below watermark 4 = %v, more %v, %v; want 3 only", seqs(page), more, err)
	}
	page, _, err = st.Read(ctx, store.Query{CompanyID: "ZA", After: 0, Below: 6, Limit: 10, EntityType: "settlement", EntityID: "S-3", Types: []string{"settlement.settled"}})
	if err != nil || len(page) != 1 || page[0].Entity.ID != "S-3" {
		t.Fatalf("one entity's events = %+v, %v", page, err)
	}
	if page, _, _ := st.Read(ctx, store.Query{CompanyID: "ZB", After: 0, Below: 6, Limit: 10}); len(page) != 0 {
		t.Fatalf("another company reads %d of ZA's events", len(page))
	}
}

func TestPruneMovesTheFloorBeforeDeleting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClock()
	st := newStore(t, testdb.New(t), "one", time.Minute, c.now)
	for i := range 3 {
		if _, err := st.Append(ctx, []pevents.Event{event("ZA", "S-1", int64(i+1))}); err != nil {
			t.Fatal(err)
		}
		sequence(t, st)
		c.add(24 * time.Hour)
	}
	// Events 1 and 2 were logged more than 30 hours before now.
	n, err := st.Prune(ctx, "ZA", c.now().Add(-30*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2 deleted", n, err)
	}
	head, err := st.Head(ctx, "ZA")
	if err != nil || head.Floor != 3 || head.Next != 4 {
		t.Fatalf("head = %+v, %v; want floor 3, next 4", head, err)
	}
	if companies, err := st.Companies(ctx); err != nil || len(companies) != 1 || companies[0] != "ZA" {
		t.Fatalf("Companies = %v, %v", companies, err)
	}
}

func TestAnUnreadableInboxDocumentHoldsNobodyUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	st := newStore(t, db, "one", time.Minute, newClock().now)
	// Arrived first, and not an event.
	if _, err := db.Collection("inbox").InsertOne(ctx, bson.D{{Key: "_id", Value: "evt_broken"}, {Key: "arrived", Value: time.Unix(0, 0).UTC()},
		{Key: "ord", Value: 0}, {Key: "entity", Value: "not a document"}}); err != nil {
		t.Fatal(err)
	}
	good := event("ZA", "S-1", 1)
	if _, err := st.Append(ctx, []pevents.Event{good}); err != nil {
		t.Fatal(err)
	}
	if n := sequence(t, st); n != 1 {
		t.Fatalf("placed %d, want the good event despite the broken one", n)
	}
	if n, _ := db.Collection("rejected").CountDocuments(ctx, bson.D{{Key: "_id", Value: "evt_broken"}}); n != 1 {
		t.Fatal("the broken document is not set aside")
	}
}

// TestAnEntitysVersionWaitsForItsPredecessor: an entity's version 2 that reached the inbox
// with an earlier arrival time than its version 1 (two replicas of the events service, their
// clocks apart) and is sequenced in a pass without it waits in the inbox: the log keeps the
// entity in version order, and the other events go on meanwhile.
func TestAnEntitysVersionWaitsForItsPredecessor(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	behind, ahead := newClock(), newClock()
	ahead.add(time.Minute)
	slow, fast := newStore(t, db, "one", time.Minute, behind.now), newStore(t, db, "two", time.Minute, ahead.now)
	v1, v2 := event("ZA", "S-1", 1), event("ZA", "S-1", 2)
	// v1 reaches the replica whose clock is ahead; then v2 the one behind, with more events
	// than one pass takes after it.
	if _, err := fast.Append(context.Background(), []pevents.Event{v1}); err != nil {
		t.Fatal(err)
	}
	batch := []pevents.Event{v2}
	for i := range store.SequenceBatch {
		batch = append(batch, event("ZA", fmt.Sprintf("F-%d", i), 1))
	}
	if _, err := slow.Append(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if n := sequence(t, slow); n != store.SequenceBatch-1 {
		t.Fatalf("the first pass placed %d, want the %d other events of its batch (v2 waits)", n, store.SequenceBatch-1)
	}
	for sequence(t, slow) > 0 {
	}
	seq := map[string]int64{}
	for _, l := range all(t, slow, "ZA") {
		seq[l.ID] = l.Seq
	}
	if len(seq) != store.SequenceBatch+2 || seq[v1.ID] == 0 || seq[v2.ID] == 0 || seq[v1.ID] > seq[v2.ID] {
		t.Fatalf("%d events logged; v1 at %d, v2 at %d: want all, v1 before v2", len(seq), seq[v1.ID], seq[v2.ID])
	}
}
