package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/bench/internal/measure"
	"github.com/zcustody/suite/deploy/bench/internal/scenario"
	"github.com/zcustody/suite/deploy/local/stack"
	gatewayapp "github.com/zcustody/suite/gateway/app"
)

// profileConcurrency is the concurrency of the profiled steps.
const profileConcurrency = 16

// runProfile starts the whole suite inside this process (deploy/local/stack: the same
// services and gateway code, one process), loads the data, and profiles the gateway and the
// direct layer of each scenario: a CPU profile per step, and allocation profiles before and
// after it (compare with go tool pprof -diff_base). The embedded database takes most of the
// CPU here; the gateway's own hot paths show better in internal/inproc's benchmarks.
func runProfile(ctx context.Context, cfg config, out io.Writer) (err error) {
	if err := os.MkdirAll(cfg.Profile, 0o750); err != nil {
		return fmt.Errorf("profile folder: %w", err)
	}
	dataDir, err := os.MkdirTemp("", "bench-profile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := stack.Start(ctx, stack.Options{MongoURI: cfg.MongoURI, DataDir: dataDir, HTTPAddr: "127.0.0.1:0", Logger: logger,
		Gateway: func(c *gatewayapp.Config) { c.CompanyRPS, c.UserRPS, c.PeerRPS, c.RateBurst = 0, 0, 0, 1 }})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Stop()) }()
	fmt.Fprintf(out, "in-process suite up; loading %d documents per measured collection\n", cfg.N)
	if _, err := data.Load(ctx, st.MongoURI, cfg.N); err != nil {
		return err
	}
	env, err := scenario.Connect(ctx, st.GatewayURL, st.Services, st.MongoURI, filepath.Join(dataDir, "keys", "gateway-principal.pem"))
	if err != nil {
		return err
	}
	defer env.Close()
	if err := errors.Join(env.CheckRead(ctx), env.CheckWrite(ctx)); err != nil {
		return err
	}
	write, err := env.Write()
	if err != nil {
		return err
	}
	for _, sc := range []scenario.Scenario{env.Read(), write} {
		for _, l := range sc.Layers[:2] {
			since := time.Now()
			if err := profileStep(ctx, cfg, sc.Name, l, out); err != nil {
				return err
			}
			if sc.Reset != nil {
				if err := sc.Reset(ctx, since); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintf(out, "profiles in %s; e.g. go tool pprof -top -focus=gateway %s\n", cfg.Profile, filepath.Join(cfg.Profile, "cpu-read-gateway.pprof"))
	return nil
}

// profileStep warms the layer up, then measures it under a CPU profile.
func profileStep(ctx context.Context, cfg config, sc string, l scenario.Layer, out io.Writer) error {
	name := sc + "-" + strings.Fields(l.Name)[0]
	measure.Closed(ctx, sc, l, profileConcurrency, cfg.Warmup, nil)
	if err := writeProfile(filepath.Join(cfg.Profile, "allocs-"+name+"-before.pprof"), "allocs"); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(cfg.Profile, "cpu-"+name+".pprof"))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	p := measure.Closed(ctx, sc, l, profileConcurrency, cfg.Duration, nil)
	pprof.StopCPUProfile()
	fmt.Fprintln(out, p)
	return writeProfile(filepath.Join(cfg.Profile, "allocs-"+name+"-after.pprof"), "allocs")
}

func writeProfile(path, name string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
