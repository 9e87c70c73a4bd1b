package server_test

import (
	"context"
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

// clock is a fake clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// grace is how long the tests' desk leaves an authorised request to its inline execution.
const grace = 30 * time.Second

func setup(t *testing.T, o *owner) (*store.Store, *servicedesk.Desk, *clock) {
	t.Helper()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	plugins := server.NewPlugins(map[string]pluginv1.PluginServiceClient{"custody": o}, principal.NewSigner("servicedesk", make([]byte, 64), time.Minute))
	c := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	desk := servicedesk.New(servicedesk.Config{Store: st, Owners: plugins, Now: c.Now, Grace: grace})
	return st, desk, c
}

// authorised stores a request made at the clock's time and moves it to AUTHORISED.
func authorised(t *testing.T, st *store.Store, c *clock) servicedesk.Request {
	t.Helper()
	svc := custodyWalletService(t) // owned by custody
	r := servicedesk.NewRequest("SERV-REQ-TEST"+time.Now().Format("150405.000000"), servicedesk.Maker{Email: "m@zt", CompanyID: "ZT", CompanyName: "ZT Ltd"},
		svc, time.Now().Format("20060102150405.000000000"), `{"name":["x"]}`, "h", c.Now())
	if err := st.InsertRequest(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	r, err := st.Apply(context.Background(), r, servicedesk.Transition{From: []string{servicedesk.StatusPendingConfirmation},
		To: servicedesk.StatusAuthorised, Action: servicedesk.ActionApproved, Role: servicedesk.RoleChecker, Actor: "c@zt"}, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExecutorOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		failures   []error
		want       string
		wantExecs  int32
		wantReason string
	}{
		{name: "success", want: servicedesk.StatusCompleted, wantExecs: 1},
		{name: "owner unavailable: stays authorised", failures: []error{status.Error(codes.Unavailable, "down")}, want: servicedesk.StatusAuthorised},
		{name: "owner refuses: failed", failures: []error{status.Error(codes.FailedPrecondition, "wallet deactivated")}, want: servicedesk.StatusFailed,
			wantReason: "wallet deactivated"},
		{name: "owner timed out: stays authorised", failures: []error{status.Error(codes.DeadlineExceeded, "slow")}, want: servicedesk.StatusAuthorised},
		{name: "owner's internal error: retried", failures: []error{status.Error(codes.Internal, "bug")}, want: servicedesk.StatusAuthorised},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &owner{failures: tt.failures}
			st, desk, c := setup(t, o)
			got := desk.Execute(context.Background(), authorised(t, st, c))
			if got.Status != tt.want || o.executed.Load() != tt.wantExecs {
				t.Errorf("status %s after %d executions, want %s after %d", got.Status, o.executed.Load(), tt.want, tt.wantExecs)
			}
			if err := servicedesk.VerifyChain(got.ID, got.BodyHash, got.Status, got.Versions); err != nil {
				t.Errorf("audit chain after execution: %v", err)
			}
			if got.FailureReason != tt.wantReason {
				t.Errorf("failure reason %q, want %q", got.FailureReason, tt.wantReason)
			}
		})
	}
}

// TestSweeperResumesStalledExecution: the owner was down when the request was authorised
// (or the process died before recording the outcome); the sweeper finishes it, once.
func TestSweeperResumesStalledExecution(t *testing.T) {
	t.Parallel()
	o := &owner{failures: []error{status.Error(codes.Unavailable, "down")}}
	st, desk, c := setup(t, o)
	r := desk.Execute(context.Background(), authorised(t, st, c))
	if r.Status != servicedesk.StatusAuthorised {
		t.Fatalf("status %s, want AUTHORISED while the owner is down", r.Status)
	}
	c.Advance(grace - time.Second)
	desk.Sweep(context.Background())
	if got, err := st.Request(context.Background(), "ZT", r.ID); err != nil || got.Status != servicedesk.StatusAuthorised || o.executed.Load() != 0 {
		t.Fatalf("within the grace: status %s after %d executions (%v), want AUTHORISED, left to its inline execution", got.Status, o.executed.Load(), err)
	}
	c.Advance(2 * time.Second)
	var wg sync.WaitGroup
	for range 3 { // racing sweepers (several replicas)
		wg.Go(func() { desk.Sweep(context.Background()) })
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

// TestSweeperExpiresOverdueRequests: a pending request is left alone until its expiry, and
// expired by the system once the clock has passed it.
func TestSweeperExpiresOverdueRequests(t *testing.T) {
	t.Parallel()
	st, desk, c := setup(t, &owner{})
	svc := custodyWalletService(t)
	r := servicedesk.NewRequest("SERV-REQ-EXPIRE0001", servicedesk.Maker{Email: "m@zt", CompanyID: "ZT", CompanyName: "ZT Ltd"}, svc, "e2e-expire", `{}`, "h", c.Now())
	if err := st.InsertRequest(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	c.Advance(svc.Expiry - time.Second)
	desk.Sweep(context.Background())
	got, err := st.Request(context.Background(), "ZT", r.ID)
	if err != nil || got.Status != servicedesk.StatusPendingConfirmation {
		t.Fatalf("a second before its expiry: status %s (%v), want PENDING CONFIRMATION", got.Status, err)
	}
	c.Advance(2 * time.Second)
	desk.Sweep(context.Background())
	got, err = st.Request(context.Background(), "ZT", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := got.Versions[len(got.Versions)-1]
	if got.Status != servicedesk.StatusExpired || last.Role != servicedesk.RoleSystem || !last.At.Equal(c.Now()) {
		t.Errorf("status %s by %s at %s, want EXPIRED by SYSTEM at %s", got.Status, last.Role, last.At, c.Now())
	}
	if err := servicedesk.VerifyChain(got.ID, got.BodyHash, got.Status, got.Versions); err != nil {
		t.Errorf("audit chain after expiry: %v", err)
	}
}

// TestPersistentInternalErrorsEndInFailed: an owner that keeps failing with internal errors
// does not keep the request AUTHORISED forever.
func TestPersistentInternalErrorsEndInFailed(t *testing.T) {
	t.Parallel()
	failures := make([]error, servicedesk.MaxFailedAttempts)
	for i := range failures {
		failures[i] = status.Error(codes.Internal, "owner bug")
	}
	o := &owner{failures: failures}
	st, desk, c := setup(t, o)
	r := authorised(t, st, c)
	for i := range servicedesk.MaxFailedAttempts {
		r = desk.Execute(context.Background(), r)
		want := servicedesk.StatusAuthorised
		if i == servicedesk.MaxFailedAttempts-1 {
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
	svc, ok := servicedesk.Lookup("0x0013-001")
	if !ok {
		t.Fatal("the catalog has no 0x0013-001")
	}
	return svc
}
