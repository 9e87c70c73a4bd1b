package grpcserver_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/grpcserver"
)

// vaspServer is a fixture service: it panics, fails, waits or answers depending on the VASP
// id. "slow" says it started on started and answers once release is closed.
type vaspServer struct {
	compliancev1.UnimplementedComplianceServiceServer
	started chan struct{}
	release chan struct{}
}

func (v vaspServer) SetVaspActivation(ctx context.Context, req *compliancev1.SetVaspActivationRequest) (*compliancev1.SetVaspActivationResponse, error) {
	switch req.GetVaspId() {
	case "panic":
		panic("boom")
	case "slow":
		v.started <- struct{}{}
		<-v.release
	case "fail":
		return nil, errors.New("secret internal cause")
	}
	p, _ := principal.FromContext(ctx)
	return &compliancev1.SetVaspActivationResponse{VaspId: req.GetVaspId(), VaspName: p.CompanyID}, nil
}

type harness struct {
	vasp    vaspServer
	conn    *grpc.ClientConn
	signer  *principal.Signer
	healthy *atomic.Bool
	cancel  context.CancelFunc
	done    chan error
}

func start(t *testing.T) *harness {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	policy := authz.Policy{compliancev1.ComplianceService_SetVaspActivation_FullMethodName: authz.Anyone}
	srv := grpcserver.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub}), policy)
	vasp := vaspServer{started: make(chan struct{}, 1), release: make(chan struct{})}
	compliancev1.RegisterComplianceServiceServer(srv.GRPC, vasp)
	h := &harness{vasp: vasp, signer: principal.NewSigner("gateway", priv, time.Minute), healthy: &atomic.Bool{}, done: make(chan error, 1)}
	h.healthy.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	cfg := config.Common{GRPCAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", ShutdownTimeout: 2 * time.Second, HealthInterval: 20 * time.Millisecond}
	lis, err := grpcserver.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ping := func(context.Context) error {
		if h.healthy.Load() {
			return nil
		}
		return errors.New("database down")
	}
	go func() { h.done <- srv.Serve(ctx, lis, cfg, ping) }()
	h.conn, err = grpc.NewClient(lis.GRPC.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.conn.Close(); h.stop(t) })
	return h
}

func (h *harness) stop(t *testing.T) {
	t.Helper()
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			t.Errorf("Serve returned %v after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Serve did not return after cancel")
	}
}

func (h *harness) call(t *testing.T, vasp string) (*compliancev1.SetVaspActivationResponse, error) {
	t.Helper()
	ctx, err := h.signer.OutgoingContext(context.Background(), principal.Principal{Kind: principal.KindCompany, CompanyID: "ZT"})
	if err != nil {
		t.Fatal(err)
	}
	return compliancev1.NewComplianceServiceClient(h.conn).SetVaspActivation(ctx, &compliancev1.SetVaspActivationRequest{VaspId: vasp, Valid: "true"})
}

func waitHealth(t *testing.T, conn *grpc.ClientConn, service string, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	var last healthpb.HealthCheckResponse_ServingStatus
	for time.Now().Before(deadline) {
		resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
		if err == nil && resp.GetStatus() == want {
			return
		}
		last = resp.GetStatus()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("health of %q = %v, want %v", service, last, want)
}

func TestHealthFollowsDatabase(t *testing.T) {
	t.Parallel()
	h := start(t)
	waitHealth(t, h.conn, "", healthpb.HealthCheckResponse_SERVING)
	waitHealth(t, h.conn, "compliance.v1.ComplianceService", healthpb.HealthCheckResponse_SERVING)
	h.healthy.Store(false)
	waitHealth(t, h.conn, "", healthpb.HealthCheckResponse_NOT_SERVING)
	waitHealth(t, h.conn, "compliance.v1.ComplianceService", healthpb.HealthCheckResponse_NOT_SERVING)
	waitHealth(t, h.conn, grpcserver.LivenessService, healthpb.HealthCheckResponse_SERVING)
	h.healthy.Store(true)
	waitHealth(t, h.conn, "", healthpb.HealthCheckResponse_SERVING)
}

func TestCalls(t *testing.T) {
	t.Parallel()
	h := start(t)
	tests := []struct {
		give     string
		wantCode codes.Code
		wantMsg  string
	}{
		{give: "ok", wantCode: codes.OK},
		{give: "panic", wantCode: codes.Internal, wantMsg: "internal error"},
		{give: "fail", wantCode: codes.Internal, wantMsg: "internal error"},
		{give: "ok", wantCode: codes.OK}, // still serving after a panic
		// The declared bounds run in the chain, before the handler: vaspId is at most 128.
		{give: strings.Repeat("v", 129), wantCode: codes.InvalidArgument, wantMsg: "vaspId must be at most 128 characters"},
	}
	for _, tt := range tests {
		resp, err := h.call(t, tt.give)
		if got := status.Code(err); got != tt.wantCode {
			t.Fatalf("call %s: code %v, want %v (%v)", tt.give, got, tt.wantCode, err)
		}
		if tt.wantMsg != "" && status.Convert(err).Message() != tt.wantMsg {
			t.Errorf("call %s: message %q, want %q (no internals leaked)", tt.give, status.Convert(err).Message(), tt.wantMsg)
		}
		if tt.wantCode == codes.OK && resp.GetVaspName() != "ZT" {
			t.Errorf("call %s: handler saw company %q, want the principal's ZT", tt.give, resp.GetVaspName())
		}
	}
}

func TestRefusesCallsThePolicyDoesNotAllow(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx, err := h.signer.OutgoingContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: "gateway"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = compliancev1.NewComplianceServiceClient(h.conn).SetVaspActivation(ctx, &compliancev1.SetVaspActivationRequest{VaspId: "ok", Valid: "true"})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a system principal the policy does not admit: %v, want PermissionDenied", err)
	}
	_, err = compliancev1.NewComplianceServiceClient(h.conn).SearchVasps(ctx, &compliancev1.SearchVaspsRequest{})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a method the policy does not list: %v, want PermissionDenied", err)
	}
}

func TestRefusesCallsWithoutPrincipal(t *testing.T) {
	t.Parallel()
	h := start(t)
	_, err := compliancev1.NewComplianceServiceClient(h.conn).SetVaspActivation(context.Background(), &compliancev1.SetVaspActivationRequest{VaspId: "ok", Valid: "true"})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("call without principal: %v, want Unauthenticated", err)
	}
}

func TestGracefulShutdownFinishesInFlightCalls(t *testing.T) {
	t.Parallel()
	h := start(t)
	waitHealth(t, h.conn, "", healthpb.HealthCheckResponse_SERVING)
	result := make(chan error, 1)
	go func() {
		_, err := h.call(t, "slow")
		result <- err
	}()
	<-h.vasp.started // the call is in flight
	h.cancel()
	close(h.vasp.release)
	if err := <-result; err != nil {
		t.Fatalf("in-flight call during shutdown: %v, want success", err)
	}
}

// TestReflectionOnlyWhenEnabled: a server lists its methods through reflection only when the
// service enables it (config.Common.Reflection: not in production by default).
func TestReflectionOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	const reflectionService = "grpc.reflection.v1.ServerReflection"
	srv := grpcserver.New(slog.New(slog.DiscardHandler), principal.NewVerifier(nil), authz.Policy{})
	if _, ok := srv.GRPC.GetServiceInfo()[reflectionService]; ok {
		t.Error("a new server serves reflection before it is enabled")
	}
	srv.EnableReflection()
	if _, ok := srv.GRPC.GetServiceInfo()[reflectionService]; !ok {
		t.Error("reflection is not served once enabled")
	}
}
