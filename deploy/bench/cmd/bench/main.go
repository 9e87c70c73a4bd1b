// Command bench measures the suite (make bench): it builds the binaries and starts each as
// its own process on the embedded database (or on MONGODB_URI), loads N documents per measured
// collection, and measures a read (trading wallet search) and a write (service request
// create) through the gateway, as a direct gRPC call to the service, and as the raw driver
// operations the service issues, at several concurrency levels; then overloads the gateway.
// Last, with the services stopped, it measures what a journal entry costs (PAY_IN holds of 1
// and N legs, on one wallet and on N wallets, against N single account updates) in its own
// process on the same database server. It prints the table and writes it as markdown with PNG
// plots. docs/performance.md explains the method and the numbers.
//
//	bench [-n 10000] [-duration 3s] [-concurrency 1,4,16,64] [-overload 5s] [-out .data/bench]
//	      [-mongodb-uri mongodb://…] [-pin=true] [-profile DIR] [-legs 1000] [-journal-only]
//
// Each flag has an environment variable (BENCH_N, BENCH_DURATION, BENCH_CONCURRENCY,
// BENCH_WARMUP, BENCH_OVERLOAD, BENCH_OUT, MONGODB_URI, BENCH_PIN, BENCH_PROFILE, BENCH_LEGS,
// BENCH_JOURNAL_ONLY). Run it from the repository root.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat("go.work"); err != nil {
		return fmt.Errorf("run the bench from the repository root (no go.work in %s)", root)
	}
	if cfg.Profile != "" {
		return runProfile(ctx, cfg, out)
	}
	b := &bench{cfg: cfg, root: root, out: out}
	return b.run(ctx)
}
