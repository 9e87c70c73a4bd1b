package measure

import (
	"net/http"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestStepPacer(t *testing.T) {
	t.Parallel()
	p := stepPacer{{rate: 100, length: 2 * time.Second}, {rate: 10, length: 2 * time.Second}}
	tests := []struct {
		name      string
		elapsed   time.Duration
		hits      uint64
		wantWait  time.Duration
		wantStop  bool
		wantRate  float64
		wantHitsB float64
	}{
		{name: "behind sends at once", elapsed: time.Second, hits: 50, wantWait: 0, wantRate: 100, wantHitsB: 100},
		{name: "on time waits for the next slot", elapsed: time.Second, hits: 100, wantWait: 10 * time.Millisecond, wantRate: 100, wantHitsB: 100},
		{name: "second step is slower", elapsed: 3 * time.Second, hits: 210, wantWait: 100 * time.Millisecond, wantRate: 10, wantHitsB: 210},
		{name: "past the last step stops", elapsed: 4 * time.Second, hits: 220, wantStop: true, wantRate: 0, wantHitsB: 220},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wait, stop := p.Pace(tt.elapsed, tt.hits)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%s, %d) = %s, %v; want %s, %v", tt.elapsed, tt.hits, wait, stop, tt.wantWait, tt.wantStop)
			}
			if got := p.Rate(tt.elapsed); got != tt.wantRate {
				t.Errorf("Rate(%s) = %v, want %v", tt.elapsed, got, tt.wantRate)
			}
			if got := p.hitsBy(tt.elapsed); got != tt.wantHitsB {
				t.Errorf("hitsBy(%s) = %v, want %v", tt.elapsed, got, tt.wantHitsB)
			}
		})
	}
}

func TestOverloadClassifiesAndPeaks(t *testing.T) {
	t.Parallel()
	o := OverloadResult{Phases: []Phase{{Duration: 2 * time.Second}, {Duration: 2 * time.Second}}}
	for _, r := range []struct {
		at      time.Duration
		code    uint16
		latency time.Duration
	}{
		{0, http.StatusOK, 1500 * time.Millisecond}, // phase 1, overlaps the next two
		{100 * time.Millisecond, http.StatusServiceUnavailable, time.Millisecond},
		{200 * time.Millisecond, http.StatusTooManyRequests, time.Millisecond},
		{1100 * time.Millisecond, 0, time.Second},                       // a timeout
		{2500 * time.Millisecond, http.StatusOK, 10 * time.Millisecond}, // phase 2
	} {
		res := &vegeta.Result{Code: r.code, Latency: r.latency}
		o.add(res, r.at)
		o.spans = append(o.spans, span{from: r.at, to: r.at + r.latency})
	}
	o.peaks()
	p1, p2 := o.Phases[0], o.Phases[1]
	if p1.Sent != 4 || p1.OK != 1 || p1.Shed != 2 || p1.Other != 1 {
		t.Errorf("phase 1 = sent %d ok %d shed %d other %d, want 4 1 2 1", p1.Sent, p1.OK, p1.Shed, p1.Other)
	}
	if p2.Sent != 1 || p2.OK != 1 || len(p2.Seconds) != 1 {
		t.Errorf("phase 2 = sent %d ok %d seconds %d, want 1 1 1", p2.Sent, p2.OK, len(p2.Seconds))
	}
	if p1.PeakInFlight != 2 || p2.PeakInFlight != 1 {
		t.Errorf("peak in flight = %d, %d; want 2, 1", p1.PeakInFlight, p2.PeakInFlight)
	}
}
