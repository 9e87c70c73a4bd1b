package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/measure"
	"github.com/zcustody/suite/deploy/bench/internal/report"
	"github.com/zcustody/suite/deploy/bench/internal/scenario"
)

func point(layer string, c int, tp float64) measure.Point {
	return measure.Point{Scenario: "read", Layer: layer, Concurrency: c, Requests: 100, Success: 1, Throughput: tp,
		P50: time.Millisecond, P99: 2 * time.Millisecond, CPU: map[string]time.Duration{"gateway": 100 * time.Millisecond}}
}

func TestRatiosUseEachLayersBest(t *testing.T) {
	t.Parallel()
	s := report.Scenario{Name: "read", Points: []measure.Point{
		point(scenario.LayerGateway, 1, 80), point(scenario.LayerDirect, 1, 100), point(scenario.LayerRaw, 1, 110),
		point(scenario.LayerGateway, 4, 90), point(scenario.LayerDirect, 4, 95), point(scenario.LayerRaw, 4, 140),
	}}
	r := s.Ratios()
	if got := r[0].Value(); got != 0.9 || !r[0].Met() {
		t.Errorf("gateway/direct = %v (met %v), want 0.9 met (90 over the best direct, 100)", got, r[0].Met())
	}
	if got := r[1].Value(); got < 0.714 || got > 0.715 || r[1].Met() {
		t.Errorf("direct/raw = %v (met %v), want 100/140 not met", got, r[1].Met())
	}
	if got := s.CPUPerRequest(scenario.LayerGateway, nil)["gateway"]; got != time.Millisecond {
		t.Errorf("CPU per request = %s, want 1ms (200ms over 200 requests)", got)
	}
	for i := range s.Points {
		s.Points[i].Elapsed = 100 * time.Millisecond
	}
	if got := s.CPUPerRequest(scenario.LayerGateway, map[string]float64{"gateway": 0.5})["gateway"]; got != 500*time.Microsecond {
		t.Errorf("CPU per request less idle = %s, want 0.5ms ((200ms - 2 × 50ms idle) over 200 requests)", got)
	}
}

func TestMarkdownNamesTargetsAndFlagsFailures(t *testing.T) {
	t.Parallel()
	bad := point(scenario.LayerRaw, 1, 50)
	bad.Success, bad.Errors = 0.5, []string{"500 boom"}
	r := report.Results{N: 1000, Duration: time.Second, Concurrency: []int{1}, Scenarios: []report.Scenario{{Name: "read", Title: "t",
		Points: []measure.Point{point(scenario.LayerGateway, 1, 80), point(scenario.LayerDirect, 1, 100), bad}}},
		Procs: []report.Proc{{Name: "trading", StartUp: 2 * time.Second, Idle: 20 << 20}}}
	var b strings.Builder
	if err := r.Markdown(&b, "latency.png"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| read | gateway / direct gRPC | 0.80 |", "**not met**", "⚠ raw driver at c=1: 50.0% ok", "![latency.png](latency.png)",
		"start-up ≤ 1 s: **not met**; idle ≤ 30 MiB: met"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPlotsRender(t *testing.T) {
	t.Parallel()
	var points []measure.Point
	for i, c := range []int{1, 4, 16, 64} {
		for j, l := range []string{scenario.LayerGateway, scenario.LayerDirect, scenario.LayerRaw} {
			p := point(l, c, 10)
			p.P50 = time.Duration(c*(10+j)) * time.Millisecond
			p.P99 = time.Duration(2*c*(10+i)) * time.Millisecond
			points = append(points, p)
		}
	}
	r := report.Results{Scenarios: []report.Scenario{{Name: "read", Points: points}, {Name: "write", Points: points}}}
	o := measure.OverloadResult{Capacity: 10, Phases: []measure.Phase{
		{Name: "2×", Rate: 20, Duration: 2 * time.Second, Seconds: []measure.Second{{OK: 10, Shed: 10, OKP99: time.Second, ShedP99: time.Millisecond}, {OK: 9, Shed: 11, OKP99: time.Second, ShedP99: 2 * time.Millisecond}}},
		{Name: "0.5×", Rate: 5, Duration: 2 * time.Second, Seconds: []measure.Second{{OK: 5, OKP99: 300 * time.Millisecond}, {OK: 5, OKP99: 100 * time.Millisecond}}},
	}}
	dir := t.TempDir()
	if err := r.LatencyPlot(filepath.Join(dir, "latency.png")); err != nil {
		t.Fatal(err)
	}
	if err := report.OverloadPlot(filepath.Join(dir, "overload.png"), o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"latency.png", "overload.png"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v, %v; want a PNG", name, fi, err)
		}
	}
}
