package edge

import (
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/platform/apperr"
)

// The adaptive limit's rule (docs/decisions.md, "Load shedding follows the capacity").
const (
	// shedWindow is the least time between a window's first completion and the one that
	// closes it; the window's fastest completion is judged against the latency target.
	shedWindow = 250 * time.Millisecond
	// shedFloor is the lowest the limit falls (or MaxInFlight, if that is lower).
	shedFloor = 2
	// staleWindow: a window that lasted longer saw idle time, not the backends' pace; its
	// rate is not used.
	staleWindow = time.Second
	// rateWeight is the weight of a window's rate in the smoothed rate.
	rateWeight = 0.5
)

// ShedOptions configures Shed.
type ShedOptions struct {
	// MaxInFlight is the hard ceiling on requests served at once; 0 turns shedding off.
	MaxInFlight int
	// Target is the latency above which a window's fastest request shows a standing queue;
	// 0 keeps the limit fixed at MaxInFlight.
	Target time.Duration
	// Logger, if set, is told when the limit halves or doubles.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Shedder admits requests up to a concurrency limit and answers the rest at once with 503
// and Retry-After, so that an overloaded gateway sheds load instead of queueing without
// bound. With a latency target the limit follows the capacity: it falls when even the
// fastest request of a window waited longer than the target, and climbs back while the
// requests are fast and the limit is reached, never above MaxInFlight.
type Shedder struct {
	next     http.Handler
	opts     ShedOptions
	ceiling  int64
	floor    int64
	inFlight atomic.Int64
	limit    atomic.Int64
	refused  atomic.Int64
	reached  atomic.Bool // the limit was reached in the current window

	mu        sync.Mutex
	opened    time.Time     // the current window's first completion
	completed int           // completions in the current window
	fastest   time.Duration // the current window's fastest completion
	rate      float64       // completions per second, smoothed over recent windows
	logged    int64         // the limit last logged
}

// Shed wraps next in a Shedder.
func Shed(opts ShedOptions, next http.Handler) *Shedder {
	s := &Shedder{next: next, opts: opts, ceiling: int64(opts.MaxInFlight)}
	if opts.MaxInFlight <= 0 {
		s.ceiling, s.opts.Target = math.MaxInt64, 0
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.floor = min(shedFloor, s.ceiling)
	s.limit.Store(s.ceiling)
	s.logged = s.ceiling
	return s
}

// Limit returns the current limit on requests served at once.
func (s *Shedder) Limit() int {
	return int(s.limit.Load())
}

// InFlight returns the number of requests being served (an instant's reading: a request
// being refused counts for the moment it takes to refuse it).
func (s *Shedder) InFlight() int {
	return int(s.inFlight.Load())
}

// Refused returns how many requests the shedder has answered 503.
func (s *Shedder) Refused() int64 {
	return s.refused.Load()
}

// ServeHTTP admits r or answers 503 at once.
func (s *Shedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.admit() {
		s.refused.Add(1)
		w.Header().Set("Retry-After", "1")
		httperr.Write(w, http.StatusServiceUnavailable, apperr.CodeUnavailable, "the gateway is at capacity; retry shortly")
		return
	}
	if s.opts.Target <= 0 {
		defer s.inFlight.Add(-1)
		s.next.ServeHTTP(w, r)
		return
	}
	start := s.opts.Now()
	defer s.done(start)
	s.next.ServeHTTP(w, r)
}

// admit takes a slot if one is free under the current limit.
func (s *Shedder) admit() bool {
	limit := s.limit.Load()
	n := s.inFlight.Add(1)
	if n >= limit && !s.reached.Load() {
		s.reached.Store(true)
	}
	if n <= limit {
		return true
	}
	s.inFlight.Add(-1)
	return false
}

// done frees the slot of a request admitted at start and judges its latency.
func (s *Shedder) done(start time.Time) {
	s.inFlight.Add(-1)
	now := s.opts.Now()
	took := now.Sub(start)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completed == 0 {
		s.opened, s.fastest = now, took
	}
	s.completed++
	s.fastest = min(s.fastest, took)
	elapsed := now.Sub(s.opened)
	if elapsed < shedWindow {
		return
	}
	if elapsed <= staleWindow {
		rate := float64(s.completed-1) / elapsed.Seconds()
		if s.rate == 0 {
			s.rate = rate
		} else {
			s.rate += rateWeight * (rate - s.rate)
		}
	}
	s.adjust()
	s.completed = 0
}

// adjust closes a window. Under a standing queue (even its fastest request took longer than
// the target) the limit falls to what the backends answer within the target: the smoothed
// rate × the target (Little's law), at least the floor. A backlog admitted earlier keeps the
// latency high while it drains, but cutting below that would only leave the backends idle.
// While the requests are fast and the limit was reached, it rises by an eighth (at least
// one), up to the ceiling. s.mu is held.
func (s *Shedder) adjust() {
	limit := s.limit.Load()
	reached := s.reached.Swap(false)
	next := limit
	switch {
	case s.fastest > s.opts.Target:
		next = min(limit, max(s.floor, int64(s.rate*s.opts.Target.Seconds())))
	case reached:
		next = min(s.ceiling, limit+max(1, limit/8))
	}
	if next == limit {
		return
	}
	s.limit.Store(next)
	s.log(next)
}

// log reports the limit when it has halved or doubled since it was last reported.
func (s *Shedder) log(limit int64) {
	if s.opts.Logger == nil || (limit > s.logged/2 && limit < s.logged*2) {
		return
	}
	s.logged = limit
	s.opts.Logger.Info("load shedding limit changed", "limit", limit, "ceiling", s.ceiling,
		"in_flight", s.inFlight.Load(), "fastest", s.fastest)
}
