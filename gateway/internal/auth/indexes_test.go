package auth_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/zcustody/suite/gateway/internal/auth"
	"github.com/zcustody/suite/platform/testdb"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes).
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, auth.ReplayIndexes(), map[string]string{
		"request_ids aggregate {}": "the tests count the identifiers stored",
	}))
}

// TestSweepDeletesExpiredIdentifiers: the sweeper deletes an identifier whose window has
// passed, and keeps the others (TestMain checks its delete is indexed).
func TestSweepDeletesExpiredIdentifiers(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	s := auth.NewReplayStore(db)
	ctx := t.Context()
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, "ZTEST", "old", time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, "ZTEST", "new", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	sweepCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Sweep(sweepCtx, time.Millisecond, slog.New(slog.DiscardHandler))
	}()
	defer func() { stop(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		left, err := db.Collection("request_ids").CountDocuments(ctx, struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		if left == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d identifiers left, want the unexpired one", left)
		}
	}
	if err := s.Claim(ctx, "ZTEST", "new", time.Now().Add(time.Hour)); !errors.Is(err, auth.ErrReplay) {
		t.Errorf("claim of the kept identifier = %v, want ErrReplay", err)
	}
}
