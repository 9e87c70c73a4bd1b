package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
	"github.com/zcustody/suite/deploy/bench/internal/measure"
	"github.com/zcustody/suite/deploy/bench/internal/scenario"
)

// Markdown writes the results as markdown; plots names the PNG files next to it.
func (r Results) Markdown(w io.Writer, plots ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Bench results\n\n")
	fmt.Fprintf(&b, "Run of %s: %d documents per measured collection (loaded in %s)", r.Started.UTC().Format(time.RFC3339), r.N,
		r.Load.Round(time.Millisecond))
	if len(r.Scenarios) > 0 {
		fmt.Fprintf(&b, ", steps of %s at concurrency %s", r.Duration, joinInts(r.Concurrency))
	}
	b.WriteString(".  \n")
	fmt.Fprintf(&b, "Database: %s. Placement: %s.\n\n", r.Database, r.Placement)
	if len(r.Scenarios) > 0 {
		r.ratios(&b)
	}
	r.journal(&b)
	for _, s := range r.Scenarios {
		s.table(&b)
		s.cpuTable(&b, r.IdleCPU)
	}
	r.inProcess(&b)
	r.procs(&b)
	if r.Overload != nil {
		overload(&b, *r.Overload)
	}
	r.delivery(&b)
	for _, p := range plots {
		fmt.Fprintf(&b, "![%s](%s)\n\n", p, p)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Results) ratios(b *strings.Builder) {
	b.WriteString("## Ratios at each layer's best throughput (DESIGN.md §8)\n\n")
	b.WriteString("| scenario | ratio | value | best throughputs (req/s) | target | |\n|---|---|--:|---|---|---|\n")
	for _, s := range r.Scenarios {
		for _, q := range s.Ratios() {
			fmt.Fprintf(b, "| %s | %s | %.2f | %.0f (c=%d) / %.0f (c=%d) | ≥ %.2f | %s |\n", s.Name, q.Name, q.Value(),
				q.Over.Throughput, q.Over.Concurrency, q.Under.Throughput, q.Under.Concurrency, q.Target, verdict(q.Met()))
		}
	}
	b.WriteString("\n")
}

// journal shows the journal entry cost: the two ratios against their targets, then every
// measured time.
func (r Results) journal(b *strings.Builder) {
	if r.Journal == nil {
		return
	}
	j := *r.Journal
	n := thousands(j.Legs)
	b.WriteString("## Journal entry cost (DESIGN.md §9)\n\n")
	fmt.Fprintf(b, "PAY_IN's hold as interchange sends it (each payer's share debited, the settlement's clearing account credited "+
		"with the total, one entry), recorded one at a time through trading's ledger handler and store in the bench's process, on "+
		"a database of its own (`%s`) on the same server, with the services stopped. The baseline reads each wallet's account by "+
		"`_id` and writes it back with one version-guarded `UpdateOne({_id, ledgerVersion: v})`, one wallet after another, before "+
		"each PAY_IN on the same wallets. Ratios of the medians:\n\n", journalcost.Database)
	b.WriteString("| ratio | value | median times (runs) | target | |\n|---|--:|---|---|---|\n")
	for _, q := range JournalRatios(j) {
		if q.OverRuns == 0 || q.UnderRuns == 0 {
			fmt.Fprintf(b, "| %s | – | not measured | ≤ %.1f | – |\n", q.Name, q.Target)
			continue
		}
		fmt.Fprintf(b, "| %s | %.2f | %s (%d) / %s (%d) | ≤ %.1f | %s |\n", q.Name, q.Value(), dur(q.Over), q.OverRuns,
			dur(q.Under), q.UnderRuns, q.Target, q.Verdict())
	}
	b.WriteString("\n| measurement | runs | median | min | max | database commands of one run |\n|---|--:|--:|--:|--:|---|\n")
	for _, m := range []struct {
		name string
		m    journalcost.Measurement
	}{
		{"PAY_IN 1 leg (one wallet leg + the clearing credit)", j.OneLeg},
		{fmt.Sprintf("PAY_IN %s legs on one wallet (+ the clearing credit)", n), j.OneWallet},
		{fmt.Sprintf("PAY_IN %s legs on %s wallets (+ the clearing credit)", n, n), j.Wallets},
		{fmt.Sprintf("%s single account updates (read by _id + guarded update, each)", n), j.Updates},
		{"– of them, the guarded updates alone", journalcost.Measurement{Runs: j.UpdateWrites}},
		{fmt.Sprintf("funding: one entry of %s credits from world:deposits (setup)", n), j.Funding},
	} {
		if len(m.m.Runs) == 0 {
			continue
		}
		cmds := "–"
		if len(m.m.Commands) > 0 {
			cmds = m.m.Commands.String()
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", m.name, len(m.m.Runs), dur(m.m.Median()), dur(slices.Min(m.m.Runs)),
			dur(slices.Max(m.m.Runs)), cmds)
	}
	if r.JournalErr != "" {
		fmt.Fprintf(b, "\n⚠ the scenario stopped: %s\n", r.JournalErr)
	}
	b.WriteString("\n")
	journalCommands(b, n, j.Wallets, j.Updates)
}

// journalCommands shows where one run of the PAY_IN on N wallets and of the baseline spent
// its time, by database command.
func journalCommands(b *strings.Builder, n string, wallets, updates journalcost.Measurement) {
	if len(wallets.Commands) == 0 || len(updates.Commands) == 0 {
		return
	}
	fmt.Fprintf(b, "Where the last run of each spent its time, by database command and collection (count, and the round trips' "+
		"total as the driver timed them; the rest is the bench process's own work):\n\n| command | PAY_IN on %s wallets | %s single account updates |\n|---|--:|--:|\n", n, n)
	keys := wallets.Commands.Keys()
	for _, k := range updates.Commands.Keys() {
		if _, ok := wallets.Commands[k]; !ok {
			keys = append(keys, k)
		}
	}
	cell := func(c journalcost.Command) string {
		if c.N == 0 {
			return "–"
		}
		return fmt.Sprintf("%s · %s", thousands(c.N), dur(c.Time))
	}
	var sums [2]journalcost.Command
	for _, k := range keys {
		w, u := wallets.Commands[k], updates.Commands[k]
		fmt.Fprintf(b, "| %s | %s | %s |\n", k, cell(w), cell(u))
		sums[0] = journalcost.Command{N: sums[0].N + w.N, Time: sums[0].Time + w.Time}
		sums[1] = journalcost.Command{N: sums[1].N + u.N, Time: sums[1].Time + u.Time}
	}
	last := func(m journalcost.Measurement) time.Duration { return m.Runs[len(m.Runs)-1] }
	fmt.Fprintf(b, "| all commands | %s | %s |\n| the rest | %s | %s |\n\n", cell(sums[0]), cell(sums[1]),
		dur(last(wallets)-sums[0].Time), dur(last(updates)-sums[1].Time))
}

func (s Scenario) table(b *strings.Builder) {
	fmt.Fprintf(b, "## %s: %s\n\n", s.Name, s.Title)
	b.WriteString("| c | gateway req/s | p50 | p99 | direct req/s | p50 | p99 | raw req/s | p50 | p99 | gw/direct | direct/raw |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var notes []string
	for _, c := range concurrencies(s.Points) {
		fmt.Fprintf(b, "| %d", c)
		var tp []float64
		for _, layer := range []string{scenario.LayerGateway, scenario.LayerDirect, scenario.LayerRaw} {
			p, _ := s.At(layer, c)
			fmt.Fprintf(b, " | %.1f%s | %s | %s", p.Throughput, flag(p), ms(p.P50), ms(p.P99))
			tp = append(tp, p.Throughput)
			notes = append(notes, note(p)...)
		}
		fmt.Fprintf(b, " | %s | %s |\n", div(tp[0], tp[1]), div(tp[1], tp[2]))
	}
	b.WriteString("\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
}

// cpuTable shows where each layer's CPU goes, per successful request.
func (s Scenario) cpuTable(b *strings.Builder, idle map[string]float64) {
	layers := []string{scenario.LayerGateway, scenario.LayerDirect, scenario.LayerRaw}
	per := map[string]map[string]time.Duration{}
	seen := map[string]bool{}
	for _, l := range layers {
		per[l] = s.CPUPerRequest(l, idle)
		for name, d := range per[l] {
			seen[name] = seen[name] || d >= 10*time.Microsecond
		}
	}
	var procs []string
	for _, name := range []string{"gateway", "servicedesk", "trading", "custody", "interchange", "compliance", database, "bench"} {
		if seen[name] {
			procs = append(procs, name)
		}
	}
	if len(procs) == 0 {
		return
	}
	fmt.Fprintf(b, "CPU per successful request (ms) over all steps of each layer, less each process's idle CPU; "+
		"\"bench\" is the load generator (signing, HTTP or gRPC client, and the raw layer's driver work):\n\n")
	fmt.Fprintf(b, "| layer | %s | suite | suite without %s |\n|---|%s--:|--:|\n", strings.Join(procs, " | "), database, strings.Repeat("--:|", len(procs)))
	for _, l := range layers {
		fmt.Fprintf(b, "| %s", l)
		for _, name := range procs {
			fmt.Fprintf(b, " | %s", cpuMs(per[l][name]))
		}
		fmt.Fprintf(b, " | %s | %s |\n", cpuMs(SuiteCPU(per[l], true)), cpuMs(SuiteCPU(per[l], false)))
	}
	gw, direct := per[scenario.LayerGateway], per[scenario.LayerDirect]
	fmt.Fprintf(b, "\nSuite CPU per request, direct / gateway: %s; without the database's share: %s "+
		"(the throughput ratio on a shared CPU once the database's cost is elsewhere).\n\n",
		div(float64(SuiteCPU(direct, true)), float64(SuiteCPU(gw, true))), div(float64(SuiteCPU(direct, false)), float64(SuiteCPU(gw, false))))
}

func cpuMs(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

// inProcess shows the gateway's own cost: the same calls over stub backends that answer
// without a database, in the bench's process.
func (r Results) inProcess(b *strings.Builder) {
	if len(r.InProcess) == 0 {
		return
	}
	b.WriteString("## The gateway without a database behind it (in-process, stub backends)\n\n")
	b.WriteString("The real gateway (gateway/app) and the real trading handler over a store that returns a fixed page; " +
		"the service desk's identity and create are stubs; the replay claim still inserts into the embedded FerretDB. " +
		"One op includes its client (HTTP or gRPC). testing.Benchmark, parallel, on the load generator's CPU.\n\n")
	b.WriteString("| call | µs/op | allocs/op | KiB/op |\n|---|--:|--:|--:|\n")
	ns := map[string]int64{}
	for _, x := range r.InProcess {
		ns[x.Name] = x.NsPerOp
		fmt.Fprintf(b, "| %s | %.1f | %d | %.1f |\n", x.Name, float64(x.NsPerOp)/1e3, x.AllocsPerOp, float64(x.BytesPerOp)/1024)
	}
	fmt.Fprintf(b, "\nThroughput ratio gateway / direct on this CPU: read %s, write %s (target ≥ %.2f).\n\n",
		div(float64(ns["read direct gRPC"]), float64(ns["read via gateway"])), div(float64(ns["write direct gRPC"]), float64(ns["write via gateway"])),
		TargetGatewayOverDirect)
}

func (r Results) procs(b *strings.Builder) {
	if len(r.Procs) == 0 {
		return
	}
	b.WriteString("## Processes\n\n")
	b.WriteString("| process | start-up to ready | idle RSS | peak RSS (end of run) | targets (services) |\n|---|--:|--:|--:|---|\n")
	for _, p := range r.Procs {
		target := "–"
		if p.Service() {
			target = fmt.Sprintf("start-up ≤ 1 s: %s; idle ≤ 30 MiB: %s", verdict(p.StartUp <= TargetStartUp), verdict(p.Idle <= TargetIdleRSS))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", p.Name, p.StartUp.Round(time.Millisecond), mib(p.Idle), mib(p.Peak), target)
	}
	b.WriteString("\nReady means: grpc.health SERVING (services), GET /healthz 200 (gateway), the printed URI (ferretdb); " +
		"timed from exec. RSS is VmRSS from /proc/<pid>/status after the suite idled; peak is VmHWM.\n\n")
}

// delivery is the webhook delivery section: DESIGN §8 asks for the latency at half the
// measured capacity on the embedded database.
func (r Results) delivery(b *strings.Builder) {
	if r.Delivery == nil && r.DeliveryErr == "" {
		return
	}
	b.WriteString("## Webhook delivery: state change → subscriber\n\n")
	b.WriteString("A service request created through the service desk's gRPC API, its `" + scenario.DeliveryType + "` event relayed from the outbox, sequenced by the events service and POSTed, signed, by the dispatcher to a receiver in the bench process. ")
	b.WriteString("Capacity: writes without pause, from the first write to the last delivery. Latency: writes at half that rate, from the event's timestamp (the change, in milliseconds) to its arrival.\n\n")
	if r.DeliveryErr != "" {
		fmt.Fprintf(b, "Failed: %s\n\n", r.DeliveryErr)
	}
	d := r.Delivery
	if d == nil {
		return
	}
	b.WriteString("| capacity events/s | offered events/s | written | delivered | p50 | p99 | max | duplicates | failed writes |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	fmt.Fprintf(b, "| %.1f | %.1f | %d | %d | %s | %s | %s | %d | %d |\n\n", d.Capacity, d.Rate, d.Events, d.Delivered, ms(d.P50), ms(d.P99), ms(d.Max),
		d.Duplicates, d.Failed)
}

func overload(b *strings.Builder, o measure.OverloadResult) {
	fmt.Fprintf(b, "## Overload: the gateway's read at 2× then 0.5× its measured capacity (%.0f req/s)\n\n", o.Capacity)
	b.WriteString("Through a second gateway on the same services with the default load shedding (the capacity steps' gateway sheds nothing); open model, no pause between the phases.\n\n")
	b.WriteString("| phase | offered req/s | sent | ok | ok p50 | ok p99 | shed 429/503 | shed p50 | shed p99 | other | peak in flight | ok in last full second |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, ph := range o.Phases {
		fmt.Fprintf(b, "| %s | %.0f | %d | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", ph.Name, ph.Rate, ph.Sent, pct(ph.Share(ph.OK)),
			ms(ph.OKP50), ms(ph.OKP99), pct(ph.Share(ph.Shed)), ms(ph.ShedP50), ms(ph.ShedP99), pct(ph.Share(ph.Other)),
			ph.PeakInFlight, pct(ph.LastSecondOK()))
	}
	for _, ph := range o.Phases {
		if len(ph.OtherErrors) > 0 {
			fmt.Fprintf(b, "\n%s, other: %q", ph.Name, ph.OtherErrors)
		}
	}
	b.WriteString("\n\nSecond by second (ok / shed / other):\n\n")
	for _, ph := range o.Phases {
		parts := make([]string, 0, len(ph.Seconds))
		for _, s := range ph.Seconds {
			parts = append(parts, fmt.Sprintf("%d/%d/%d", s.OK, s.Shed, s.Other))
		}
		fmt.Fprintf(b, "- %s: %s\n", ph.Name, strings.Join(parts, ", "))
	}
	b.WriteString("\n")
}

func concurrencies(points []measure.Point) []int {
	var out []int
	for _, p := range points {
		if len(out) == 0 || out[len(out)-1] != p.Concurrency {
			out = append(out, p.Concurrency)
		}
	}
	return out
}

// flag marks a point that is not clean: failures, or a load generator that fell behind.
func flag(p measure.Point) string {
	switch {
	case !p.OK():
		return " ⚠"
	case p.Starved > 0:
		return " *"
	}
	return ""
}

func note(p measure.Point) []string {
	var out []string
	if !p.OK() {
		out = append(out, fmt.Sprintf("⚠ %s at c=%d: %s ok, errors %q", p.Layer, p.Concurrency, pct(p.Success), p.Errors))
	}
	if p.Starved > 0 {
		out = append(out, fmt.Sprintf("* %s at c=%d: the load generator signed %d requests late", p.Layer, p.Concurrency, p.Starved))
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func div(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// dur prints a duration in ms below a second, in s above.
func dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// thousands prints n with a comma between thousands (1,000).
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func joinInts(v []int) string {
	parts := make([]string, 0, len(v))
	for _, n := range v {
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}
