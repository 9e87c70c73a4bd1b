package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/grpcserver"
)

// deps builds Deps as Setup does, on free ports and the test database.
func deps(t *testing.T) *Deps {
	t.Helper()
	cfg := config.Common{GRPCAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, HealthInterval: 10 * time.Millisecond}
	lis, err := grpcserver.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.New(t)
	logger := slog.New(slog.DiscardHandler)
	return &Deps{Logger: logger, Client: db.Client(), DB: db, cfg: cfg, lis: lis,
		Server: grpcserver.New(logger, principal.NewVerifier(nil), authz.Policy{})}
}

// probe is a background loop that counts its runs and whether one is under way.
type probe struct{ runs, running atomic.Int32 }

func (p *probe) run(context.Context) {
	p.running.Add(1)
	defer p.running.Add(-1)
	p.runs.Add(1)
	time.Sleep(time.Millisecond)
}

func TestRunStopsLoopsBeforeClosing(t *testing.T) {
	d := deps(t)
	p := &probe{}
	d.Every("probe", 2*time.Millisecond, p.run)
	var runningAtClose atomic.Int32
	closed := make(chan struct{})
	d.OnClose(func() { runningAtClose.Store(p.running.Load()); close(closed) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	for deadline := time.Now().Add(5 * time.Second); p.runs.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the loop did not run")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	<-closed
	if runningAtClose.Load() != 0 {
		t.Error("the loop was still running when the connections closed")
	}
	after := p.runs.Load()
	time.Sleep(20 * time.Millisecond)
	if p.runs.Load() != after {
		t.Error("the loop ran after Run returned")
	}
}

func TestRunEndsWhenTheServerFails(t *testing.T) {
	d := deps(t)
	p := &probe{}
	d.Every("probe", 2*time.Millisecond, p.run)
	// A metrics socket that fails makes the server fail: Run must end, with the error, and
	// take the loop with it, although its context never ends.
	_ = d.lis.Metrics.Close()
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Run returned nil after the metrics server failed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run kept going after the metrics server failed")
	}
	after := p.runs.Load()
	time.Sleep(20 * time.Millisecond)
	if p.runs.Load() != after {
		t.Error("the loop ran after Run returned")
	}
}
