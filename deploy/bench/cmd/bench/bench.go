package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/bench/internal/inproc"
	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
	"github.com/zcustody/suite/deploy/bench/internal/measure"
	"github.com/zcustody/suite/deploy/bench/internal/report"
	"github.com/zcustody/suite/deploy/bench/internal/scenario"
	"github.com/zcustody/suite/deploy/bench/internal/suite"
)

// settleTime is how long the started suite idles before its memory is read.
const settleTime = 3 * time.Second

type bench struct {
	cfg  config
	root string
	out  io.Writer
	res  report.Results
	cpu  measure.Meter
}

func (b *bench) say(format string, args ...any) {
	fmt.Fprintf(b.out, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (b *bench) run(ctx context.Context) (err error) {
	b.res = report.Results{Started: time.Now(), N: b.cfg.N, Duration: b.cfg.Duration, Concurrency: b.cfg.Concurrency}
	split, pinned := suite.SplitCPUs()
	pinned = pinned && b.cfg.Pin
	opts := suite.Options{Root: b.root, Dir: filepath.Join(b.cfg.Out, "work"), MongoURI: b.cfg.MongoURI}
	if pinned {
		opts.CPUs = suite.List(split.Suite)
	}
	s, err := suite.New(opts)
	if err != nil {
		return err
	}
	b.cpu = s.CPU
	defer func() { err = errors.Join(err, s.Stop()) }()
	b.say("building the binaries")
	if err := s.Build(ctx); err != nil {
		return err
	}
	b.res.Placement = "not pinned: the suite and the load generator share every CPU"
	if pinned {
		if err := suite.PinSelf(split.Load); err != nil {
			return err
		}
		b.res.Placement = fmt.Sprintf("suite on CPU %s, load generator on CPU %s (taskset)", suite.List(split.Suite), suite.List(split.Load))
	}
	if err := b.startData(ctx, s); err != nil {
		return err
	}
	if !b.cfg.JournalOnly {
		if err := b.startServices(ctx, s); err != nil {
			return err
		}
		if err := b.measure(ctx, s); err != nil {
			return err
		}
		if err := b.finish(ctx, s); err != nil {
			return err
		}
	}
	// A journal scenario cut short (on the embedded database an entry on N wallets takes
	// minutes) still leaves the other results written.
	jerr := b.journal(ctx, s)
	return errors.Join(b.write(), jerr)
}

// journal runs the journal scenario in this process once the services and gateways are
// stopped, so that nothing else uses the database.
func (b *bench) journal(ctx context.Context, s *suite.Suite) error {
	if b.cfg.Legs == 0 {
		return nil
	}
	if err := s.StopServices(); err != nil {
		return err
	}
	b.say("journal entry cost: PAY_IN holds through trading's ledger handler and store, in this process, N = %d", b.cfg.Legs)
	res, err := journalcost.Run(ctx, s.MongoURI, journalcost.Options{Legs: b.cfg.Legs, Say: b.say})
	b.res.Journal = &res
	if err != nil {
		b.res.JournalErr = err.Error()
		return err
	}
	for _, q := range report.JournalRatios(res) {
		b.say("journal: %s = %.2f (%s / %s; target ≤ %.1f): %s", q.Name, q.Value(), q.Over.Round(time.Millisecond),
			q.Under.Round(time.Millisecond), q.Target, q.Verdict())
	}
	return nil
}

// finish runs the in-process benchmarks of the gateway and reads every process's peak memory.
func (b *bench) finish(ctx context.Context, s *suite.Suite) error {
	b.say("the gateway over stub backends, in this process (testing.Benchmark)")
	var err error
	if b.res.InProcess, err = inproc.Run(ctx, filepath.Join(b.cfg.Out, "work", "inproc")); err != nil {
		return err
	}
	for _, r := range b.res.InProcess {
		b.say("%-18s %8.1f µs/op %6d allocs/op", r.Name, float64(r.NsPerOp)/1e3, r.AllocsPerOp)
	}
	for _, p := range s.Procs {
		m, err := p.Memory()
		if err != nil {
			return err
		}
		b.res.Procs = append(b.res.Procs, report.Proc{Name: p.Name, StartUp: p.StartUp, Idle: p.Idle.RSS, Peak: m.Peak})
	}
	return nil
}

// startData starts the database and loads the data.
func (b *bench) startData(ctx context.Context, s *suite.Suite) error {
	b.say("starting the database")
	if err := s.StartDatabase(ctx); err != nil {
		return err
	}
	b.res.Database = "embedded FerretDB 1.24 (SQLite) behind the serialising relay"
	if b.cfg.MongoURI != "" {
		b.res.Database = "MONGODB_URI"
	}
	b.say("loading the demo data and %d documents per measured collection", b.cfg.N)
	counts, err := data.Load(ctx, s.MongoURI, b.cfg.N)
	if err != nil {
		return err
	}
	b.res.Load = counts.Took
	b.say("loaded in %s", counts.Took.Round(time.Millisecond))
	return nil
}

// startServices starts the services and the gateway and lets them settle.
func (b *bench) startServices(ctx context.Context, s *suite.Suite) error {
	b.say("starting the services and the gateway")
	if err := s.StartServices(ctx); err != nil {
		return err
	}
	for _, p := range s.Procs {
		b.say("%-12s ready in %s", p.Name, p.StartUp.Round(time.Millisecond))
	}
	idle, err := s.Settle(ctx, settleTime)
	b.res.IdleCPU = idle
	return err
}

// measure runs the read and the write through every layer at every concurrency, then the
// overload scenario on the gateway's read.
func (b *bench) measure(ctx context.Context, s *suite.Suite) error {
	env, err := scenario.Connect(ctx, s.GatewayURL, s.Addrs, s.MongoURI, s.KeyFile("gateway-principal.pem"))
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.CheckRead(ctx); err != nil {
		return err
	}
	if err := env.CheckWrite(ctx); err != nil {
		return err
	}
	write, err := env.Write()
	if err != nil {
		return err
	}
	read := env.Read()
	for _, sc := range []scenario.Scenario{read, write} {
		b.res.Scenarios = append(b.res.Scenarios, b.measureScenario(ctx, sc))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	b.deliveries(ctx, s, env)
	if b.cfg.Overload == 0 {
		return nil
	}
	capacity := b.res.Scenarios[0].Best(scenario.LayerGateway).Throughput
	url, err := s.StartOverloadGateway(ctx)
	if err != nil {
		return err
	}
	b.say("overload: the gateway's read at 2× and 0.5× its capacity of %.0f req/s, %s each, through a second gateway with the default load shedding", capacity, b.cfg.Overload)
	ov := measure.Overload(ctx, env.ReadVia(url), capacity, b.cfg.Overload)
	for _, ph := range ov.Phases {
		b.say("%s", ph)
	}
	b.res.Overload = &ov
	return nil
}

// deliveries runs the webhook delivery scenario; a failure is reported with the results
// and does not stop the run.
func (b *bench) deliveries(ctx context.Context, s *suite.Suite, env *scenario.Env) {
	if b.cfg.Delivery == 0 {
		return
	}
	b.say("delivery: webhook deliveries, state change → receiver, %s at capacity then %s at half of it", b.cfg.Delivery, b.cfg.Delivery)
	res, err := env.Deliveries(ctx, s.Addrs["events"], b.cfg.Delivery, b.say)
	b.res.Delivery = &res
	if err != nil {
		b.res.DeliveryErr = err.Error()
		b.say("delivery: %v", err)
		return
	}
	b.say("%s", res)
}

// measureScenario warms every layer up, then measures the layers one after another at each
// concurrency, so that any drift (a growing collection) falls on all layers alike.
func (b *bench) measureScenario(ctx context.Context, sc scenario.Scenario) report.Scenario {
	b.say("%s: %s", sc.Name, sc.Title)
	for _, l := range sc.Layers {
		if b.cfg.Warmup > 0 {
			b.step(ctx, sc, func() { measure.Closed(ctx, sc.Name, l, 4, b.cfg.Warmup, nil) })
		}
	}
	out := report.Scenario{Name: sc.Name, Title: sc.Title}
	for _, c := range b.cfg.Concurrency {
		for _, l := range sc.Layers {
			var p measure.Point
			b.step(ctx, sc, func() { p = measure.Closed(ctx, sc.Name, l, c, b.cfg.Duration, b.cpu) })
			b.say("%s", p)
			out.Points = append(out.Points, p)
		}
	}
	return out
}

// step runs one attack, then the scenario's reset.
func (b *bench) step(ctx context.Context, sc scenario.Scenario, attack func()) {
	since := time.Now()
	attack()
	if sc.Reset == nil {
		return
	}
	if err := sc.Reset(context.WithoutCancel(ctx), since); err != nil {
		b.say("%v", err)
	}
}
