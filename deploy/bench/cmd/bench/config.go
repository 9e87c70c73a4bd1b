package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
)

// config is the bench's configuration: flag over environment over default.
type config struct {
	N           int           // -n, BENCH_N: documents per measured collection
	Duration    time.Duration // -duration, BENCH_DURATION: one measured step
	Warmup      time.Duration // -warmup, BENCH_WARMUP: per scenario and layer, before its steps
	Concurrency []int         // -concurrency, BENCH_CONCURRENCY: e.g. 1,4,16,64
	Overload    time.Duration // -overload, BENCH_OVERLOAD: each phase of the overload scenario
	Out         string        // -out, BENCH_OUT: folder of the results (markdown, PNG, logs)
	MongoURI    string        // -mongodb-uri, MONGODB_URI: use this server instead of FerretDB
	Pin         bool          // -pin, BENCH_PIN: suite and load generator on separate CPUs
	Profile     string        // -profile, BENCH_PROFILE: profile the in-process suite into this folder instead
	Legs        int           // -legs, BENCH_LEGS: N of the journal scenario's large entries; 0 skips it
	JournalOnly bool          // -journal-only, BENCH_JOURNAL_ONLY: the database, the data and the journal scenario only
	Delivery    time.Duration // -delivery, BENCH_DELIVERY: each phase of the webhook delivery scenario; 0 skips it
}

// Documents per measured collection: the 10,000 on a MongoDB server; 1,000 on the
// embedded FerretDB, where every query but a find by _id reads and decodes the whole
// collection (a wallet search costs about 0.15 s at 1,000 documents and 1.5 s at 10,000, which
// would stretch make bench past half an hour). -n or BENCH_N overrides either.
const (
	defaultN  = 10000
	embeddedN = 1000
)

// The journal scenario's N (-legs, BENCH_LEGS) is DESIGN.md §9's 1,000 on either database.
// On the embedded FerretDB every update reads the whole collection, so the entry that funds
// the N wallets, the N single account updates and the PAY_IN on N wallets take 2–7 minutes
// each at 1,000 on a 2-core machine (make bench runs 13–15 minutes instead of 3), and the
// last two are measured once; BENCH_LEGS=200 takes about a minute in all, 0 skips the
// scenario, -journal-only runs it alone (the database and the data, no services).

// envFlags maps each flag to its environment variable.
var envFlags = [][2]string{
	{"n", "BENCH_N"}, {"duration", "BENCH_DURATION"}, {"warmup", "BENCH_WARMUP"}, {"concurrency", "BENCH_CONCURRENCY"},
	{"overload", "BENCH_OVERLOAD"}, {"out", "BENCH_OUT"}, {"mongodb-uri", "MONGODB_URI"}, {"pin", "BENCH_PIN"},
	{"profile", "BENCH_PROFILE"}, {"legs", "BENCH_LEGS"}, {"journal-only", "BENCH_JOURNAL_ONLY"}, {"delivery", "BENCH_DELIVERY"},
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var cfg config
	levels := levelsFlag{1, 4, 16, 64}
	fs.IntVar(&cfg.N, "n", defaultN, "documents per measured collection (BENCH_N); 1000 on the embedded database unless set")
	fs.DurationVar(&cfg.Duration, "duration", 3*time.Second, "duration of one measured step (BENCH_DURATION)")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "warm-up per scenario and layer (BENCH_WARMUP)")
	fs.Var(&levels, "concurrency", "comma-separated concurrency levels (BENCH_CONCURRENCY)")
	fs.DurationVar(&cfg.Overload, "overload", 5*time.Second, "each phase of the overload scenario; 0 skips it (BENCH_OVERLOAD)")
	fs.StringVar(&cfg.Out, "out", ".data/bench", "folder of the results (BENCH_OUT)")
	fs.StringVar(&cfg.MongoURI, "mongodb-uri", "", "MongoDB server to use instead of the embedded FerretDB (MONGODB_URI)")
	fs.BoolVar(&cfg.Pin, "pin", true, "run the suite and the load generator on separate CPUs (BENCH_PIN)")
	fs.StringVar(&cfg.Profile, "profile", "", "profile the gateway scenarios on an in-process suite into this folder (BENCH_PROFILE)")
	fs.IntVar(&cfg.Legs, "legs", journalcost.DefaultLegs, "legs of the journal scenario's large entries; 0 skips it (BENCH_LEGS)")
	fs.DurationVar(&cfg.Delivery, "delivery", 10*time.Second, "each phase of the webhook delivery scenario; 0 skips it (BENCH_DELIVERY)")
	fs.BoolVar(&cfg.JournalOnly, "journal-only", false, "start the database, load the data and run only the journal scenario (BENCH_JOURNAL_ONLY)")
	for _, f := range envFlags {
		if v := getenv(f[1]); v != "" {
			if err := fs.Set(f[0], v); err != nil {
				return config{}, fmt.Errorf("%s=%q: %w", f[1], v, err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	cfg.Concurrency = levels
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if !explicit["n"] && cfg.MongoURI == "" {
		cfg.N = embeddedN
	}
	if cfg.N < 100 || cfg.Duration < 100*time.Millisecond || cfg.Warmup < 0 || cfg.Overload < 0 || cfg.Delivery < 0 {
		return config{}, fmt.Errorf("want BENCH_N ≥ 100 (a full page of the read), BENCH_DURATION ≥ 100ms, BENCH_WARMUP, BENCH_OVERLOAD and BENCH_DELIVERY ≥ 0")
	}
	if cfg.Legs != 0 && (cfg.Legs < 2 || cfg.Legs > journalcost.MaxLegs) || cfg.JournalOnly && cfg.Legs == 0 {
		return config{}, fmt.Errorf("want BENCH_LEGS 0 (no journal scenario) or 2..%d (an entry has at most %d legs), and not 0 with BENCH_JOURNAL_ONLY",
			journalcost.MaxLegs, journalcost.MaxLegs+1)
	}
	return cfg, nil
}

// levelsFlag is a comma-separated list of concurrency levels.
type levelsFlag []int

func (l *levelsFlag) String() string {
	parts := make([]string, 0, len(*l))
	for _, n := range *l {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

func (l *levelsFlag) Set(s string) error {
	var levels []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > 1024 {
			return fmt.Errorf("want a comma-separated list of 1..1024")
		}
		levels = append(levels, n)
	}
	*l = levels
	return nil
}
