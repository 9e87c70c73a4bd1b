package dispatch_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"

	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/webhook"
	"github.com/zcustody/suite/services/events"
	"github.com/zcustody/suite/services/events/dispatch"
	"github.com/zcustody/suite/services/events/store"
)

// TestMain checks that an index covers every query the dispatcher sends.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, store.Indexes(), map[string]string{
		"inbox aggregate {}": "the tests count what is left in the inbox",
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

// env is a database with the events store, a keyring and a clock.
type env struct {
	t    *testing.T
	db   *mongo.Database
	st   *store.Store
	keys *webhook.Keyring
	now  func() time.Time
}

func newEnv(t *testing.T, now func() time.Time) *env {
	t.Helper()
	if now == nil {
		now = time.Now
	}
	db := testdb.New(t)
	st := store.New(db, "sequencer", time.Minute, now)
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys, err := webhook.NewKeyring("k1", map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, db: db, st: st, keys: keys, now: now}
}

// sub is an approved subscription with the keys a receiver verifies with.
type sub struct {
	events.Subscription
	secret webhook.Secret
	pub    ed25519.PublicKey
}

func (e *env) subscribe(company, url string, types ...string) sub {
	e.t.Helper()
	ctx := context.Background()
	s, secret, err := events.NewSubscription(company, url, types, "maker", e.now(), e.keys)
	if err != nil {
		e.t.Fatal(err)
	}
	head, err := e.st.Head(ctx, company)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := s.Decide(true, "checker", e.now(), head.Next-1, s.Pending.ProposedAt); err != nil {
		e.t.Fatal(err)
	}
	if err := e.st.InsertSubscription(ctx, s); err != nil {
		e.t.Fatal(err)
	}
	pub, err := webhook.ParsePublicKey(s.PublicKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return sub{Subscription: s, secret: secret, pub: pub}
}

// publish logs evs in their companies' logs.
func (e *env) publish(evs ...pevents.Event) {
	e.t.Helper()
	if _, err := e.st.Append(context.Background(), evs); err != nil {
		e.t.Fatal(err)
	}
	e.sequence()
}

func (e *env) sequence() {
	e.t.Helper()
	if _, err := e.st.Sequence(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// event makes an event of company about entity at version.
func event(company, entity string, version int64) pevents.Event {
	return pevents.Event{ID: "evt_" + uuid.Must(uuid.NewV7()).String(), Type: "settlement.pay_out", Timestamp: time.Now().UTC().Truncate(time.Millisecond),
		CompanyID: company, Entity: pevents.Entity{Type: "settlement", ID: entity, Version: version},
		Data: json.RawMessage(fmt.Sprintf(`{"id":%q,  "version":%d, "note":"<&>"}`, entity, version)), SchemaVersion: pevents.SchemaVersion}
}

var fastSchedule = webhook.Schedule{Delays: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond,
	50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}}

func (e *env) dispatcher(owner string, opts dispatch.Options) *dispatch.Dispatcher {
	opts.Owner, opts.Keyring = owner, e.keys
	if opts.Client == nil {
		opts.Client = webhook.NewClient(webhook.ClientConfig{AllowHTTP: true, AllowPrivate: true, Timeout: 2 * time.Second})
	}
	if opts.Schedule.Delays == nil {
		opts.Schedule = fastSchedule
	}
	if opts.Now == nil {
		opts.Now = e.now
	}
	if opts.Lease == 0 {
		opts.Lease = 3 * time.Second
	}
	return dispatch.New(store.New(e.db, owner, time.Minute, e.now), opts)
}

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
	id     string
	at     time.Time
	status int
}

// receiver is an HTTP endpoint that records every request and answers with respond's status.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []received
	arrived map[string]int
	respond func(r received, n int) int // n counts the requests of the same webhook-id, from 1
}

func newReceiver(t *testing.T, respond func(r received, n int) int) *receiver {
	rc := &receiver{respond: respond, arrived: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got := received{header: r.Header.Clone(), body: body, id: r.Header.Get("webhook-id"), at: time.Now()}
		rc.mu.Lock()
		rc.arrived[got.id]++
		n := rc.arrived[got.id]
		rc.mu.Unlock()
		got.status = http.StatusOK
		if rc.respond != nil {
			got.status = rc.respond(got, n)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, got)
		rc.mu.Unlock()
		w.WriteHeader(got.status)
		_, _ = io.WriteString(w, "thanks")
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// delivered are the ids of the requests answered 2xx, in order.
func (rc *receiver) delivered() []string {
	var out []string
	for _, g := range rc.all() {
		if g.status < 300 {
			out = append(out, g.id)
		}
	}
	return out
}

// until runs the dispatchers' passes until cond holds, failing after timeout.
func until(t *testing.T, timeout time.Duration, cond func() bool, ds ...*dispatch.Dispatcher) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		for _, d := range ds {
			if _, err := d.Pass(context.Background()); err != nil {
				t.Fatalf("pass: %v", err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attempts(t *testing.T, st *store.Store, q store.AttemptQuery) []events.Attempt {
	t.Helper()
	q.Limit = store.MaxAttemptsPage
	got, _, err := st.ListAttempts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDeliversSignedEnvelopes: each event goes once, as the REST API's envelope with the
// staged data byte for byte, signed v1 and v1a over the attempt's time with the event id as
// webhook-id; the attempt is recorded; another company's subscription gets nothing of it.
func TestDeliversSignedEnvelopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rc, other := newReceiver(t, nil), newReceiver(t, nil)
	s := e.subscribe("ZA", rc.URL)
	o := e.subscribe("ZB", other.URL)
	e.subscribe("ZA", rc.URL+"/unwanted", "wallet.created") // wants another type: gets nothing
	first, second := event("ZA", "S-1", 1), event("ZA", "S-2", 1)
	second.RequestID = "req-42"
	theirs := event("ZB", "S-9", 1)
	e.publish(first, second, theirs)
	d := e.dispatcher("one", dispatch.Options{Workers: 1}) // one at a time: in log order
	until(t, 10*time.Second, func() bool { return len(rc.delivered()) == 2 && len(other.delivered()) == 1 }, d)
	for range 3 {
		if _, err := d.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	got := rc.all()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2 (one per event)", len(got))
	}
	for i, want := range []pevents.Event{first, second} {
		g := got[i]
		if g.id != want.ID {
			t.Errorf("request %d webhook-id %q, want the event id %q", i, g.id, want.ID)
		}
		if string(g.body) != string(events.Envelope(want)) {
			t.Errorf("request %d body %s, want %s", i, g.body, events.Envelope(want))
		}
		if err := webhook.Verify(g.header, g.body, s.secret, nil, time.Now()); err != nil {
			t.Errorf("request %d: v1 does not verify: %v", i, err)
		}
		if err := webhook.Verify(g.header, g.body, nil, s.pub, time.Now()); err != nil {
			t.Errorf("request %d: v1a does not verify: %v", i, err)
		}
		if err := webhook.Verify(g.header, g.body, o.secret, o.pub, time.Now()); err == nil {
			t.Errorf("request %d verifies with another subscription's keys", i)
		}
		var env struct {
			ID, Type, Timestamp, CompanyID, Request string
			Entity                                  pevents.Entity
			Data                                    json.RawMessage
			SchemaVersion                           int
		}
		if err := json.Unmarshal(g.body, &env); err != nil {
			t.Fatalf("request %d body is not JSON: %v", i, err)
		}
		if string(env.Data) != string(want.Data) || env.CompanyID != "ZA" || env.Entity != want.Entity || env.Request != want.RequestID ||
			env.Timestamp != want.Timestamp.Format("2006-01-02T15:04:05.000Z") || env.SchemaVersion != 1 || env.Type != want.Type {
			t.Errorf("request %d envelope %+v, want the event %+v with data byte for byte", i, env, want)
		}
	}
	if o := other.all(); len(o) != 1 || o[0].id != theirs.ID {
		t.Errorf("ZB's receiver got %v, want only ZB's event", o)
	}
	if strings.Contains(string(got[0].body), `"request"`) || !strings.Contains(string(got[1].body), `"request":"req-42"`) {
		t.Errorf("request field: %s / %s, want it only when the event has one", got[0].body, got[1].body)
	}

	as := attempts(t, e.st, store.AttemptQuery{CompanyID: "ZA", SubscriptionID: s.ID})
	if len(as) != 2 {
		t.Fatalf("attempts = %+v, want 2", as)
	}
	for _, a := range as {
		if a.Outcome != webhook.OutcomeDelivered || a.Status != 200 || a.Trigger != events.TriggerScheduled || a.Response != "thanks" || a.Number != 1 {
			t.Errorf("attempt %+v, want DELIVERED 200 SCHEDULED with the response kept", a)
		}
	}
	if as[0].EventID != second.ID {
		t.Errorf("attempts not newest first: %s then %s", as[0].EventID, as[1].EventID)
	}
	if leak := attempts(t, e.st, store.AttemptQuery{CompanyID: "ZB", EventID: first.ID}); len(leak) != 0 {
		t.Errorf("ZB's history shows ZA's attempts: %+v", leak)
	}
	dl, err := e.st.Delivery(context.Background(), events.DeliveryID(s.ID, first.ID))
	if err != nil || dl.Status != events.DeliveryDelivered || dl.Attempts != 1 {
		t.Errorf("delivery = %+v, %v; want DELIVERED after 1 attempt", dl, err)
	}
}

// TestOrderPerEntity: while the first event of an entity gets 500s, the entity's next event
// waits; another entity's event goes at once; once the first goes through the second follows.
func TestOrderPerEntity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a1, a2, b1 := event("ZA", "A", 1), event("ZA", "A", 2), event("ZA", "B", 1)
	rc := newReceiver(t, func(r received, n int) int {
		if r.id == a1.ID && n <= 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	s := e.subscribe("ZA", rc.URL)
	e.publish(a1, a2, b1)
	d := e.dispatcher("one", dispatch.Options{})
	until(t, 15*time.Second, func() bool { return len(rc.delivered()) == 3 }, d)

	var order []string
	for _, g := range rc.all() {
		order = append(order, g.id)
	}
	want := []string{a1.ID, b1.ID, a1.ID, a1.ID, a1.ID, a2.ID}
	// b1 goes in the first pass with a1's first attempt; a2 only after a1's success.
	if !slices.Equal(order[:2], want[:2]) && !slices.Equal(order[:2], []string{b1.ID, a1.ID}) {
		t.Errorf("first requests %v, want a1 and b1 (b1 not held up by a1)", order[:2])
	}
	if !slices.Equal(order[len(order)-2:], []string{a1.ID, a2.ID}) || slices.Index(order, a2.ID) != len(order)-1 {
		t.Errorf("requests %v: a2 was sent before a1 went through", order)
	}
	if len(order) != 6 {
		t.Errorf("requests %v, want a1 four times, b1 and a2 once", order)
	}
	as := attempts(t, e.st, store.AttemptQuery{CompanyID: "ZA", SubscriptionID: s.ID, EventID: a1.ID})
	if len(as) != 4 || as[3].Outcome != webhook.OutcomeHTTPError || as[3].Status != 500 || as[3].NextAt.IsZero() || as[0].Outcome != webhook.OutcomeDelivered {
		t.Errorf("a1's attempts %+v, want three 500s with a next time, then a delivery", as)
	}
	if got := attempts(t, e.st, store.AttemptQuery{CompanyID: "ZA", Outcome: webhook.OutcomeHTTPError}); len(got) != 3 {
		t.Errorf("attempts filtered by HTTP_ERROR: %d, want 3", len(got))
	}
}

// TestTimeoutRecordsTimedOut: a receiver slower than the timeout is recorded as TIMED_OUT and
// retried.
func TestTimeoutRecordsTimedOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rc := newReceiver(t, func(r received, n int) int {
		if n == 1 {
			select {
			case <-time.After(2 * time.Second):
			case <-release:
			}
		}
		return http.StatusOK
	})
	s := e.subscribe("ZA", rc.URL)
	ev := event("ZA", "S-1", 1)
	e.publish(ev)
	d := e.dispatcher("one", dispatch.Options{Client: webhook.NewClient(webhook.ClientConfig{AllowHTTP: true, AllowPrivate: true, Timeout: 200 * time.Millisecond})})
	until(t, 10*time.Second, func() bool {
		return len(rc.delivered()) >= 1 && len(attempts(t, e.st, store.AttemptQuery{CompanyID: "ZA"})) == 2
	}, d)
	as := attempts(t, e.st, store.AttemptQuery{CompanyID: "ZA", SubscriptionID: s.ID})
	if as[1].Outcome != webhook.OutcomeTimedOut || as[1].Status != 0 || as[1].Detail == "" {
		t.Errorf("first attempt %+v, want TIMED_OUT with a detail", as[1])
	}
	if as[0].Outcome != webhook.OutcomeDelivered || as[0].Number != 2 {
		t.Errorf("second attempt %+v, want the retry DELIVERED", as[0])
	}
}

// TestGoneSuspendsAtOnce: a 410 suspends the subscription after one attempt, keeps its
// delivery pending, and the company's other subscription receives the suspension event.
func TestGoneSuspendsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	gone := newReceiver(t, func(received, int) int { return http.StatusGone })
	rc := newReceiver(t, nil)
	stranger := newReceiver(t, nil)
	g := e.subscribe("ZA", gone.URL)
	e.subscribe("ZA", rc.URL)
	e.subscribe("ZB", stranger.URL)
	ev := event("ZA", "S-1", 1)
	e.publish(ev)
	d := e.dispatcher("one", dispatch.Options{})
	until(t, 10*time.Second, func() bool { return len(gone.all()) == 1 && len(rc.delivered()) == 1 }, d)
	got, err := e.st.Subscription(context.Background(), "ZA", g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != events.StatusSuspended || got.SuspendedReason == "" || got.EventSeq != 1 {
		t.Fatalf("subscription after a 410: %+v, want SUSPENDED with a reason and event 1 counted", got)
	}
	e.sequence() // the suspension event, appended to the inbox, takes its position
	until(t, 10*time.Second, func() bool { return len(rc.delivered()) == 2 }, d)
	body := rc.all()[1].body
	var env struct {
		Type   string
		Entity pevents.Entity
		Data   struct{ SubscriptionID, URL, Reason, SuspendedAt string }
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Type != events.SuspendedEventType || env.Entity != (pevents.Entity{Type: events.SubscriptionEntity, ID: g.ID, Version: 1}) ||
		env.Data.SubscriptionID != g.ID || env.Data.URL != "" || env.Data.Reason == "" || env.Data.SuspendedAt == "" {
		t.Errorf("suspension event %s, want webhook_subscription.suspended of %s", body, g.ID)
	}
	for range 5 {
		if _, err := d.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(gone.all()); n != 1 {
		t.Errorf("the suspended subscription got %d requests, want 1", n)
	}
	if n := len(stranger.all()); n != 0 {
		t.Errorf("another company's subscription got %d requests of ZA's suspension", n)
	}
	dl, err := e.st.Delivery(context.Background(), events.DeliveryID(g.ID, ev.ID))
	if err != nil || dl.Status != events.DeliveryPending {
		t.Errorf("delivery of the suspended subscription = %+v, %v; want it kept PENDING", dl, err)
	}
}

// TestSustainedFailuresSuspendAfterTheWindow: failures suspend only once they have lasted
// SuspendAfter without a success (a fake clock moves time).
func TestSustainedFailuresSuspendAfterTheWindow(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Now().UTC()}
	e := newEnv(t, c.now)
	rc := newReceiver(t, func(received, int) int { return http.StatusServiceUnavailable })
	s := e.subscribe("ZA", rc.URL)
	e.publish(event("ZA", "S-1", 1))
	var delays []time.Duration
	for range 30 {
		delays = append(delays, 10*time.Minute)
	}
	d := e.dispatcher("one", dispatch.Options{Schedule: webhook.Schedule{Delays: delays}, SuspendAfter: time.Hour})
	status := func() string {
		got, err := e.st.Subscription(context.Background(), "ZA", s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	for i := range 6 { // attempts at 0, 10, ..., 50 minutes: still inside the window
		until(t, 5*time.Second, func() bool { return len(rc.all()) == i+1 }, d)
		if st := status(); st != events.StatusActive {
			t.Fatalf("after %d failures over %s: %s, want still ACTIVE", i+1, time.Duration(i)*10*time.Minute, st)
		}
		c.add(10*time.Minute + time.Second)
	}
	until(t, 5*time.Second, func() bool { return len(rc.all()) == 7 }, d)
	if st := status(); st != events.StatusSuspended {
		t.Fatalf("after an hour of nothing but failures: %s, want SUSPENDED", st)
	}
}

// TestTwoDispatchersNeverSendOneDeliveryAtOnce: two replicas over one database deliver every
// event, never one delivery twice at the same time, in order per entity.
func TestTwoDispatchersNeverSendOneDeliveryAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	var mu sync.Mutex
	inFlight := map[string]int{}
	overlap := false
	rc := newReceiver(t, func(r received, n int) int {
		mu.Lock()
		inFlight[r.id]++
		if inFlight[r.id] > 1 {
			overlap = true
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight[r.id]--
		mu.Unlock()
		if n == 1 && r.body[len(r.body)-2] == '1' { // fail some first attempts
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	e.subscribe("ZA", rc.URL)
	var all []pevents.Event
	for v := int64(1); v <= 4; v++ {
		for ent := range 6 {
			all = append(all, event("ZA", fmt.Sprintf("E-%d", ent), v))
		}
	}
	e.publish(all...)
	d1, d2 := e.dispatcher("one", dispatch.Options{Workers: 4}), e.dispatcher("two", dispatch.Options{Workers: 4})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, d := range []*dispatch.Dispatcher{d1, d2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = d.Pass(ctx)
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(rc.delivered()) < len(all) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	got := rc.delivered()
	if overlap {
		t.Error("one delivery was being sent twice at the same time")
	}
	for _, ev := range all {
		if !slices.Contains(got, ev.ID) {
			t.Errorf("event %s (%s v%d) never arrived", ev.ID, ev.Entity.ID, ev.Entity.Version)
		}
	}
	if len(got) != len(all) {
		t.Errorf("%d deliveries went through for %d events", len(got), len(all))
	}
	// Order per entity: the successful deliveries of an entity arrive in version order.
	byID := map[string]pevents.Event{}
	for _, ev := range all {
		byID[ev.ID] = ev
	}
	last := map[string]int64{}
	for _, id := range got {
		ev := byID[id]
		if ev.Entity.Version < last[ev.Entity.ID] {
			t.Errorf("%s v%d arrived after v%d", ev.Entity.ID, ev.Entity.Version, last[ev.Entity.ID])
		}
		last[ev.Entity.ID] = ev.Entity.Version
	}
}

// TestLeaseOfACrashedDispatcherLapses: a delivery claimed by a dispatcher that died is sent
// by another once the lease lapses, and not before.
func TestLeaseOfACrashedDispatcherLapses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rc := newReceiver(t, nil)
	s := e.subscribe("ZA", rc.URL)
	ev := event("ZA", "S-1", 1)
	e.publish(ev)
	d := e.dispatcher("alive", dispatch.Options{})
	if _, err := d.FanOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.st.Claim(context.Background(), events.DeliveryID(s.ID, ev.ID), "dead", time.Now(), 500*time.Millisecond); err != nil || !ok {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if n, err := d.Deliver(context.Background()); err != nil || n != 0 || len(rc.all()) != 0 {
		t.Fatalf("a leased delivery was sent (%d, %v)", n, err)
	}
	until(t, 5*time.Second, func() bool { return len(rc.delivered()) == 1 }, d)
}

// TestResend: resending one event, one entity's events, or recovering what failed since a
// time makes new attempts, re-signed with the same webhook-id, with their triggers.
func TestResend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil)
	var mu sync.Mutex
	failing := false
	rc := newReceiver(t, func(received, int) int {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	old := event("ZA", "S-0", 1)
	e.publish(old) // before the subscription: never delivered to it
	s := e.subscribe("ZA", rc.URL)
	a1, a2, b1 := event("ZA", "A", 1), event("ZA", "A", 2), event("ZA", "B", 1)
	e.publish(a1, a2, b1)
	d := e.dispatcher("one", dispatch.Options{Schedule: webhook.Schedule{Delays: []time.Duration{20 * time.Millisecond}}})
	until(t, 10*time.Second, func() bool { return len(rc.delivered()) == 3 }, d)

	trigger := func(id string) []string {
		var out []string
		for _, a := range attempts(t, e.st, store.AttemptQuery{CompanyID: "ZA", EventID: id}) {
			out = append(out, a.Trigger)
		}
		return out
	}
	if n, err := e.st.Resend(ctx, "ZA", s.ID, store.Resend{EventID: b1.ID}, time.Now()); err != nil || n.Scheduled != 1 {
		t.Fatalf("Resend(b1) = %+v, %v", n, err)
	}
	until(t, 5*time.Second, func() bool { return len(rc.delivered()) == 4 }, d)
	if got := trigger(b1.ID); !slices.Equal(got, []string{events.TriggerManual, events.TriggerScheduled}) {
		t.Errorf("b1's triggers %v, want MANUAL after SCHEDULED", got)
	}
	if last := rc.all()[3]; last.id != b1.ID || webhook.Verify(last.header, last.body, s.secret, s.pub, time.Now()) != nil {
		t.Errorf("resend: webhook-id %s (want %s) or its signature is wrong", last.id, b1.ID)
	}

	if n, err := e.st.Resend(ctx, "ZA", s.ID, store.Resend{EventID: old.ID}, time.Now()); err != nil || n.Scheduled != 1 {
		t.Fatalf("Resend(an event never delivered) = %+v, %v; want its delivery made", n, err)
	}
	until(t, 5*time.Second, func() bool { return len(rc.delivered()) == 5 }, d)

	if n, err := e.st.Resend(ctx, "ZA", s.ID, store.Resend{EntityType: "settlement", EntityID: "A"}, time.Now()); err != nil || n.Scheduled != 2 {
		t.Fatalf("Resend(entity A) = %+v, %v; want 2", n, err)
	}
	until(t, 5*time.Second, func() bool { return len(rc.delivered()) == 7 }, d)
	if got := rc.delivered()[5:]; !slices.Equal(got, []string{a1.ID, a2.ID}) {
		t.Errorf("entity resend delivered %v, want a1 then a2", got)
	}
	if got := trigger(a2.ID); got[0] != events.TriggerManual {
		t.Errorf("a2's triggers %v, want MANUAL last", got)
	}

	// Recover: events that failed for good since a time go again.
	mu.Lock()
	failing = true
	mu.Unlock()
	since := time.Now()
	c1 := event("ZA", "C", 1)
	e.publish(c1)
	until(t, 10*time.Second, func() bool {
		dl, err := e.st.Delivery(ctx, events.DeliveryID(s.ID, c1.ID))
		return err == nil && dl.Status == events.DeliveryFailed
	}, d)
	mu.Lock()
	failing = false
	mu.Unlock()
	if n, err := e.st.Resend(ctx, "ZA", s.ID, store.Resend{FailedSince: since}, time.Now()); err != nil || n.Scheduled != 1 || n.More {
		t.Fatalf("Resend(failed since) = %+v, %v; want 1", n, err)
	}
	if n, err := e.st.Resend(ctx, "ZA", s.ID, store.Resend{FailedSince: since}, time.Now()); err != nil || n.Scheduled != 0 {
		t.Fatalf("a second Resend(failed since) = %+v, %v; want nothing more (c1 is queued)", n, err)
	}
	until(t, 5*time.Second, func() bool { return slices.Contains(rc.delivered(), c1.ID) }, d)
	if got := trigger(c1.ID); got[0] != events.TriggerRecover || len(got) != 3 {
		t.Errorf("c1's triggers %v, want RECOVER after two SCHEDULED", got)
	}
	if n, err := e.st.Resend(ctx, "ZA", s.ID, store.Resend{FailedSince: since}, time.Now()); err != nil || n.Scheduled != 0 {
		t.Fatalf("Resend(failed since) after c1 was delivered = %+v, %v; want nothing", n, err)
	}
	if _, err := e.st.Resend(ctx, "ZB", s.ID, store.Resend{EventID: b1.ID}, time.Now()); err == nil {
		t.Error("another company resent ZA's subscription")
	}
	// A subscription gets no event of a type it does not take, resent or not.
	narrow := e.subscribe("ZA", rc.URL, "withdrawal.accepted")
	if _, err := e.st.Resend(ctx, "ZA", narrow.ID, store.Resend{EventID: b1.ID}, time.Now()); !isPrecondition(err) {
		t.Errorf("Resend(b1) to a withdrawal subscription = %v, want a conflict", err)
	}
	if n, err := e.st.Resend(ctx, "ZA", narrow.ID, store.Resend{EntityType: "settlement", EntityID: "A"}, time.Now()); err != nil || n.Scheduled != 0 {
		t.Errorf("Resend(entity A) to a withdrawal subscription = %+v, %v; want nothing", n, err)
	}
}

func isPrecondition(err error) bool {
	var e *apperr.Error
	return errors.As(err, &e) && e.Status == codes.FailedPrecondition
}

// TestDatabaseGone: a pass over a database that went away returns an error; it never panics.
func TestDatabaseGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rc := newReceiver(t, nil)
	e.subscribe("ZA", rc.URL)
	e.publish(event("ZA", "S-1", 1))
	d := e.dispatcher("one", dispatch.Options{})
	if err := e.db.Client().Disconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pass(context.Background()); err == nil {
		t.Error("a pass without a database reported no error")
	}
}

// TestACompanysBacklogDoesNotTakeThePass: one company with a deep backlog on a slow endpoint
// and another with one event: the other's event goes in the first pass.
func TestACompanysBacklogDoesNotTakeThePass(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	slow := newReceiver(t, func(received, int) int { time.Sleep(20 * time.Millisecond); return http.StatusOK })
	quick := newReceiver(t, func(received, int) int { return http.StatusOK })
	e.subscribe("ZA", slow.URL)
	e.subscribe("ZB", quick.URL)
	var backlog []pevents.Event
	for i := range 30 {
		backlog = append(backlog, event("ZA", fmt.Sprintf("A-%d", i), 1))
	}
	e.publish(backlog...)
	e.publish(event("ZB", "B-1", 1))
	d := e.dispatcher("one", dispatch.Options{Batch: 10, Workers: 2})
	if _, err := d.FanOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Deliver(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(quick.delivered()); got != 1 {
		t.Errorf("ZB's event delivered %d times in the first pass, want once: ZA's backlog took the pass", got)
	}
	if got := len(slow.delivered()); got != 1 {
		t.Errorf("ZA's deliveries in the first pass: %d, want its share of the 2 workers (PerSubscription 1)", got)
	}
}

// TestEventsDeletedBeforeDeliveryAreShownMissed: a subscription that was away longer than
// the log keeps events (its cursor below the floor) is told which positions it missed, and
// gets what is kept from there on.
func TestEventsDeletedBeforeDeliveryAreShownMissed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	rc := newReceiver(t, func(received, int) int { return http.StatusNoContent })
	s := e.subscribe("ZA", rc.URL)
	e.publish(event("ZA", "A", 1), event("ZA", "A", 2), event("ZA", "B", 1))
	if _, err := e.st.Prune(ctx, "ZA", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	kept := event("ZA", "C", 1)
	e.publish(kept)
	d := e.dispatcher("one", dispatch.Options{})
	until(t, 10*time.Second, func() bool { return len(rc.delivered()) == 1 }, d)
	if got := rc.delivered(); got[0] != kept.ID {
		t.Errorf("delivered %v, want only the kept event %s", got, kept.ID)
	}
	after, err := e.st.Subscription(ctx, "ZA", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m := after.Missed; m == nil || m.From != 1 || m.To != 3 {
		t.Errorf("missed = %+v, want positions 1 to 3", m)
	}
}

// TestASlowEndpointHoldsOnlyItsOwnWorkers: while one subscription's endpoint sits on its
// requests, passes go on: another subscription's events are delivered, and the slow one never
// has more than PerSubscription requests open, however deep its backlog.
func TestASlowEndpointHoldsOnlyItsOwnWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	release := make(chan struct{})
	var open, most atomic.Int32
	slow := newReceiver(t, func(received, int) int {
		n := open.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		open.Add(-1)
		return http.StatusOK
	})
	quick := newReceiver(t, func(received, int) int { return http.StatusOK })
	e.subscribe("ZA", slow.URL)
	e.subscribe("ZB", quick.URL)
	var backlog []pevents.Event
	for i := range 20 {
		backlog = append(backlog, event("ZA", fmt.Sprintf("A-%d", i), 1))
	}
	e.publish(backlog...)
	d := e.dispatcher("one", dispatch.Options{Workers: 4, PerSubscription: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		close(release)
		cancel()
		_ = d.Wait()
	}()
	if _, err := d.Dispatch(ctx); err != nil {
		t.Fatal(err)
	}
	// ZB's events come while ZA's first requests are still open.
	for i := range 5 {
		e.publish(event("ZB", fmt.Sprintf("B-%d", i), 1))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(quick.delivered()) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("ZB got %d of its 5 events while ZA's endpoint was slow", len(quick.delivered()))
		}
		if _, err := d.Dispatch(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(slow.all()) != 0 {
		t.Fatalf("ZA's endpoint answered %d requests before it was released", len(slow.all()))
	}
	if got := most.Load(); got == 0 || got > 2 {
		t.Errorf("ZA had at most %d requests open, want some and no more than its PerSubscription (2)", got)
	}
}

// TestResealAfterAKeyRotation: after the key-encryption key moves from k1 to k2, a reseal
// pass puts every sealed value under k2 (secret, seed, a pending secret); a dispatcher that
// no longer holds k1 then signs with the same secret and seed as before, and a second pass
// finds nothing to do.
func TestResealAfterAKeyRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rc := newReceiver(t, nil)
	s := e.subscribe("ZA", rc.URL)
	// A secret rotation waiting for its checker, sealed under k1 too.
	stored, err := e.st.Subscription(context.Background(), "ZA", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stored.ProposeSecret("maker", e.now(), e.keys); err != nil {
		t.Fatal(err)
	}
	saved, err := e.st.SaveSubscription(context.Background(), stored)
	if err != nil {
		t.Fatal(err)
	}
	k1 := []byte("0123456789abcdef0123456789abcdef")
	k2 := []byte("fedcba9876543210fedcba9876543210")
	both, err := webhook.NewKeyring("k2", map[string][]byte{"k1": k1, "k2": k2})
	if err != nil {
		t.Fatal(err)
	}
	d := dispatch.New(e.st, dispatch.Options{Owner: "one", Keyring: both, Client: webhook.NewClient(webhook.ClientConfig{AllowHTTP: true, AllowPrivate: true})})
	if resealed, left, err := d.Reseal(context.Background()); err != nil || resealed != 1 || left != 0 {
		t.Fatalf("Reseal = %d, %d, %v; want the one subscription resealed, none left", resealed, left, err)
	}
	after, err := e.st.Subscription(context.Background(), "ZA", s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Seed.KeyID != "k2" || after.Secrets[0].Sealed.KeyID != "k2" || after.Pending == nil || after.Pending.Secret.KeyID != "k2" {
		t.Errorf("after the pass: seed under %s, secret under %s, pending %+v; want all under k2", after.Seed.KeyID,
			after.Secrets[0].Sealed.KeyID, after.Pending)
	}
	// The version moves: a maker's change read before the pass is refused, not written over
	// the new seal with values sealed under k1.
	if after.Version != stored.Version+2 {
		t.Errorf("version %d, want %d (the proposal's save, then the reseal)", after.Version, stored.Version+2)
	}
	if _, err := e.st.SaveSubscription(context.Background(), saved); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("a save read before the reseal = %v, want a conflict", err)
	}
	if resealed, left, err := d.Reseal(context.Background()); err != nil || resealed != 0 || left != 0 {
		t.Errorf("a second pass = %d, %d, %v; want nothing to do", resealed, left, err)
	}
	// k1 gone: the dispatcher still signs with the subscription's own secret and seed.
	onlyK2, err := webhook.NewKeyring("k2", map[string][]byte{"k2": k2})
	if err != nil {
		t.Fatal(err)
	}
	ev := event("ZA", "S-1", 1)
	e.publish(ev)
	d2 := dispatch.New(e.st, dispatch.Options{Owner: "two", Keyring: onlyK2, Client: webhook.NewClient(webhook.ClientConfig{AllowHTTP: true, AllowPrivate: true})})
	until(t, 10*time.Second, func() bool { return len(rc.delivered()) == 1 }, d2)
	g := rc.all()[0]
	if err := webhook.Verify(g.header, g.body, s.secret, nil, time.Now()); err != nil {
		t.Errorf("v1 after the rotation: %v", err)
	}
	if err := webhook.Verify(g.header, g.body, nil, s.pub, time.Now()); err != nil {
		t.Errorf("v1a after the rotation: %v", err)
	}
}

// TestFreedWorkersGoRoundTheCompanies: with one worker and three companies that each have a
// backlog, successive passes serve the three in turn; the subscription first in id order does
// not take every worker that frees up.
func TestFreedWorkersGoRoundTheCompanies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rc := newReceiver(t, nil)
	companies := []string{"ZA", "ZB", "ZC"}
	for _, c := range companies {
		e.subscribe(c, rc.URL+"/"+c)
		var backlog []pevents.Event
		for i := range 4 {
			backlog = append(backlog, event(c, fmt.Sprintf("%s-%d", c, i), 1))
		}
		e.publish(backlog...)
	}
	d := e.dispatcher("one", dispatch.Options{Workers: 1})
	for range 3 {
		if _, err := d.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	served := map[string]bool{}
	for _, g := range rc.all() {
		var env struct{ CompanyID string }
		if err := json.Unmarshal(g.body, &env); err != nil {
			t.Fatal(err)
		}
		served[env.CompanyID] = true
	}
	if len(rc.all()) != 3 || len(served) != 3 {
		t.Errorf("three passes of one worker served %v in %d requests, want each of the three companies once", served, len(rc.all()))
	}
}

// TestACompanyHoldsAtMostItsShareOfTheWorkers: a company whose four subscriptions all sit on
// their requests holds at most PerCompany workers; another company's endpoint still gets its
// requests.
func TestACompanyHoldsAtMostItsShareOfTheWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	release := make(chan struct{})
	var mu sync.Mutex
	open := map[string]int{}
	rc := newReceiver(t, func(r received, _ int) int {
		var env struct{ CompanyID string }
		_ = json.Unmarshal(r.body, &env)
		mu.Lock()
		open[env.CompanyID]++
		mu.Unlock()
		<-release
		return http.StatusOK
	})
	for i := range 4 {
		e.subscribe("ZA", fmt.Sprintf("%s/a%d", rc.URL, i))
	}
	e.subscribe("ZB", rc.URL+"/b")
	var all []pevents.Event
	for i := range 6 {
		all = append(all, event("ZA", fmt.Sprintf("A-%d", i), 1), event("ZB", fmt.Sprintf("B-%d", i), 1))
	}
	e.publish(all...)
	d := e.dispatcher("one", dispatch.Options{Workers: 8, PerSubscription: 2, PerCompany: 4})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		close(release)
		cancel()
		_ = d.Wait()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := d.Dispatch(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		a, b := open["ZA"], open["ZB"]
		mu.Unlock()
		if a > 4 {
			t.Fatalf("ZA holds %d workers, want at most PerCompany (4)", a)
		}
		if a == 4 && b == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests open: ZA %d, ZB %d; want ZA at its 4 and ZB at its 2", a, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
