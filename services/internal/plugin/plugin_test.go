package plugin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/plugin"
)

func TestOnceRunsOnceAndReplaysTheResult(t *testing.T) {
	t.Parallel()
	ledger := plugin.NewLedger(testdb.New(t))
	var runs atomic.Int32
	exec := func(context.Context) (*pluginv1.ExecuteResponse, error) {
		runs.Add(1)
		return &pluginv1.ExecuteResponse{EntityIds: []string{"W-1"}}, nil
	}
	const n = 20
	var wg sync.WaitGroup
	results := make(chan *pluginv1.ExecuteResponse, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ledger.Once(context.Background(), "SERV-REQ-1", exec)
			if err != nil {
				t.Error(err)
				return
			}
			results <- resp
		}()
	}
	wg.Wait()
	close(results)
	for resp := range results {
		if len(resp.GetEntityIds()) != 1 || resp.GetEntityIds()[0] != "W-1" {
			t.Errorf("Once() = %v, want the first run's result", resp)
		}
	}
	// Racing calls may each run execute (it must be idempotent itself); later calls must not.
	before := runs.Load()
	if _, err := ledger.Once(context.Background(), "SERV-REQ-1", exec); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != before {
		t.Errorf("Once() ran execute again after the execution was recorded")
	}
}

func TestOnceDoesNotRecordFailures(t *testing.T) {
	t.Parallel()
	ledger := plugin.NewLedger(testdb.New(t))
	boom := errors.New("boom")
	if _, err := ledger.Once(context.Background(), "R2", func(context.Context) (*pluginv1.ExecuteResponse, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Once() = %v, want the execute error", err)
	}
	resp, err := ledger.Once(context.Background(), "R2", func(context.Context) (*pluginv1.ExecuteResponse, error) {
		return &pluginv1.ExecuteResponse{EntityIds: []string{"ok"}}, nil
	})
	if err != nil || resp.GetEntityIds()[0] != "ok" {
		t.Fatalf("Once() after a failure = %v, %v; want a fresh run", resp, err)
	}
}
