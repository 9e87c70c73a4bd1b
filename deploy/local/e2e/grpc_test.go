package e2e_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
)

// complianceConn dials the compliance service directly, past the gateway.
func complianceConn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(env.stack.Services["compliance"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial compliance: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// token signs a company principal for ZTEST as issuer with key, valid for ttl (negative:
// already expired).
func token(t *testing.T, issuer string, key ed25519.PrivateKey, ttl time.Duration) string {
	t.Helper()
	tok, err := principal.NewSigner(issuer, key, ttl).Sign(principal.Principal{Kind: principal.KindCompany, CompanyID: demo.CompanyZTEST})
	if err != nil {
		t.Fatalf("sign token: %v", err)
	}
	return tok
}

func TestGRPCNeedsAPrincipal(t *testing.T) {
	t.Parallel()
	gatewayKey, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "gateway-principal.pem"))
	if err != nil {
		t.Fatal(err)
	}
	_, randomKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	client := compliancev1.NewComplianceServiceClient(complianceConn(t))
	// Tokens are signed when a subtest runs, not when it is declared: parallel subtests may
	// wait for a free slot longer than a token lives on a two-core machine.
	valid := func(t *testing.T) string { return token(t, "gateway", gatewayKey, time.Minute) }
	tests := []struct {
		name   string
		tokens func(t *testing.T) []string
		want   codes.Code
	}{
		{"no principal", func(*testing.T) []string { return nil }, codes.Unauthenticated},
		{"not a token", func(*testing.T) []string { return []string{"hello"} }, codes.Unauthenticated},
		{"signed by a random key", func(t *testing.T) []string { return []string{token(t, "gateway", randomKey, time.Minute)} }, codes.Unauthenticated},
		{"untrusted issuer", func(t *testing.T) []string { return []string{token(t, "intruder", gatewayKey, time.Minute)} }, codes.Unauthenticated},
		{"expired", func(t *testing.T) []string { return []string{token(t, "gateway", gatewayKey, -time.Minute)} }, codes.Unauthenticated},
		{"two tokens", func(t *testing.T) []string { v := valid(t); return []string{v, v} }, codes.Unauthenticated},
		// Control: the gateway's own token gets past authentication to the handler, which
		// answers that the VASP does not exist.
		{"gateway token", func(t *testing.T) []string { return []string{valid(t)} }, codes.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			for _, tok := range tt.tokens(t) {
				ctx = metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, tok)
			}
			_, err := client.SetVaspActivation(ctx, &compliancev1.SetVaspActivationRequest{VaspId: "VASP-997", Valid: "false"})
			if got := status.Code(err); got != tt.want {
				t.Errorf("code %v (%v), want %v", got, err, tt.want)
			}
		})
	}
}

func TestGRPCHealthNeedsNoPrincipal(t *testing.T) {
	t.Parallel()
	health := healthpb.NewHealthClient(complianceConn(t))
	for _, service := range []string{"", "compliance.v1.ComplianceService"} {
		t.Run("service "+service, func(t *testing.T) {
			resp, err := health.Check(t.Context(), &healthpb.HealthCheckRequest{Service: service})
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("status %v, want SERVING", resp.GetStatus())
			}
		})
	}
}
