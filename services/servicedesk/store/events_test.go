package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
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
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/outbox"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/policy"
	"github.com/zcustody/suite/services/servicedesk/store"
)

const (
	maker   = "maker@zt.example"
	checker = "checker@zt.example"
)

var created = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// eventsSetup is a store, its requests collection (its one outbox) and the log the relay
// moves events to.
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
	outboxes := st.Outboxes()
	if len(outboxes) != 1 || outboxes[0].Name() != "requests" {
		t.Fatalf("Outboxes() = %v, want the requests collection", outboxes)
	}
	return st, outboxes[0], events.NewCollection(db.Collection("events"))
}

// call is the context of an API call with request-identifier id; none ("") is the sweeper's.
func call(id string) context.Context {
	if id == "" {
		return context.Background()
	}
	return logging.NewContext(context.Background(), logging.Continue(id, ""))
}

// requestIDs are API request-identifiers (UUIDs, as logging keeps them).
func requestID(n int) string { return fmt.Sprintf("3f0e4b7a-8c1d-4e2f-9a6b-%012d", n) }

// create stores a new request of service id for the maker, in an API call with request id rid.
func create(t *testing.T, st *store.Store, serviceID, id, rid string) servicedesk.Request {
	t.Helper()
	svc, ok := servicedesk.Lookup(serviceID)
	if !ok {
		t.Fatalf("no service %s", serviceID)
	}
	payload := `{"walletId":"W-1"}`
	r := servicedesk.NewRequest(id, servicedesk.Maker{Email: maker, CompanyID: "ZT", CompanyName: "ZT Ltd"}, svc,
		"e2e-"+id, payload, servicedesk.BodyHash(svc.ID, payload), created)
	r.EntityIDs = []string{"W-1"}
	if err := st.InsertRequest(call(rid), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// pendingOf is the outbox of request id as the relay would read it.
type pendingOf struct {
	EventSeq   int64
	HasPending bool
	Events     []events.Event
}

func pending(t *testing.T, coll *mongo.Collection, id string) pendingOf {
	t.Helper()
	var doc struct {
		EventSeq   int64      `bson:"eventSeq"`
		HasPending bool       `bson:"hasPending"`
		Outbox     []bson.Raw `bson:"outbox"`
	}
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := pendingOf{EventSeq: doc.EventSeq, HasPending: doc.HasPending}
	for _, raw := range doc.Outbox {
		e, err := events.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		out.Events = append(out.Events, e)
	}
	return out
}

// step is one change of a request: the transition it asks for, in the API call with request
// id rid (none for the system's).
type step struct {
	rid  string
	next func(t *testing.T, r servicedesk.Request) servicedesk.Transition
}

// decide is a person's signed decision, through the domain's four-eyes rule.
func decide(email, role, typ string) func(*testing.T, servicedesk.Request) servicedesk.Transition {
	return func(t *testing.T, r servicedesk.Request) servicedesk.Transition {
		t.Helper()
		tr, err := servicedesk.Decide(servicedesk.Actor{Email: email, CompanyID: "ZT", Roles: []string{role}}, r,
			servicedesk.Decision{Type: typ, RejectReason: "not this one"})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}

// system is the system's move of a request to status (execution, expiry), or the maker's
// cancellation.
func system(to string, action int32) func(*testing.T, servicedesk.Request) servicedesk.Transition {
	return func(_ *testing.T, r servicedesk.Request) servicedesk.Transition {
		tr := servicedesk.Transition{From: []string{r.Status}, To: to, Action: action, Role: servicedesk.RoleSystem, Actor: "system"}
		if to == servicedesk.StatusFailed {
			tr.Reason = "wallet deactivated"
		}
		if action == servicedesk.ActionCancelled {
			tr.Role, tr.Actor, tr.Updated = servicedesk.RoleMaker, maker, maker
		}
		return tr
	}
}

var (
	confirm  = decide(maker, servicedesk.RoleMaker, servicedesk.TypeConfirm)
	approve  = decide(checker, servicedesk.RoleChecker, servicedesk.TypeApprove)
	reject   = decide(checker, servicedesk.RoleChecker, servicedesk.TypeReject)
	complete = system(servicedesk.StatusCompleted, servicedesk.ActionCompleted)
	fail     = system(servicedesk.StatusFailed, servicedesk.ActionFailed)
	expire   = system(servicedesk.StatusExpired, servicedesk.ActionExpired)
	cancel   = system(servicedesk.StatusCancelled, servicedesk.ActionCancelled)
)

// TestRequestEventsFollowTheLifecycle: every status a request enters stages one event in
// the same update, numbered 1, 2, 3... for the request, with the company, the request id of
// the API call that made the change (none for the system's) and the request's public fields;
// the relay moves them to the log in that order and empties the outbox.
func TestRequestEventsFollowTheLifecycle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		service string
		steps   []step
		want    []string // event types after service_request.created
	}{
		{"approved and completed", catalog.CustodyWalletCreate,
			[]step{{requestID(2), confirm}, {requestID(3), approve}, {requestID(3), complete}},
			[]string{"confirmed", "authorised", "completed"}},
		{"no checker needed, then failed by its owner", catalog.BeneficiaryCreate,
			[]step{{requestID(2), confirm}, {"", fail}},
			[]string{"authorised", "failed"}},
		{"rejected", catalog.CustodyWalletCreate, []step{{requestID(2), confirm}, {requestID(3), reject}}, []string{"confirmed", "rejected"}},
		{"cancelled before its confirmation", catalog.CustodyWalletCreate, []step{{requestID(2), cancel}}, []string{"cancelled"}},
		{"cancelled awaiting a checker", catalog.CustodyWalletCreate, []step{{requestID(2), confirm}, {requestID(3), cancel}}, []string{"confirmed", "cancelled"}},
		{"expired by the sweeper", catalog.CustodyWalletCreate, []step{{requestID(2), confirm}, {"", expire}}, []string{"confirmed", "expired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, coll, log := eventsSetup(t)
			ctx := context.Background()
			r := create(t, st, tt.service, "SERV-REQ-1", requestID(1))
			rids := []string{requestID(1)}
			statuses := []string{servicedesk.StatusPendingConfirmation}
			at := created
			for i, s := range tt.steps {
				at = at.Add(time.Minute)
				var err error
				if r, err = st.Apply(call(s.rid), r, s.next(t, r), at); err != nil {
					t.Fatalf("step %d: %v", i+1, err)
				}
				rids, statuses = append(rids, s.rid), append(statuses, r.Status)
			}
			wantTypes := []string{"service_request.created"}
			for _, w := range tt.want {
				wantTypes = append(wantTypes, "service_request."+w)
			}
			p := pending(t, coll, r.ID)
			if p.EventSeq != int64(len(wantTypes)) || !p.HasPending {
				t.Errorf("eventSeq %d, pending %v; want %d, marked", p.EventSeq, p.HasPending, len(wantTypes))
			}
			var gotTypes []string
			for i, e := range p.Events {
				gotTypes = append(gotTypes, e.Type)
				want := events.Entity{Type: "service_request", ID: r.ID, Version: int64(i + 1)}
				if e.Entity != want || e.CompanyID != "ZT" || e.RequestID != rids[i] || e.SchemaVersion != events.SchemaVersion ||
					!strings.HasPrefix(e.ID, "evt_") {
					t.Errorf("event %d: %+v; want entity %+v of ZT, request %q", i+1, e, want, rids[i])
				}
				if wantAt := created.Add(time.Duration(i) * time.Minute); !e.Timestamp.Equal(wantAt) {
					t.Errorf("event %d at %s, want the change's time %s", i+1, e.Timestamp, wantAt)
				}
				var data map[string]any
				if err := json.Unmarshal(e.Data, &data); err != nil {
					t.Fatal(err)
				}
				previous := ""
				if i > 0 {
					previous = statuses[i-1]
				}
				gotPrevious, _ := data["previousStatus"].(string) // none for the creation
				if data["requestId"] != r.ID || data["status"] != statuses[i] || gotPrevious != previous ||
					data["serviceId"] != tt.service || data["createdBy"] != maker {
					t.Errorf("event %d data %s; want request %s, status %q after %q", i+1, e.Data, r.ID, statuses[i], previous)
				}
			}
			if diff := cmp.Diff(wantTypes, gotTypes); diff != "" {
				t.Fatalf("event types (-want +got):\n%s", diff)
			}

			relay := outbox.NewRelay(coll, log, nil)
			if n, err := relay.Once(ctx); err != nil || n != len(wantTypes) {
				t.Fatalf("Once = %d, %v; want %d events", n, err, len(wantTypes))
			}
			if n, err := relay.Once(ctx); err != nil || n != 0 {
				t.Errorf("second Once = %d, %v; want nothing left", n, err)
			}
			if after := pending(t, coll, r.ID); len(after.Events) != 0 || after.HasPending || after.EventSeq != p.EventSeq {
				t.Errorf("after the relay: %+v; want an empty, unmarked outbox and the sequence kept", after)
			}
			logged, err := log.Events(ctx, "service_request", r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p.Events, logged); diff != "" {
				t.Errorf("the log against the staged events (-staged +log):\n%s", diff)
			}
		})
	}
}

// TestRequestEventData: the data of each event is the request's public fields after the
// change, as the REST API shows them (times as the contract formats them), with the makers
// and checkers by e-mail and without the payload; the sequence goes on across relays.
func TestRequestEventData(t *testing.T) {
	t.Parallel()
	st, coll, log := eventsSetup(t)
	ctx := context.Background()
	relay := outbox.NewRelay(coll, log, nil)
	r := create(t, st, catalog.CustodyWalletCreate, "SERV-REQ-DATA", requestID(1))
	for i, s := range []step{{requestID(2), confirm}, {requestID(3), approve}, {"", complete}} {
		if n, err := relay.Once(ctx); err != nil || n != 1 {
			t.Fatalf("relay before step %d = %d, %v; want the last event", i+1, n, err)
		}
		var err error
		if r, err = st.Apply(call(s.rid), r, s.next(t, r), created.Add(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := relay.Once(ctx); err != nil {
		t.Fatal(err)
	}
	logged, err := log.Events(ctx, "service_request", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"requestId": "SERV-REQ-DATA", "serviceId": catalog.CustodyWalletCreate, "product": r.Product,
		"productId": "0x0013", "requestType": r.RequestType, "endToEndId": "e2e-SERV-REQ-DATA", "companyId": "ZT",
		"entityIds": []any{"W-1"}, "createdBy": maker, "createdAt": "2026-11-26T09:00:00.000Z", "expiresAt": "2026-12-03T09:00:00.000Z",
		"policyVersion": "0", "rule": "default"} // a request made before policies: the default policy's rule
	want := []map[string]any{
		{"status": "PENDING CONFIRMATION", "updatedBy": maker, "checkers": []any{}, "updatedAt": "2026-11-26T09:00:00.000Z", "approvalsMissing": float64(1)},
		{"status": "PENDING AUTHORISATION", "previousStatus": "PENDING CONFIRMATION", "updatedBy": maker, "checkers": []any{},
			"updatedAt": "2026-11-26T09:01:00.000Z", "approvalsMissing": float64(1)},
		{"status": "AUTHORISED", "previousStatus": "PENDING AUTHORISATION", "updatedBy": checker, "checkers": []any{checker},
			"updatedAt": "2026-11-26T09:02:00.000Z", "approvalsMissing": float64(0)},
		{"status": "COMPLETED", "previousStatus": "AUTHORISED", "updatedBy": checker, "checkers": []any{checker},
			"updatedAt": "2026-11-26T09:03:00.000Z", "approvalsMissing": float64(0)},
	}
	if len(logged) != len(want) {
		t.Fatalf("the log holds %d events, want %d", len(logged), len(want))
	}
	for i, e := range logged {
		if e.Entity.Version != int64(i+1) {
			t.Errorf("event %d has version %d", i+1, e.Entity.Version)
		}
		if len(e.Data) > outbox.MaxDataBytes/10 {
			t.Errorf("event %d data is %d bytes, want well under %d", i+1, len(e.Data), outbox.MaxDataBytes)
		}
		var got map[string]any
		if err := json.Unmarshal(e.Data, &got); err != nil {
			t.Fatal(err)
		}
		w := map[string]any{}
		for k, v := range base {
			w[k] = v
		}
		for k, v := range want[i] {
			w[k] = v
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("event %d (%s) data (-want +got):\n%s", i+1, e.Type, diff)
		}
	}
}

// TestLostChangesStageNothing: a change from a stale version, the losers of a race and a
// create that loses to the same endToEndId record no event; the winner's event alone is
// staged, with the next version.
func TestLostChangesStageNothing(t *testing.T) {
	t.Parallel()
	st, coll, _ := eventsSetup(t)
	ctx := context.Background()
	r := create(t, st, catalog.CustodyWalletCreate, "SERV-REQ-RACE", requestID(1))
	confirmed, err := st.Apply(call(requestID(2)), r, confirm(t, r), created.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(call(requestID(9)), r, cancel(t, r), created.Add(2*time.Minute)); !errors.Is(err, apperr.ErrConflict) {
		t.Fatalf("a cancellation from the stale version: %v, want ErrConflict", err)
	}
	// Racing decisions on the confirmed request: exactly one lands.
	moves := []func(*testing.T, servicedesk.Request) servicedesk.Transition{approve, reject, cancel, approve, reject, cancel}
	var wg sync.WaitGroup
	won := make(chan string, len(moves))
	for i, next := range moves {
		tr := next(t, confirmed)
		wg.Go(func() {
			got, err := st.Apply(call(requestID(10+i)), confirmed, tr, created.Add(3*time.Minute))
			if err == nil {
				won <- got.Status
			} else if !errors.Is(err, apperr.ErrConflict) {
				t.Errorf("racing change %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(won)
	var winners []string
	for s := range won {
		winners = append(winners, s)
	}
	if len(winners) != 1 {
		t.Fatalf("%d racing changes landed (%v), want 1", len(winners), winners)
	}
	// The same endToEndId again: the create loses, and stages nothing anywhere.
	svc, _ := servicedesk.Lookup(catalog.CustodyWalletCreate)
	dup := servicedesk.NewRequest("SERV-REQ-DUP", servicedesk.Maker{Email: maker, CompanyID: "ZT", CompanyName: "ZT Ltd"}, svc,
		"e2e-SERV-REQ-RACE", `{}`, "h", created)
	if err := st.InsertRequest(ctx, dup); !errors.Is(err, apperr.ErrExists) {
		t.Fatalf("a second create with the same endToEndId: %v, want ErrExists", err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: "SERV-REQ-DUP"}}); err != nil || n != 0 {
		t.Errorf("the losing create left %d documents (%v)", n, err)
	}

	p := pending(t, coll, r.ID)
	var types []string
	for i, e := range p.Events {
		types = append(types, e.Type)
		if e.Entity.Version != int64(i+1) {
			t.Errorf("event %d (%s) has version %d", i+1, e.Type, e.Entity.Version)
		}
	}
	winner, _ := map[string]string{servicedesk.StatusAuthorised: "service_request.authorised",
		servicedesk.StatusRejected: "service_request.rejected", servicedesk.StatusCancelled: "service_request.cancelled"}[winners[0]]
	want := []string{"service_request.created", "service_request.confirmed", winner}
	if diff := cmp.Diff(want, types); diff != "" || p.EventSeq != 3 {
		t.Errorf("outbox types (-want +got):\n%s eventSeq %d, want 3", diff, p.EventSeq)
	}
	if last := p.Events[len(p.Events)-1]; last.RequestID == requestID(9) {
		t.Errorf("the stale cancellation's request id %s is on the last event", last.RequestID)
	}
}

// TestApprovalShortOfTheQuorumIsAnEvent: under a rule that needs two CHECKERs, the first
// approval keeps the request pending authorisation and is a service_request.approval_added
// event naming the rule, its policy version and the approval still missing; the second
// authorises it.
func TestApprovalShortOfTheQuorumIsAnEvent(t *testing.T) {
	t.Parallel()
	st, coll, log := eventsSetup(t)
	ctx := context.Background()
	svc, _ := servicedesk.Lookup(catalog.CustodyWalletCreate)
	payload := `{"walletId":"W-1"}`
	r := servicedesk.NewRequest("SERV-REQ-TWO", servicedesk.Maker{Email: maker, CompanyID: "ZT", CompanyName: "ZT Ltd"}, svc,
		"e2e-two", payload, servicedesk.BodyHash(svc.ID, payload), created)
	r.PolicyVersion, r.Rule = 4, &policy.Rule{Name: "two checkers", Action: policy.ActionApprove, Combine: policy.CombineAnd,
		Groups: []policy.Group{{Name: "checkers", Roles: []string{servicedesk.RoleChecker}, Threshold: 2}}}
	if err := st.InsertRequest(call(requestID(1)), r); err != nil {
		t.Fatal(err)
	}
	second := decide("checker2@zt.example", servicedesk.RoleChecker, servicedesk.TypeApprove)
	for i, next := range []func(*testing.T, servicedesk.Request) servicedesk.Transition{confirm, approve, second} {
		var err error
		if r, err = st.Apply(call(requestID(i+2)), r, next(t, r), created.Add(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := outbox.NewRelay(coll, log, nil).Once(ctx); err != nil || n != 4 {
		t.Fatalf("relay = %d, %v; want 4 events", n, err)
	}
	logged, err := log.Events(ctx, "service_request", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range logged {
		var data struct {
			Status           string `json:"status"`
			PolicyVersion    string `json:"policyVersion"`
			Rule             string `json:"rule"`
			ApprovalsMissing int    `json:"approvalsMissing"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s@%s missing %d", e.Type, data.Status, data.Rule, data.PolicyVersion, data.ApprovalsMissing))
	}
	want := []string{
		"service_request.created PENDING CONFIRMATION two checkers@4 missing 2",
		"service_request.confirmed PENDING AUTHORISATION two checkers@4 missing 2",
		"service_request.approval_added PENDING AUTHORISATION two checkers@4 missing 1",
		"service_request.authorised AUTHORISED two checkers@4 missing 0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
