package fault_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/fault"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

const (
	createPath   = "/v3/api/servicedesk/create"
	requestsPath = "/v3/api/servicedesk/requests"
	// walletService is the catalog's custody wallet creation (maker only, no checker).
	walletService = "0x0013-001"
	// outageFor is how long each outage lasts: longer than the driver's server selection
	// timeout (5 s), so that requests sent while the database is away fail while it still is.
	outageFor = 5500 * time.Millisecond
	// failWithin bounds how long a request may take to fail while the database is away:
	// the driver's server selection timeout (5 s, platform/mongodb) plus slack for -race
	// and a loaded 2-core machine (measured: 5.0 s median, 5.9 s at worst under both).
	failWithin = 7 * time.Second
	// livenessService is the health entry that stays SERVING while the process runs
	// (services/internal/grpcserver.LivenessService).
	livenessService = "liveness"
)

// op is one create of the recorded history: what the client sent and what it saw.
// Jepsen's terms: ok (acknowledged: 200 with a requestId), fail (answered with an error),
// info (no answer: the outcome is unknown to the client).
type op struct {
	endToEndID string
	payload    map[string]any
	body       []byte
	phase      string // the phase when it was sent
	start, end time.Time
	resp       response
	requestID  string // when acknowledged
}

func (o *op) acked() bool { return o.requestID != "" }

// history records the ops of concurrent writers.
type history struct {
	mu    sync.Mutex
	ops   []*op
	phase atomic.Value // string
	seq   atomic.Int64
}

func (h *history) add(o *op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, o)
}

func (h *history) snapshot() []*op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// count counts the ops of phase that ended and satisfy keep.
func (h *history) count(phase string, keep func(*op) bool) int {
	return countOps(h.snapshot(), func(o *op) bool { return o.phase == phase && keep(o) })
}

// countOps counts the ops that satisfy keep.
func countOps(ops []*op, keep func(*op) bool) int {
	n := 0
	for _, o := range ops {
		if keep(o) {
			n++
		}
	}
	return n
}

func newOp(t *testing.T, phase string, i int) *op {
	o := &op{endToEndID: uuid.NewString(), phase: phase,
		payload: map[string]any{"name": []any{fmt.Sprintf("outage %d", i)}, "currency": []any{"BTC"}, "currencyId": []any{"btc-btc"}}}
	o.body = mustJSON(t, map[string]any{"serviceId": walletService, "payload": o.payload, "endToEndId": o.endToEndID})
	return o
}

// send sends (or resends) the op's create and returns the requestId of a 200.
func send(c *signing.Client, o *op) (response, string) {
	r := call(c, http.MethodPost, createPath, o.body)
	if r.err != nil || r.status != http.StatusOK {
		return r, ""
	}
	var got struct {
		RequestID string `json:"requestId"`
	}
	if json.Unmarshal(r.body, &got) != nil {
		return r, ""
	}
	return r, got.RequestID
}

// TestDatabaseOutage runs a stream of service-request creates through the gateway, records
// every one (sent, acknowledged or failed, how long it took), and takes the database away
// twice while they run: first from everyone (the gateway and the services), then from the
// services only (each service owns its database: one of them may go alone). It checks:
//   - while the database is away, every failure is a 503 with ER-503 in the contract's body,
//     answered within failWithin, and nothing of the infrastructure leaks;
//   - a service's grpc.health.v1 turns NOT_SERVING (its liveness entry stays SERVING) and the
//     gateway's /healthz answers 503, and both come back after the database does;
//   - after recovery, against the recorded history: every acknowledged create is stored
//     exactly once with what was sent; every failed one is absent or stored exactly once
//     and complete (an unknown outcome that committed); a retry of every op with the same
//     endToEndId answers 200 with the stored requestId, and one request per endToEndId
//     exists in the end.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	s := newSuite(t, setup{ownLink: []string{"gateway"}})
	c := s.client(demo.CompanyZTEST, maker)
	sdAddr := s.stack.Services["servicedesk"]
	h := &history{}
	h.phase.Store("up")

	ctx, stop := context.WithCancel(t.Context())
	writers := runWriters(ctx, t, c, h, 8, 20*time.Millisecond)
	defer func() { stop(); writers.Wait() }()

	waitFor(t, 10*time.Second, "creates acknowledged before the outage", func() bool { return h.count("up", (*op).acked) >= 20 })
	var outages []window
	for _, o := range []struct {
		name  string
		links []*fault.Proxy
	}{
		{"everyone's database away", []*fault.Proxy{s.link, s.own["gateway"]}},
		{"the services' database away", []*fault.Proxy{s.link}},
	} {
		w := outage(t, s, h, o.name, sdAddr, o.links...)
		outages = append(outages, w)
		waitFor(t, 10*time.Second, o.name+": creates acknowledged after the outage", func() bool {
			return h.count(o.name+", after", (*op).acked) >= 20
		})
		// Failed while the database was away, whenever sent: with every writer waiting in a
		// request when the cut comes, all of them may fail just before the restore, and the
		// ones they send next may wait for the restore and succeed.
		failedDuring := func(o *op) bool { return !o.acked() && !o.end.Before(w.cut) && !o.end.After(w.restored) }
		if n := countOps(h.snapshot(), failedDuring); n == 0 {
			t.Errorf("%s: no create failed while the database was away: the outage was not seen", o.name)
		}
	}
	stop()
	writers.Wait() // the last requests sent during an outage end here

	ops := h.snapshot()
	checkFailures(t, ops, outages)
	checkHistory(t, s, ops)
}

// runWriters starts n writers that send creates with c, pause apart, until ctx ends, and
// record them in h; wait on the group for the last ones to end.
func runWriters(ctx context.Context, t *testing.T, c *signing.Client, h *history, n int, pause time.Duration) *sync.WaitGroup {
	var writers sync.WaitGroup
	for range n {
		writers.Go(func() {
			for ctx.Err() == nil {
				o := newOp(t, h.phase.Load().(string), int(h.seq.Add(1)))
				o.start = time.Now()
				o.resp, o.requestID = send(c, o)
				o.end = time.Now()
				h.add(o)
				select {
				case <-ctx.Done():
				case <-time.After(pause):
				}
			}
		})
	}
	return &writers
}

// window is when an outage began and ended.
type window struct{ cut, restored time.Time }

// outage cuts links while the writers run, checks what clients and probes see, restores
// the links, and waits until creates are acknowledged again.
func outage(t *testing.T, s *suite, h *history, name, sdAddr string, links ...*fault.Proxy) window {
	t.Helper()
	cutAt := time.Now() // before the cut: connections already drop while Cut runs
	for _, l := range links {
		l.Cut()
	}
	h.phase.Store(name)
	down := waitFor(t, 5*time.Second, name+": servicedesk NOT_SERVING", func() bool {
		st, err := health(t.Context(), sdAddr, "")
		return err == nil && st == healthpb.HealthCheckResponse_NOT_SERVING
	})
	if st, err := health(t.Context(), sdAddr, livenessService); err != nil || st != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("%s: liveness = %v, %v; want SERVING whatever the database does", name, st, err)
	}
	if r := get(t, s.stack.GatewayURL+"/healthz"); r.status != http.StatusServiceUnavailable {
		t.Errorf("%s: gateway /healthz = %d %s, want 503", name, r.status, r.body)
	}
	time.Sleep(time.Until(cutAt.Add(outageFor)))
	for _, l := range links {
		if err := l.Restore(); err != nil {
			t.Fatal(err)
		}
	}
	restoredAt := time.Now()
	after := name + ", after"
	h.phase.Store(after)
	waitFor(t, 5*time.Second, name+": servicedesk SERVING again", func() bool {
		st, err := health(t.Context(), sdAddr, "")
		return err == nil && st == healthpb.HealthCheckResponse_SERVING
	})
	up := time.Since(restoredAt)
	waitFor(t, 10*time.Second, name+": a create acknowledged again", func() bool { return h.count(after, (*op).acked) > 0 })
	acked := time.Since(restoredAt)
	waitFor(t, 5*time.Second, name+": gateway /healthz 200 again", func() bool {
		return get(t, s.stack.GatewayURL+"/healthz").status == http.StatusOK
	})
	t.Logf("%s: servicedesk NOT_SERVING %v after the cut; restored after %v; after the restore: servicedesk SERVING within %v, a create acknowledged within %v, /healthz 200 within %v",
		name, down.Round(time.Millisecond), restoredAt.Sub(cutAt).Round(time.Millisecond), up.Round(time.Millisecond), acked.Round(time.Millisecond), time.Since(restoredAt).Round(time.Millisecond))
	return window{cut: cutAt, restored: restoredAt}
}

// checkFailures: every failure is a 503 ER-503 in the contract's body, within failWithin;
// a create sent and answered while the database is there (before the first outage, or
// from a second after a restore to the next outage) is acknowledged.
func checkFailures(t *testing.T, ops []*op, outages []window) {
	t.Helper()
	healthy := func(o *op) bool {
		from := time.Time{}
		for _, w := range outages {
			if o.start.After(from) && o.end.Before(w.cut) {
				return true
			}
			from = w.restored.Add(time.Second)
		}
		return o.start.After(from)
	}
	var slowest time.Duration
	byPhase := map[string][]time.Duration{}
	for _, o := range ops {
		if o.acked() {
			continue
		}
		if healthy(o) {
			t.Errorf("create %s (%s) failed while the database was there: %d %s %v", o.endToEndID, o.phase, o.resp.status, o.resp.body, o.resp.err)
		}
		took := o.end.Sub(o.start)
		byPhase[o.phase] = append(byPhase[o.phase], took)
		slowest = max(slowest, took)
		if msg := contractError(o.resp, http.StatusServiceUnavailable, "ER-503"); msg != "" {
			t.Errorf("create %s (%s) failed wrongly: %s", o.endToEndID, o.phase, msg)
		}
		if took > failWithin {
			t.Errorf("create %s (%s) failed after %v, want within %v", o.endToEndID, o.phase, took, failWithin)
		}
	}
	for phase, d := range byPhase {
		slices.Sort(d)
		t.Logf("%s: %d failures, latency min %v median %v max %v", phase, len(d),
			d[0].Round(time.Millisecond), d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
}

// storedRequest is a service request as search returns it.
type storedRequest struct {
	RequestID  string         `json:"requestId"`
	ServiceID  string         `json:"serviceId"`
	EndToEndID string         `json:"endToEndId"`
	Status     string         `json:"status"`
	CompanyID  string         `json:"companyId"`
	CreatedBy  string         `json:"createdBy"`
	EntityID   string         `json:"entityId"`
	Payload    map[string]any `json:"payload"`
}

// stored returns the requests stored per endToEndId among ops, searched through the gateway.
func stored(t *testing.T, s *suite, ops []*op) map[string][]storedRequest {
	t.Helper()
	c := s.client(demo.CompanyZTEST, maker)
	out := map[string][]storedRequest{}
	for chunk := range slices.Chunk(ops, 200) {
		ids := make([]string, len(chunk))
		for i, o := range chunk {
			ids[i] = o.endToEndID
		}
		var got struct {
			Total int             `json:"total"`
			Items []storedRequest `json:"items"`
		}
		mustOK(t, call(c, http.MethodPost, requestsPath, mustJSON(t, map[string]any{"endToEndIds": ids, "paginationLimit": 1024})), &got)
		if got.Total != len(got.Items) {
			t.Fatalf("search: total %d but %d items", got.Total, len(got.Items))
		}
		for _, r := range got.Items {
			out[r.EndToEndID] = append(out[r.EndToEndID], r)
		}
	}
	return out
}

// complete says what is missing or wrong in a stored request of o, or "".
func complete(o *op, r storedRequest) string {
	want := storedRequest{RequestID: r.RequestID, ServiceID: walletService, EndToEndID: o.endToEndID, Status: "PENDING CONFIRMATION",
		CompanyID: demo.CompanyZTEST, CreatedBy: demo.UserEmail("ztest", maker), EntityID: r.EntityID, Payload: o.payload}
	if r.RequestID == "" || r.EntityID == "" {
		return fmt.Sprintf("no requestId or entityId: %+v", r)
	}
	return cmp.Diff(want, r)
}

// checkHistory checks the stored requests against the recorded history, then retries
// every op and checks that each endToEndId has exactly one request.
func checkHistory(t *testing.T, s *suite, ops []*op) {
	t.Helper()
	c := s.client(demo.CompanyZTEST, maker)
	got := stored(t, s, ops)
	var acked, failedAbsent, failedStored int
	for _, o := range ops {
		found := got[o.endToEndID]
		switch {
		case o.acked():
			acked++
			if len(found) != 1 || found[0].RequestID != o.requestID {
				t.Errorf("acknowledged create %s (%s, requestId %s): stored %+v, want exactly that request once", o.endToEndID, o.phase, o.requestID, found)
				continue
			}
		case len(found) == 0:
			failedAbsent++
			continue
		case len(found) == 1:
			failedStored++
		default:
			t.Errorf("failed create %s (%s): stored %d times: %+v", o.endToEndID, o.phase, len(found), found)
			continue
		}
		if diff := complete(o, found[0]); diff != "" {
			t.Errorf("create %s (%s) is stored incomplete (-want +got):\n%s", o.endToEndID, o.phase, diff)
		}
	}
	t.Logf("history: %d creates, %d acknowledged; of the failed ones %d absent, %d committed anyway (unknown outcome)",
		len(ops), acked, failedAbsent, failedStored)

	// The idempotency guarantee: the same create again answers the stored request.
	answered := map[string]string{}
	for _, o := range ops {
		r, id := send(c, o)
		if id == "" {
			t.Errorf("retry of %s (%s): %d %s %v, want 200", o.endToEndID, o.phase, r.status, r.body, r.err)
			continue
		}
		answered[o.endToEndID] = id
		if found := got[o.endToEndID]; len(found) == 1 && found[0].RequestID != id {
			t.Errorf("retry of %s (%s) answered %s, but %s was stored", o.endToEndID, o.phase, id, found[0].RequestID)
		}
	}
	after := stored(t, s, ops)
	for _, o := range ops {
		found := after[o.endToEndID]
		if len(found) != 1 || found[0].RequestID != answered[o.endToEndID] {
			t.Errorf("after the retries, %s has %+v, want exactly request %s", o.endToEndID, found, answered[o.endToEndID])
		}
	}
}

func get(t *testing.T, url string) response {
	t.Helper()
	start := time.Now()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return response{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	var body json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return response{status: resp.StatusCode, header: resp.Header, body: body, elapsed: time.Since(start)}
}

// TestLostAnswers makes outcomes ambiguous on purpose, between the gateway and servicedesk:
// of every three creates, one is refused before servicedesk sees it, one is carried out by
// servicedesk but its answer is lost on the way back (the client gets a 503 for a write
// that committed), one passes. Every failure is a 503 ER-503 in the contract's body; the
// refused creates are not stored, the lost ones are stored exactly once and complete, and
// the same create sent again answers the stored requestId: one request per endToEndId.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	s := newSuite(t, setup{})
	relay := newRelay(t, s.stack.Services["servicedesk"])
	var n atomic.Int64
	var mu sync.Mutex
	fate := map[string]string{} // endToEndId → "refused", "lost"
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		if c.Method != servicedeskv1.ServicedeskService_CreateRequest_FullMethodName {
			return forward()
		}
		var req servicedeskv1.CreateRequestRequest
		if err := proto.Unmarshal(c.Request, &req); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		switch n.Add(1) % 3 {
		case 0:
			mu.Lock()
			fate[req.GetEndToEndId()] = "refused"
			mu.Unlock()
			return status.Error(codes.Unavailable, "connection refused by the fault test")
		case 1:
			if err := forward(); err != nil {
				return err
			}
			mu.Lock()
			fate[req.GetEndToEndId()] = "lost"
			mu.Unlock()
			return status.Error(codes.Unavailable, "connection reset by the fault test")
		}
		return forward()
	})
	g := startGateway(t, s, func(c *gatewayapp.Config) { c.ServicedeskAddr = relay.Addr() })
	h := &history{}
	h.phase.Store("ambiguous")
	ctx, stop := context.WithCancel(t.Context())
	writers := runWriters(ctx, t, clientAt(t, g.url, demo.CompanyZTEST, maker), h, 4, 0)
	// A bound on liveness, not a speed target: 90 creates on a loaded two-core machine.
	waitFor(t, 60*time.Second, "creates sent", func() bool { return len(h.snapshot()) >= 90 })
	stop()
	writers.Wait()

	ops := h.snapshot()
	got := stored(t, s, ops)
	counts := map[string]int{}
	for _, o := range ops {
		mu.Lock()
		why := fate[o.endToEndID]
		mu.Unlock()
		counts[why]++
		switch {
		case why == "" && !o.acked():
			t.Errorf("create %s passed through but failed: %d %s", o.endToEndID, o.resp.status, o.resp.body)
		case why != "" && o.acked():
			t.Errorf("create %s was %s but acknowledged", o.endToEndID, why)
		case why != "":
			if msg := contractError(o.resp, http.StatusServiceUnavailable, "ER-503"); msg != "" {
				t.Errorf("create %s (%s): %s", o.endToEndID, why, msg)
			}
		}
		if want := map[string]int{"refused": 0, "lost": 1, "": 1}[why]; len(got[o.endToEndID]) != want {
			t.Errorf("create %s (%q): stored %d times, want %d", o.endToEndID, why, len(got[o.endToEndID]), want)
		}
	}
	t.Logf("%d creates: %d passed, %d refused before servicedesk, %d with the answer lost", len(ops), counts[""], counts["refused"], counts["lost"])
	if counts["refused"] == 0 || counts["lost"] == 0 {
		t.Fatalf("the relay made no ambiguous outcomes: %v", counts)
	}
	checkHistory(t, s, ops)
}
