package app

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zcustody/suite/services/internal/wake"
)

// TestPollBacksOffWhileIdleAndWakes: passes that find nothing grow apart (doubling), a
// wake brings the next pass back at once, and passes that find work keep the interval.
func TestPollBacksOffWhileIdleAndWakes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var passes, work atomic.Int64
	work.Store(20)
	signal := wake.New()
	go poll(ctx, 10*time.Millisecond, time.Hour, signal.C, func(context.Context) int {
		passes.Add(1)
		if work.Add(-1) >= 0 {
			return 1
		}
		return 0
	})
	// Twenty passes with work, each an interval after the last: well within two seconds
	// (with backoff they would take hours).
	waitFor(t, 2*time.Second, "twenty busy passes", func() bool { return passes.Load() >= 20 })
	// Idle: 10, 20, 40, 80, 160, 320, 640 ms between passes, then 1280 ms (without backoff,
	// 130 passes).
	time.Sleep(1300 * time.Millisecond)
	before := passes.Load()
	if before > 20+9 {
		t.Fatalf("%d idle passes in 1.3 s after the work; want the waits to double (at most 9)", before-20)
	}
	signal.Notify()
	waitFor(t, 500*time.Millisecond, "a pass after the wake", func() bool { return passes.Load() > before })
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
