package measure

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/zcustody/suite/deploy/bench/internal/scenario"
)

// Overload attack bounds: the open-model attack may hold this many requests in flight
// (a server that queues without bound shows as latency growing to the timeout).
const (
	overloadWorkers = 2000
	overloadTimeout = 10 * time.Second
)

// OverloadResult is the overload scenario: one open-model attack whose rate steps from twice
// the measured capacity down to half of it.
type OverloadResult struct {
	Capacity float64
	Phases   []Phase
	spans    []span // each request's send and answer, from the attack's start
}

type span struct{ from, to time.Duration }

// Phase is the part of the attack at one offered rate, by the time requests were sent.
type Phase struct {
	Name     string
	Rate     float64 // offered requests per second
	Duration time.Duration
	Sent     int
	OK       int // 2xx
	Shed     int // 429 and 503: refused by load shedding (or rate limits)
	Other    int // any other status, timeouts and transport errors
	// OtherErrors are the first distinct error texts of Other.
	OtherErrors []string
	// OKP50 … ShedP99 are the latencies of the answered and of the refused requests.
	OKP50, OKP99, ShedP50, ShedP99 time.Duration
	// PeakInFlight is the most requests outstanding at once during the phase: it grows
	// without bound when the server queues instead of shedding.
	PeakInFlight int
	// Seconds is the phase second by second.
	Seconds []Second
	okLat   vegeta.LatencyMetrics
	shedLat vegeta.LatencyMetrics
}

// Second counts one second of a phase (by send time) by outcome, with the 99th percentile
// latency of its answered and of its shed requests.
type Second struct {
	OK, Shed, Other int
	OKP99, ShedP99  time.Duration
	okLat, shedLat  vegeta.LatencyMetrics
}

// Overload attacks layer at 2× capacity for d, then at 0.5× for d, without waiting between
// the two, so the second phase shows how the server recovers from the first one's backlog.
func Overload(ctx context.Context, layer scenario.Layer, capacity float64, d time.Duration) OverloadResult {
	res := OverloadResult{Capacity: capacity, Phases: []Phase{
		{Name: "2× capacity", Rate: math.Round(2 * capacity), Duration: d},
		{Name: "0.5× capacity (recovery)", Rate: math.Max(1, math.Round(capacity/2)), Duration: d},
	}}
	if capacity <= 0 {
		return res
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []func(*vegeta.Attacker){vegeta.Workers(64), vegeta.MaxWorkers(overloadWorkers), vegeta.KeepAlive(true),
		vegeta.Connections(overloadWorkers), vegeta.Timeout(overloadTimeout)}
	if layer.Client != nil {
		opts = append(opts, vegeta.Client(layer.Client))
	}
	a := vegeta.NewAttacker(opts...)
	pacer := stepPacer{{rate: res.Phases[0].Rate, length: d}, {rate: res.Phases[1].Rate, length: d}}
	results := a.Attack(layer.Targets(ctx, int(res.Phases[0].Rate)), pacer, 2*d, "overload")
	stop := context.AfterFunc(ctx, func() { a.Stop() })
	defer stop()
	var began time.Time
	for r := range results {
		if began.IsZero() {
			began = r.Timestamp
		}
		at := r.Timestamp.Sub(began)
		res.add(r, at)
		res.spans = append(res.spans, span{from: at, to: at + r.Latency})
	}
	for i := range res.Phases {
		res.Phases[i].close()
	}
	res.peaks()
	return res
}

// peaks sets each phase's PeakInFlight from the requests' spans.
func (o *OverloadResult) peaks() {
	type event struct {
		at    time.Duration
		delta int
	}
	events := make([]event, 0, 2*len(o.spans))
	for _, s := range o.spans {
		events = append(events, event{s.from, 1}, event{s.to, -1})
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	inFlight := 0
	for _, e := range events {
		inFlight += e.delta
		i := 0
		if e.at >= o.Phases[0].Duration {
			i = 1
		}
		if e.at < o.Phases[0].Duration+o.Phases[1].Duration {
			o.Phases[i].PeakInFlight = max(o.Phases[i].PeakInFlight, inFlight)
		}
	}
}

func (o *OverloadResult) add(r *vegeta.Result, at time.Duration) {
	i := 0
	if at >= o.Phases[0].Duration {
		i, at = 1, at-o.Phases[0].Duration
	}
	ph := &o.Phases[i]
	sec := int(at / time.Second)
	for len(ph.Seconds) <= sec {
		ph.Seconds = append(ph.Seconds, Second{})
	}
	s := &ph.Seconds[sec]
	ph.Sent++
	switch {
	case r.Code >= 200 && r.Code < 300:
		ph.OK++
		s.OK++
		ph.okLat.Add(r.Latency)
		s.okLat.Add(r.Latency)
	case r.Code == http.StatusTooManyRequests || r.Code == http.StatusServiceUnavailable:
		ph.Shed++
		s.Shed++
		ph.shedLat.Add(r.Latency)
		s.shedLat.Add(r.Latency)
	default:
		ph.Other++
		s.Other++
		if len(ph.OtherErrors) < maxErrors && !slices.Contains(ph.OtherErrors, r.Error) {
			ph.OtherErrors = append(ph.OtherErrors, r.Error)
		}
	}
}

func (ph *Phase) close() {
	if ph.OK > 0 {
		ph.OKP50, ph.OKP99 = ph.okLat.Quantile(0.5), ph.okLat.Quantile(0.99)
	}
	if ph.Shed > 0 {
		ph.ShedP50, ph.ShedP99 = ph.shedLat.Quantile(0.5), ph.shedLat.Quantile(0.99)
	}
	for i := range ph.Seconds {
		s := &ph.Seconds[i]
		if s.OK > 0 {
			s.OKP99 = s.okLat.Quantile(0.99)
		}
		if s.Shed > 0 {
			s.ShedP99 = s.shedLat.Quantile(0.99)
		}
	}
}

// Share returns n as a share of the requests sent in the phase.
func (ph Phase) Share(n int) float64 {
	if ph.Sent == 0 {
		return 0
	}
	return float64(n) / float64(ph.Sent)
}

// LastSecondOK is the success share of the phase's last full second.
func (ph Phase) LastSecondOK() float64 {
	if len(ph.Seconds) == 0 {
		return 0
	}
	s := ph.Seconds[len(ph.Seconds)-1]
	if len(ph.Seconds) > 1 {
		s = ph.Seconds[len(ph.Seconds)-2] // the last one may be cut short
	}
	if total := s.OK + s.Shed + s.Other; total > 0 {
		return float64(s.OK) / float64(total)
	}
	return 0
}

func (ph Phase) String() string {
	return fmt.Sprintf("%-24s offered %6.0f req/s: ok %5.1f%% (p50 %s, p99 %s), shed %5.1f%% (p50 %s, p99 %s), other %5.1f%%, peak in flight %d",
		ph.Name, ph.Rate, 100*ph.Share(ph.OK), round(ph.OKP50), round(ph.OKP99),
		100*ph.Share(ph.Shed), round(ph.ShedP50), round(ph.ShedP99), 100*ph.Share(ph.Other), ph.PeakInFlight) + errorList(ph.OtherErrors)
}

func errorList(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("; other: %q", errs)
}

// stepPacer sends at each step's rate for the step's length, one step after another.
type stepPacer []pacerStep

type pacerStep struct {
	rate   float64 // per second
	length time.Duration
}

// hitsBy is how many hits are due by elapsed.
func (p stepPacer) hitsBy(elapsed time.Duration) float64 {
	var hits float64
	for _, s := range p {
		span := min(elapsed, s.length)
		hits += s.rate * span.Seconds()
		if elapsed -= span; elapsed <= 0 {
			break
		}
	}
	return hits
}

// dueAt is when hit number n (1-based) is due; ok is false past the last step.
func (p stepPacer) dueAt(n float64) (time.Duration, bool) {
	var at time.Duration
	for _, s := range p {
		inStep := s.rate * s.length.Seconds()
		if n <= inStep {
			return at + time.Duration(n/s.rate*float64(time.Second)), true
		}
		n -= inStep
		at += s.length
	}
	return at, false
}

// Pace implements vegeta.Pacer.
func (p stepPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if float64(hits) < p.hitsBy(elapsed) {
		return 0, false
	}
	due, ok := p.dueAt(float64(hits) + 1)
	if !ok {
		return 0, true
	}
	return max(0, due-elapsed), false
}

// Rate implements vegeta.Pacer.
func (p stepPacer) Rate(elapsed time.Duration) float64 {
	for _, s := range p {
		if elapsed < s.length {
			return s.rate
		}
		elapsed -= s.length
	}
	return 0
}
