// Package report turns a bench run into a markdown table and PNG plots.
package report

import (
	"fmt"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/inproc"
	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
	"github.com/zcustody/suite/deploy/bench/internal/measure"
	"github.com/zcustody/suite/deploy/bench/internal/scenario"
)

// Targets of DESIGN.md §8.
const (
	TargetGatewayOverDirect = 0.85
	TargetServiceOverRaw    = 0.80
	TargetIdleRSS           = 30 << 20
	TargetStartUp           = time.Second
)

// Targets of DESIGN.md §9 for a journal entry: at most this many times the time of the entry
// or updates it is compared with.
const (
	TargetManyLegsOverOneLeg = 2.0
	TargetWalletsOverUpdates = 1.2
)

// Results is everything one run measured.
type Results struct {
	Started     time.Time
	N           int
	Duration    time.Duration
	Concurrency []int
	Database    string
	Placement   string
	Load        time.Duration
	Procs       []Proc
	Scenarios   []Scenario
	Overload    *measure.OverloadResult
	// InProcess is the gateway over stub backends (no database behind the services).
	InProcess []inproc.Result
	// IdleCPU is each process's CPU use while the suite idled (CPU seconds per second).
	IdleCPU map[string]float64
	// Journal is the journal entry cost scenario (nil when skipped); JournalErr why it stopped
	// short, if it did (Journal then holds what was measured before).
	Journal    *journalcost.Result
	JournalErr string
	// Delivery is the webhook delivery scenario (nil when skipped); DeliveryErr why it
	// failed, if it did.
	Delivery    *scenario.DeliveryResult
	DeliveryErr string
}

// Proc is one process's start-up and memory.
type Proc struct {
	Name    string
	StartUp time.Duration
	Idle    int64 // VmRSS once started and settled, bytes
	Peak    int64 // VmHWM at the end of the run, bytes
}

// Service reports whether the process is one of the five services (the targets apply to them).
func (p Proc) Service() bool { return p.Name != "ferretdb" && p.Name != "gateway" }

// Scenario is one operation measured through every layer.
type Scenario struct {
	Name, Title string
	Points      []measure.Point
}

// Best is the layer's point with the highest throughput.
func (s Scenario) Best(layer string) measure.Point {
	var best measure.Point
	for _, p := range s.Points {
		if p.Layer == layer && p.Throughput > best.Throughput {
			best = p
		}
	}
	return best
}

// At is the layer's point at concurrency c.
func (s Scenario) At(layer string, c int) (measure.Point, bool) {
	for _, p := range s.Points {
		if p.Layer == layer && p.Concurrency == c {
			return p, true
		}
	}
	return measure.Point{}, false
}

// Ratio is one of the two throughput ratios against its target.
type Ratio struct {
	Name        string // "gateway / direct gRPC"
	Over, Under measure.Point
	Target      float64
}

// Value is the ratio of the best throughputs.
func (r Ratio) Value() float64 {
	if r.Under.Throughput == 0 {
		return 0
	}
	return r.Over.Throughput / r.Under.Throughput
}

// Met reports whether the ratio meets its target.
func (r Ratio) Met() bool { return r.Value() >= r.Target }

// Ratios are gateway/direct and service/raw at each layer's best throughput.
func (s Scenario) Ratios() []Ratio {
	gw, direct, raw := s.Best(scenario.LayerGateway), s.Best(scenario.LayerDirect), s.Best(scenario.LayerRaw)
	return []Ratio{
		{Name: "gateway / direct gRPC", Over: gw, Under: direct, Target: TargetGatewayOverDirect},
		{Name: "service (direct gRPC) / raw driver", Over: direct, Under: raw, Target: TargetServiceOverRaw},
	}
}

// database is the process name of the embedded database.
const database = "ferretdb"

// CPUPerRequest is each process's CPU time per successful request of the layer, over all of
// its steps (more requests than one step: the CPU clock ticks at 10 ms), less what the
// process spends idle (idle: CPU seconds per second, as measured before the load).
func (s Scenario) CPUPerRequest(layer string, idle map[string]float64) map[string]time.Duration {
	total := map[string]time.Duration{}
	var ok float64
	for _, p := range s.Points {
		if p.Layer != layer {
			continue
		}
		ok += float64(p.Requests) * p.Success
		for name, d := range p.CPU {
			total[name] += max(0, d-time.Duration(idle[name]*float64(p.Elapsed)))
		}
	}
	out := map[string]time.Duration{}
	if ok == 0 {
		return out
	}
	for name, d := range total {
		out[name] = time.Duration(float64(d) / ok)
	}
	return out
}

// SuiteCPU sums per-request CPU over the suite's processes (not the bench), with or without
// the database.
func SuiteCPU(perRequest map[string]time.Duration, withDatabase bool) time.Duration {
	var sum time.Duration
	for name, d := range perRequest {
		if name == "bench" || (!withDatabase && name == database) {
			continue
		}
		sum += d
	}
	return sum
}

// TimeRatio is one of the journal's ratios of median times against its target (a ceiling).
type TimeRatio struct {
	Name        string // "PAY_IN 1,000 legs on one wallet / PAY_IN 1 leg"
	Over, Under time.Duration
	// Runs are how many measured runs each median is over.
	OverRuns, UnderRuns int
	Target              float64
}

// Value is the ratio of the medians.
func (r TimeRatio) Value() float64 {
	if r.Under == 0 {
		return 0
	}
	return float64(r.Over) / float64(r.Under)
}

// Met reports whether the ratio is within its target.
func (r TimeRatio) Met() bool { return r.Under > 0 && r.Value() <= r.Target }

// Verdict is "met" or "**not met**".
func (r TimeRatio) Verdict() string { return verdict(r.Met()) }

// JournalRatios are DESIGN.md §9's two: N legs on one wallet over one leg, and N wallets over
// N single account updates, at the medians.
func JournalRatios(j journalcost.Result) []TimeRatio {
	n := thousands(j.Legs)
	ratio := func(name string, over, under journalcost.Measurement, target float64) TimeRatio {
		return TimeRatio{Name: name, Over: over.Median(), Under: under.Median(), OverRuns: len(over.Runs), UnderRuns: len(under.Runs), Target: target}
	}
	return []TimeRatio{
		ratio(fmt.Sprintf("PAY_IN %s legs on one wallet / PAY_IN 1 leg", n), j.OneWallet, j.OneLeg, TargetManyLegsOverOneLeg),
		ratio(fmt.Sprintf("PAY_IN on %s wallets / %s single account updates", n, n), j.Wallets, j.Updates, TargetWalletsOverUpdates),
	}
}
