package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/gateway/internal/edge"
	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/platform/apperr"
)

func TestShedRefusesBeyondCapacity(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	h := edge.Shed(edge.ShedOptions{MaxInFlight: 2}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusNoContent)
	}))
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
			codes[i] = rec.Code
		})
	}
	<-entered
	<-entered
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("third request at capacity: %d (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	close(release)
	wg.Wait()
	if codes[0] != http.StatusNoContent || codes[1] != http.StatusNoContent {
		t.Errorf("admitted requests answered %v, want 204s", codes)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("after the load dropped: %d, want 204", rec.Code)
	}
}

// TestShedUnderAStandingQueue: when every request waits longer than the target, the limit
// falls below what is in flight and new requests are refused at once; without a target the
// fixed bound keeps admitting up to MaxInFlight. Either way the gateway admits again once
// the queue has drained.
func TestShedUnderAStandingQueue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		give      time.Duration
		wantLimit int
		wantAdmit int // new requests admitted while 6 slow ones are still in flight
	}{
		{name: "adaptive", give: time.Second, wantLimit: 3, wantAdmit: 0}, // 2 answers in 0.3 s: ~3 a second × 1 s
		{name: "fixed bound", give: 0, wantLimit: 8, wantAdmit: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, edge.ShedOptions{MaxInFlight: 8, Target: tt.give})
			held := h.fill()
			if len(held) != 8 {
				t.Fatalf("admitted %d at first, want the ceiling of 8", len(held))
			}
			h.finish(held[0], 2*time.Second, http.StatusNoContent)
			h.finish(held[1], 300*time.Millisecond, http.StatusNoContent)
			if got := h.shed.Limit(); got != tt.wantLimit {
				t.Errorf("limit after a window of slow requests = %d, want %d", got, tt.wantLimit)
			}
			more := h.fill()
			if len(more) != tt.wantAdmit {
				t.Errorf("admitted %d more with 6 slow requests in flight, want %d", len(more), tt.wantAdmit)
			}
			// The queue drains as slowly as it built up, at the pace the limit was set for,
			// so once it has drained the limit holds where the cut left it.
			for _, c := range append(held[2:], more...) {
				h.finish(c, 300*time.Millisecond, http.StatusNoContent)
			}
			if got := len(h.fill()); got != tt.wantLimit {
				t.Errorf("admitted %d once the queue drained, want %d", got, tt.wantLimit)
			}
		})
	}
}

// TestShedRecovers: once requests are fast again, the limit climbs back to MaxInFlight while
// the traffic keeps reaching it, and never beyond.
func TestShedRecovers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, edge.ShedOptions{MaxInFlight: 16, Target: time.Second})
	held := h.fill()
	h.finish(held[0], 2*time.Second, http.StatusNoContent)
	h.finish(held[1], 300*time.Millisecond, http.StatusNoContent)
	cut := h.shed.Limit()
	if cut >= 14 {
		t.Fatalf("limit after a standing queue = %d, want under the 14 in flight", cut)
	}
	for _, c := range held[2:] {
		h.finish(c, 0, http.StatusNoContent)
	}
	var admitted []int
	for range 30 {
		round := h.fill()
		admitted = append(admitted, len(round))
		h.finish(round[0], 100*time.Millisecond, http.StatusNoContent)
		for _, c := range round[1 : len(round)-1] {
			h.finish(c, 0, http.StatusNoContent)
		}
		h.finish(round[len(round)-1], 300*time.Millisecond, http.StatusNoContent)
	}
	if admitted[0] != cut {
		t.Errorf("first busy round admitted %d, want the cut limit %d", admitted[0], cut)
	}
	for i := 1; i < len(admitted); i++ {
		if admitted[i] < admitted[i-1] || admitted[i] > 16 {
			t.Fatalf("admitted per round %v: want non-decreasing and at most 16", admitted)
		}
	}
	if last := admitted[len(admitted)-1]; last != 16 {
		t.Errorf("admitted per round %v: want back at the ceiling of 16", admitted)
	}
}

// TestShedHoldsWhatTheBackendServes: a backend that answers 10 requests a second, one at a
// time in arrival order, behind a backlog of 64. While the backlog drains every request
// waits longer than the target, yet the limit settles near what the backend answers within
// it (10 a second × 1 s), not at the floor: the backend is never left idle, and once the
// backlog is gone about ten requests at a time are admitted and answered within the target.
func TestShedHoldsWhatTheBackendServes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, edge.ShedOptions{MaxInFlight: 64, Target: time.Second})
	queue := h.fill()
	var admittedAt []time.Time
	for range queue {
		admittedAt = append(admittedAt, h.clock.now())
	}
	var lastWaits []time.Duration
	for range 150 { // 15 s
		done := queue[0]
		wait := h.clock.now().Add(100 * time.Millisecond).Sub(admittedAt[0])
		queue, admittedAt = queue[1:], admittedAt[1:]
		h.finish(done, 100*time.Millisecond, http.StatusNoContent)
		lastWaits = append(lastWaits, wait)
		if len(queue) == 0 {
			t.Fatalf("the backend ran out of work at limit %d", h.shed.Limit())
		}
		for _, c := range h.fill() {
			queue = append(queue, c)
			admittedAt = append(admittedAt, h.clock.now())
		}
	}
	if got := h.shed.Limit(); got < 8 || got > 14 {
		t.Errorf("limit after the backlog drained = %d, want near the 10 the backend answers within the target", got)
	}
	for _, w := range lastWaits[len(lastWaits)-20:] {
		if w > 1500*time.Millisecond {
			t.Errorf("waits of the last 20 answers %v: want about the target of 1s", lastWaits[len(lastWaits)-20:])
			break
		}
	}
}

// TestShedIgnoresOccasionalSlowRequests: a slow request now and then, among fast ones, is
// not a queue; nothing is refused.
func TestShedIgnoresOccasionalSlowRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, edge.ShedOptions{MaxInFlight: 16, Target: time.Second})
	var slow []*call
	for range 30 {
		slow = append(slow, h.mustHold())
		h.finish(h.mustHold(), 100*time.Millisecond, http.StatusNoContent)
		if len(slow) == 8 {
			h.finish(slow[0], 300*time.Millisecond, http.StatusNoContent) // held 8 rounds: 3.2 s
			slow = slow[1:]
			continue
		}
		h.clock.advance(300 * time.Millisecond)
	}
	if got := len(h.fill()); got != 16-len(slow) {
		t.Errorf("admitted %d beside %d slow requests, want all %d free slots", got, len(slow), 16-len(slow))
	}
}

// TestShedConcurrent: many clients at once, with latencies on both sides of the target,
// never see more than MaxInFlight admitted, and every refusal is a proper 503.
func TestShedConcurrent(t *testing.T) {
	t.Parallel()
	const ceiling = 6
	clock := &fakeClock{t: time.Unix(0, 0)}
	var inside, most atomic.Int64
	h := edge.Shed(edge.ShedOptions{MaxInFlight: ceiling, Target: time.Second, Now: clock.now},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raise(&most, inside.Add(1))
			defer inside.Add(-1)
			d, _ := time.ParseDuration(r.URL.Query().Get("d"))
			clock.advance(d)
			w.WriteHeader(http.StatusNoContent)
		}))
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				d := []string{"10ms", "50ms", "1500ms"}[(g+i)%3]
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?d="+d, nil))
				if rec.Code != http.StatusNoContent && (rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "") {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if bad.Load() != 0 || most.Load() > ceiling {
		t.Errorf("%d bad answers, at most %d served at once: want none and at most %d", bad.Load(), most.Load(), ceiling)
	}
	if got := h.Limit(); got < 2 || got > ceiling {
		t.Errorf("limit = %d, want within 2..%d", got, ceiling)
	}
}

// raise sets v to n if n is larger.
func raise(v *atomic.Int64, n int64) {
	for m := v.Load(); n > m; m = v.Load() {
		if v.CompareAndSwap(m, n) {
			return
		}
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness drives a Shedder over a backend that holds every admitted request until the test
// releases it, on a clock the test moves.
type harness struct {
	t       *testing.T
	clock   *fakeClock
	shed    *edge.Shedder
	entered chan chan struct{}
	quit    chan struct{} // closed at the end of the test: lets every held request go
}

// call is one request: held in the backend (release set) or answered (rec set).
type call struct {
	release chan struct{}
	answer  chan *httptest.ResponseRecorder
	rec     *httptest.ResponseRecorder
}

func (c *call) held() bool { return c.release != nil }

func newHarness(t *testing.T, opts edge.ShedOptions) *harness {
	t.Helper()
	h := &harness{t: t, clock: &fakeClock{t: time.Unix(0, 0)}, entered: make(chan chan struct{}), quit: make(chan struct{})}
	t.Cleanup(func() { close(h.quit) })
	opts.Now = h.clock.now
	h.shed = edge.Shed(opts, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		release := make(chan struct{})
		h.entered <- release
		select {
		case <-release:
		case <-h.quit:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	return h
}

// send sends a request and returns once it is held in the backend or answered.
func (h *harness) send() *call {
	c := &call{answer: make(chan *httptest.ResponseRecorder, 1)}
	go func() {
		rec := httptest.NewRecorder()
		h.shed.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		c.answer <- rec
	}()
	select {
	case c.release = <-h.entered:
	case c.rec = <-c.answer:
	}
	return c
}

// mustHold sends a request that must be admitted.
func (h *harness) mustHold() *call {
	h.t.Helper()
	c := h.send()
	if !c.held() {
		h.t.Fatalf("request answered %d, want admitted", c.rec.Code)
	}
	return c
}

// fill sends requests until one is refused, checks the refusal, and returns those admitted.
func (h *harness) fill() []*call {
	h.t.Helper()
	var held []*call
	for c := h.send(); ; c = h.send() {
		if !c.held() {
			checkShed(h.t, c.rec)
			return held
		}
		held = append(held, c)
	}
}

// finish moves the clock by after, lets c's request go, and checks its answer.
func (h *harness) finish(c *call, after time.Duration, want int) {
	h.t.Helper()
	h.clock.advance(after)
	close(c.release)
	if rec := <-c.answer; rec.Code != want {
		h.t.Fatalf("released request answered %d, want %d", rec.Code, want)
	}
}

// checkShed checks a refusal: 503 at once, Retry-After, the contract's error body.
func checkShed(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("refused with %d (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	var body httperr.Body
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("refusal body %q: %v", rec.Body, err)
	}
	want := httperr.Body{Timestamp: body.Timestamp, Title: "Service Unavailable", Status: http.StatusServiceUnavailable,
		Details: []httperr.Detail{{Code: apperr.CodeUnavailable, Message: "the gateway is at capacity; retry shortly"}}}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("refusal body (-want +got):\n%s", diff)
	}
}
