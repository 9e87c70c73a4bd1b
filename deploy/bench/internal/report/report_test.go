package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
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

// TestPlotAtOneConcurrency: a short run at one concurrency (BENCH_CONCURRENCY=1) still
// draws its latency plot; a logarithmic axis over one value used to panic.
func TestPlotAtOneConcurrency(t *testing.T) {
	t.Parallel()
	var points []measure.Point
	for _, l := range []string{scenario.LayerGateway, scenario.LayerDirect, scenario.LayerRaw} {
		p := point(l, 1, 10)
		p.P50, p.P99 = 40*time.Millisecond, 40*time.Millisecond
		points = append(points, p)
	}
	path := filepath.Join(t.TempDir(), "latency.png")
	if err := (report.Results{Scenarios: []report.Scenario{{Name: "read", Points: points}}}).LatencyPlot(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() < 1000 {
		t.Errorf("latency.png: %v, %v; want a PNG", fi, err)
	}
}

func TestJournalSectionNamesTargets(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	runs := func(d ...time.Duration) journalcost.Measurement { return journalcost.Measurement{Runs: d} }
	j := journalcost.Result{Legs: 1000, Funding: runs(70 * time.Second),
		OneLeg: runs(ms(100), ms(120), ms(80)), OneWallet: runs(ms(150), ms(900), ms(190)),
		Wallets: journalcost.Measurement{Runs: []time.Duration{65 * time.Second}, Commands: journalcost.Commands{
			"update wallets": {N: 1000, Time: 40 * time.Second}, "find wallets": {N: 1003, Time: 20 * time.Second}, "update journal_entries": {N: 2, Time: ms(30)}}},
		Updates: journalcost.Measurement{Runs: []time.Duration{50 * time.Second}, Commands: journalcost.Commands{
			"update wallets": {N: 1000, Time: 45 * time.Second}, "find wallets": {N: 1000, Time: 4 * time.Second}}},
		UpdateWrites: []time.Duration{45 * time.Second}}
	q := report.JournalRatios(j)
	if got := q[0].Value(); got != 1.9 || !q[0].Met() {
		t.Errorf("one wallet / one leg = %v (met %v), want 190/100 met (the medians)", got, q[0].Met())
	}
	if got := q[1].Value(); got != 1.3 || q[1].Met() {
		t.Errorf("wallets / updates = %v (met %v), want 1.3 not met", got, q[1].Met())
	}
	var b strings.Builder
	if err := (report.Results{N: 1000, Journal: &j}).Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| PAY_IN 1,000 legs on one wallet / PAY_IN 1 leg | 1.90 | 190.0 ms (3) / 100.0 ms (3) | ≤ 2.0 | met |",
		"| PAY_IN on 1,000 wallets / 1,000 single account updates | 1.30 | 65.0 s (1) / 50.0 s (1) | ≤ 1.2 | **not met** |",
		"| – of them, the guarded updates alone | 1 | 45.0 s |", "| 65.0 s | find 1003, update 1002 |",
		"| update wallets | 1,000 · 40.0 s | 1,000 · 45.0 s |", "| update journal_entries | 2 · 30.0 ms | – |",
		"| all commands | 2,005 · 60.0 s | 2,000 · 49.0 s |", "| find wallets | 1,003 · 20.0 s | 1,000 · 4.00 s |", "| the rest | 4.97 s | 1.00 s |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "## Processes") || strings.Contains(b.String(), "best throughput") {
		t.Errorf("a journal-only run shows empty sections:\n%s", b.String())
	}
}

func TestJournalCutShortSaysSo(t *testing.T) {
	t.Parallel()
	j := journalcost.Result{Legs: 10, OneLeg: journalcost.Measurement{Runs: []time.Duration{time.Second}},
		OneWallet: journalcost.Measurement{Runs: []time.Duration{time.Second}}}
	var b strings.Builder
	if err := (report.Results{Journal: &j, JournalErr: "entry x: context deadline exceeded"}).Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| PAY_IN on 10 wallets / 10 single account updates | – | not measured | ≤ 1.2 | – |",
		"⚠ the scenario stopped: entry x: context deadline exceeded", "| PAY_IN 10 legs on one wallet / PAY_IN 1 leg | 1.00 | 1.00 s (1) / 1.00 s (1) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}
