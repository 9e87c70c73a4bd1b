// Package measure drives the scenarios' layers with vegeta and summarises the results.
package measure

import (
	"context"
	"fmt"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/zcustody/suite/deploy/bench/internal/scenario"
)

// Point is one layer measured at one concurrency.
type Point struct {
	Scenario    string
	Layer       string
	Concurrency int
	Requests    uint64
	// Throughput is successful requests per second.
	Throughput float64
	P50, P99   time.Duration
	// Success is the share of 2xx answers.
	Success float64
	// Errors are the first distinct error texts.
	Errors []string
	// Starved is how many requests had to wait for the load generator to sign them.
	Starved int64
	// CPU is each process's CPU time during the step (nil without a meter).
	CPU map[string]time.Duration
	// Elapsed is the step's wall time, from the first request to the last answer.
	Elapsed time.Duration
}

// Meter reads the CPU time so far of each process (suite.Suite.CPU).
type Meter func() map[string]time.Duration

// maxErrors bounds the error texts a point keeps.
const maxErrors = 3

// Closed runs layer with a fixed number of workers for d: each worker sends its next request
// as soon as the previous one is answered (vegeta with rate 0 and max-workers = concurrency).
// meter, if set, is read before and after to attribute CPU time to the step.
func Closed(ctx context.Context, sc string, layer scenario.Layer, concurrency int, d time.Duration, meter Meter) Point {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []func(*vegeta.Attacker){vegeta.Workers(uint64(concurrency)), vegeta.MaxWorkers(uint64(concurrency)),
		vegeta.KeepAlive(true), vegeta.Connections(concurrency), vegeta.Timeout(30 * time.Second)}
	if layer.Client != nil {
		opts = append(opts, vegeta.Client(layer.Client))
	}
	starved := layer.Starved()
	before, start := sample(meter), time.Now()
	m := attack(ctx, vegeta.NewAttacker(opts...), layer.Targets(ctx, concurrency), vegeta.ConstantPacer{}, d, layer.Name)
	p := summarise(m)
	p.Scenario, p.Layer, p.Concurrency, p.Starved = sc, layer.Name, concurrency, layer.Starved()-starved
	p.Elapsed = time.Since(start)
	if meter != nil {
		p.CPU = map[string]time.Duration{}
		for name, t := range sample(meter) {
			p.CPU[name] = t - before[name]
		}
	}
	return p
}

func sample(meter Meter) map[string]time.Duration {
	if meter == nil {
		return nil
	}
	return meter()
}

// attack runs one vegeta attack and returns its metrics; it stops early when ctx ends.
func attack(ctx context.Context, a *vegeta.Attacker, tr vegeta.Targeter, p vegeta.Pacer, d time.Duration, name string) *vegeta.Metrics {
	results := a.Attack(tr, p, d, name)
	stop := context.AfterFunc(ctx, func() { a.Stop() })
	defer stop()
	m := &vegeta.Metrics{}
	for res := range results {
		m.Add(res)
	}
	m.Close()
	return m
}

func summarise(m *vegeta.Metrics) Point {
	p := Point{Requests: m.Requests, Throughput: m.Throughput, P50: m.Latencies.P50, P99: m.Latencies.P99, Success: m.Success}
	p.Errors = slices.Clone(m.Errors[:min(len(m.Errors), maxErrors)])
	return p
}

// OK reports whether the point is usable: requests answered and at most 1% failures.
func (p Point) OK() bool { return p.Requests > 0 && p.Success >= 0.99 }

// String is a one-line summary for the console.
func (p Point) String() string {
	s := fmt.Sprintf("%-5s %-11s c=%-3d %8.1f req/s  p50 %8s  p99 %8s  ok %5.1f%%  n=%d", p.Scenario, p.Layer, p.Concurrency,
		p.Throughput, round(p.P50), round(p.P99), 100*p.Success, p.Requests)
	if p.Starved > 0 {
		s += fmt.Sprintf("  (load generator behind on %d requests)", p.Starved)
	}
	if len(p.Errors) > 0 {
		s += fmt.Sprintf("  errors: %q", p.Errors)
	}
	return s
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
