package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/compliance/store"
	"github.com/zcustody/suite/services/internal/outbox"
)

// eventsSetup is a store with VASP V1 ("One") in its registry, its activations collection
// (its one outbox) and the log the relay moves events to.
func eventsSetup(t *testing.T) (*store.Store, *mongo.Collection, events.Collection) {
	t.Helper()
	db := testdb.New(t)
	st := store.New(db)
	ctx := context.Background()
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mongodb.EnsureIndexes(ctx, db, events.LogIndexes("events")); err != nil {
		t.Fatal(err)
	}
	if err := st.PutVASP(ctx, compliance.VASP{ID: "V1", Name: "One", TravelRuleMethod: compliance.TravelRuleTrust, Active: true}); err != nil {
		t.Fatal(err)
	}
	outboxes := st.Outboxes()
	if len(outboxes) != 1 || outboxes[0].Name() != "vasp_activations" {
		t.Fatalf("Outboxes() = %v, want the activations collection", outboxes)
	}
	return st, outboxes[0], events.NewCollection(db.Collection("events"))
}

// requestID is an API request-identifier (a UUID, as logging keeps them).
func requestID(n int) string { return fmt.Sprintf("3f0e4b7a-8c1d-4e2f-9a6b-%012d", n) }

// call is the context of an API call with request-identifier id.
func call(id string) context.Context {
	return logging.NewContext(context.Background(), logging.Continue(id, ""))
}

// staged is the outbox of activation id as the relay would read it.
type staged struct {
	EventSeq   int64
	HasPending bool
	Version    int64
	History    int
	Events     []events.Event
}

func outboxOf(t *testing.T, coll *mongo.Collection, id string) staged {
	t.Helper()
	var doc struct {
		EventSeq   int64      `bson:"eventSeq"`
		HasPending bool       `bson:"hasPending"`
		Version    int64      `bson:"version"`
		History    []bson.Raw `bson:"history"`
		Outbox     []bson.Raw `bson:"outbox"`
	}
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := staged{EventSeq: doc.EventSeq, HasPending: doc.HasPending, Version: doc.Version, History: len(doc.History)}
	for _, raw := range doc.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		out.Events = append(out.Events, e)
	}
	return out
}

// TestActivationEvents: each change of a company's activation of a VASP stages one
// vasp.activated or vasp.deactivated event of the activation (companyId:vaspId), numbered
// 1, 2, 3 across relays, with the request id of the call and the activation's public fields;
// a repeat of the current state stages none. The relay moves them to the log in order and
// empties the outbox.
func TestActivationEvents(t *testing.T) {
	t.Parallel()
	st, coll, log := eventsSetup(t)
	ctx := context.Background()
	relay := outbox.NewRelay(coll, log, nil)
	steps := []struct {
		active  bool
		by      string
		rid     int
		changes bool
	}{
		{false, "maker@zt.example", 1, true},
		{false, "checker@zt.example", 2, false}, // a repeat
		{true, "checker@zt.example", 3, true},
		{false, "ZT", 4, true},
	}
	type wantEvent struct {
		typ  string
		rid  string
		data map[string]any
	}
	var want []wantEvent
	for i, s := range steps {
		act, err := st.SetActivation(call(requestID(s.rid)), "ZT", "V1", s.active, s.by)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if s.changes {
			typ := "vasp.deactivated"
			if s.active {
				typ = "vasp.activated"
			}
			want = append(want, wantEvent{typ, requestID(s.rid), map[string]any{"vaspId": "V1", "vaspName": "One", "valid": s.active,
				"updatedAt": apitime.Format(act.UpdatedAt), "updatedBy": s.by}})
		}
		if i == 0 { // the first event leaves before the others are staged: the sequence goes on
			if n, err := relay.Once(ctx); err != nil || n != 1 {
				t.Fatalf("first relay = %d, %v; want 1", n, err)
			}
		}
	}
	p := outboxOf(t, coll, "ZT:V1")
	if p.EventSeq != 3 || !p.HasPending || len(p.Events) != 2 {
		t.Fatalf("outbox %+v; want events 2 and 3 pending, eventSeq 3", p)
	}
	if n, err := relay.Once(ctx); err != nil || n != 2 {
		t.Fatalf("relay = %d, %v; want 2", n, err)
	}
	if after := outboxOf(t, coll, "ZT:V1"); len(after.Events) != 0 || after.HasPending || after.EventSeq != 3 {
		t.Errorf("after the relay: %+v; want an empty, unmarked outbox and the sequence kept", after)
	}
	logged, err := log.Events(ctx, "vasp_activation", "ZT:V1")
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != len(want) {
		t.Fatalf("the log holds %d events, want %d", len(logged), len(want))
	}
	if diff := cmp.Diff(p.Events, logged[1:]); diff != "" {
		t.Errorf("the log against the staged events (-staged +log):\n%s", diff)
	}
	for i, e := range logged {
		w := want[i]
		if e.Type != w.typ || e.Entity != (events.Entity{Type: "vasp_activation", ID: "ZT:V1", Version: int64(i + 1)}) ||
			e.CompanyID != "ZT" || e.RequestID != w.rid {
			t.Errorf("event %d: %+v; want %s of ZT:V1 version %d, request %s", i+1, e, w.typ, i+1, w.rid)
		}
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w.data, data); diff != "" {
			t.Errorf("event %d data (-want +got):\n%s", i+1, diff)
		}
	}

	// Another company's choice of the same VASP is another entity, with its own sequence; a
	// VASP the registry lacks is named by id only.
	if _, err := st.SetActivation(call(requestID(5)), "OTHER", "V1", true, "o@other.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetActivation(call(requestID(6)), "OTHER", "V9", false, "o@other.example"); err != nil {
		t.Fatal(err)
	}
	other := outboxOf(t, coll, "OTHER:V1")
	if len(other.Events) != 1 || other.Events[0].Entity.Version != 1 || other.Events[0].CompanyID != "OTHER" || other.Events[0].Type != "vasp.activated" {
		t.Errorf("another company's outbox %+v, want its own vasp.activated of version 1", other)
	}
	unknown := outboxOf(t, coll, "OTHER:V9")
	if len(unknown.Events) != 1 || strings.Contains(string(unknown.Events[0].Data), "vaspName") {
		t.Errorf("the activation of an unregistered VASP: %+v, want one event without a name", unknown)
	}
}

// TestConcurrentActivationChanges: of racing calls, only those whose conditional update
// lands stage an event: the events are exactly the changes the history records, numbered
// without gaps or repeats, each the opposite of the one before; identical first choices
// record one change and one event.
func TestConcurrentActivationChanges(t *testing.T) {
	t.Parallel()
	st, coll, log := eventsSetup(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := st.SetActivation(call(requestID(100+i)), "ZT", "V2", false, "x"); err != nil {
				t.Errorf("identical first choice %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if p := outboxOf(t, coll, "ZT:V2"); len(p.Events) != 1 || p.EventSeq != 1 || p.Version != 1 {
		t.Errorf("after 20 identical first choices: %+v; want one event", p)
	}

	for i := range 16 {
		wg.Go(func() {
			// Opposite choices racing: a call may give up with a conflict after its attempts,
			// having staged nothing.
			_, _ = st.SetActivation(call(requestID(200+i)), "ZT", "V1", i%2 == 0, fmt.Sprintf("user%d@zt.example", i))
		})
	}
	wg.Wait()
	p := outboxOf(t, coll, "ZT:V1")
	if int64(len(p.Events)) != p.EventSeq || p.EventSeq != p.Version || int64(p.History) != p.Version {
		t.Fatalf("%d events staged, eventSeq %d, version %d, %d history entries; want one event per recorded change",
			len(p.Events), p.EventSeq, p.Version, p.History)
	}
	if _, err := outbox.NewRelay(coll, log, nil).Once(ctx); err != nil {
		t.Fatal(err)
	}
	logged, err := log.Events(ctx, "vasp_activation", "ZT:V1")
	if err != nil {
		t.Fatal(err)
	}
	history, err := st.ActivationHistory(ctx, "ZT", "V1")
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != len(history) {
		t.Fatalf("%d events relayed for %d changes", len(logged), len(history))
	}
	for i, e := range logged {
		var data struct {
			Valid     bool   `json:"valid"`
			UpdatedBy string `json:"updatedBy"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if e.Entity.Version != int64(i+1) || data.Valid != history[i].Active || data.UpdatedBy != history[i].By {
			t.Errorf("event %d: version %d, %+v; want version %d and the change %+v", i+1, e.Entity.Version, data, i+1, history[i])
		}
		if i > 0 && history[i].Active == history[i-1].Active {
			t.Errorf("change %d repeats the state of the one before", i+1)
		}
	}
}
