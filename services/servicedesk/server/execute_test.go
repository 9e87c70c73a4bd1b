package server_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/server"
	"github.com/zcustody/suite/services/servicedesk/store"
)

// owner stands in for an owning service's plugin API: it counts executions and fails with
// the queued errors first. (The owners' real plugin servers are tested in their packages and
// through the gateway; this drives the service desk's side of every outcome.)
type owner struct {
	pluginv1.PluginServiceClient
	mu       sync.Mutex
	failures []error
	executed atomic.Int32
}

func (o *owner) Execute(context.Context, *pluginv1.ExecuteRequest, ...grpc.CallOption) (*pluginv1.ExecuteResponse, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.failures) > 0 {
		err := o.failures[0]
		o.failures = o.failures[1:]
		return nil, err
	}
	o.executed.Add(1)
	return &pluginv1.ExecuteResponse{EntityIds: []string{"W1"}}, nil
}

func setup(t *testing.T, o *owner) (*store.Store, *server.Executor, *server.Sweeper) {
	t.Helper()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	plugins := server.NewPlugins(map[string]pluginv1.PluginServiceClient{"custody": o}, principal.NewSigner("servicedesk", make([]byte, 64), time.Minute))
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	exec := server.NewExecutor(st, plugins, logger)
	sweeper := &server.Sweeper{Store: st, Sweep: st, Executor: exec, Logger: logger, Grace: 0, Now: time.Now}
	return st, exec, sweeper
}

// authorised stores a request and moves it to AUTHORISED.
func authorised(t *testing.T, st *store.Store) servicedesk.Request {
	t.Helper()
	svc := custodyWalletService(t) // owned by custody
	r := servicedesk.NewRequest("SERV-REQ-TEST"+time.Now().Format("150405.000000"), servicedesk.Maker{Email: "m@zt", CompanyID: "ZT", CompanyName: "ZT Ltd"},
		svc, time.Now().Format("20060102150405.000000000"), `{"name":["x"]}`, "h", time.Now())
	if err := st.InsertRequest(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	r, err := st.Apply(context.Background(), r, servicedesk.Transition{From: []string{servicedesk.StatusPendingConfirmation},
		To: servicedesk.StatusAuthorised, Action: servicedesk.ActionApproved, Role: servicedesk.RoleChecker, Actor: "c@zt"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExecutorOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		failures  []error
		want      string
		wantExecs int32
	}{
		{name: "success", want: servicedesk.StatusCompleted, wantExecs: 1},
		{name: "owner unavailable: stays authorised", failures: []error{status.Error(codes.Unavailable, "down")}, want: servicedesk.StatusAuthorised},
		{name: "owner refuses: failed", failures: []error{status.Error(codes.FailedPrecondition, "wallet deactivated")}, want: servicedesk.StatusFailed},
		{name: "owner's internal error: retried", failures: []error{status.Error(codes.Internal, "bug")}, want: servicedesk.StatusAuthorised},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &owner{failures: tt.failures}
			st, exec, _ := setup(t, o)
			got := exec.Run(context.Background(), authorised(t, st))
			if got.Status != tt.want || o.executed.Load() != tt.wantExecs {
				t.Errorf("status %s after %d executions, want %s after %d", got.Status, o.executed.Load(), tt.want, tt.wantExecs)
			}
			if err := servicedesk.VerifyChain(got.ID, got.BodyHash, got.Status, got.Versions); err != nil {
				t.Errorf("audit chain after execution: %v", err)
			}
		})
	}
}

// TestSweeperResumesStalledExecution: the owner was down when the request was authorised
// (or the process died before recording the outcome); the sweeper finishes it, once.
func TestSweeperResumesStalledExecution(t *testing.T) {
	t.Parallel()
	o := &owner{failures: []error{status.Error(codes.Unavailable, "down")}}
	st, exec, sweeper := setup(t, o)
	r := exec.Run(context.Background(), authorised(t, st))
	if r.Status != servicedesk.StatusAuthorised {
		t.Fatalf("status %s, want AUTHORISED while the owner is down", r.Status)
	}
	var wg sync.WaitGroup
	for range 3 { // racing sweepers (several replicas)
		wg.Go(func() { sweeper.Once(context.Background()) })
	}
	wg.Wait()
	got, err := st.Request(context.Background(), "ZT", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != servicedesk.StatusCompleted {
		t.Fatalf("status after sweeping %s, want COMPLETED", got.Status)
	}
	completed := 0
	for _, v := range got.Versions {
		if v.Action == servicedesk.ActionCompleted {
			completed++
		}
	}
	if completed != 1 {
		t.Errorf("%d Completed versions, want 1", completed)
	}
}

func TestSweeperExpiresOverdueRequests(t *testing.T) {
	t.Parallel()
	st, _, sweeper := setup(t, &owner{})
	svc := custodyWalletService(t)
	svc.Expiry = -time.Second // already overdue
	r := servicedesk.NewRequest("SERV-REQ-EXPIRE0001", servicedesk.Maker{Email: "m@zt", CompanyID: "ZT", CompanyName: "ZT Ltd"}, svc, "e2e-expire", `{}`, "h", time.Now())
	if err := st.InsertRequest(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	sweeper.Once(context.Background())
	got, err := st.Request(context.Background(), "ZT", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != servicedesk.StatusExpired || got.Versions[len(got.Versions)-1].Role != servicedesk.RoleSystem {
		t.Errorf("status %s by %s, want EXPIRED by SYSTEM", got.Status, got.Versions[len(got.Versions)-1].Role)
	}
}

// TestPersistentInternalErrorsEndInFailed: an owner that keeps failing with internal errors
// does not keep the request AUTHORISED forever.
func TestPersistentInternalErrorsEndInFailed(t *testing.T) {
	t.Parallel()
	failures := make([]error, server.MaxFailedAttempts)
	for i := range failures {
		failures[i] = status.Error(codes.Internal, "owner bug")
	}
	o := &owner{failures: failures}
	st, exec, _ := setup(t, o)
	r := authorised(t, st)
	for i := range server.MaxFailedAttempts {
		r = exec.Run(context.Background(), r)
		want := servicedesk.StatusAuthorised
		if i == server.MaxFailedAttempts-1 {
			want = servicedesk.StatusFailed
		}
		if r.Status != want {
			t.Fatalf("after attempt %d: status %s, want %s", i+1, r.Status, want)
		}
	}
}

// custodyWalletService is the catalog's 0x0013-001 (custody wallet creation).
func custodyWalletService(t *testing.T) servicedesk.Service {
	t.Helper()
	for _, s := range servicedesk.Catalog() {
		if s.ID == "0x0013-001" {
			return s
		}
	}
	t.Fatal("the catalog has no 0x0013-001")
	return servicedesk.Service{}
}
