package principal_test

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
)

const method = "/custody.v1.CustodyService/ListLegacyWallets"

type interception struct {
	called bool
	got    principal.Principal
	ok     bool
}

func intercept(t *testing.T, ctx context.Context, v *principal.Verifier, fullMethod string) (*interception, error) {
	t.Helper()
	seen := &interception{}
	handler := func(ctx context.Context, req any) (any, error) {
		seen.called = true
		seen.got, seen.ok = principal.FromContext(ctx)
		return req, nil
	}
	_, err := v.UnaryServerInterceptor()(ctx, "req", &grpc.UnaryServerInfo{FullMethod: fullMethod}, handler)
	return seen, err
}

func TestUnaryServerInterceptorRefuses(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	_, otherPriv := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	token := sign(t, priv, maker)
	tests := []struct {
		name string
		give metadata.MD // nil: no incoming metadata at all
	}{
		{name: "no metadata"},
		{name: "no token", give: metadata.Pairs("authorization", "Bearer "+token)},
		{name: "empty token", give: metadata.Pairs(principal.MetadataKey, "")},
		{name: "two tokens", give: metadata.Pairs(principal.MetadataKey, token, principal.MetadataKey, token)},
		{name: "invalid token", give: metadata.Pairs(principal.MetadataKey, "garbage")},
		{name: "token of an untrusted key", give: metadata.Pairs(principal.MetadataKey, sign(t, otherPriv, maker))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tt.give != nil {
				ctx = metadata.NewIncomingContext(ctx, tt.give)
			}
			seen, err := intercept(t, ctx, v, method)
			if status.Code(err) != codes.Unauthenticated {
				t.Errorf("interceptor = %v, want Unauthenticated", err)
			}
			if seen.called {
				t.Error("handler ran for a refused call")
			}
		})
	}
}

func TestUnaryServerInterceptorAccepts(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	tests := []struct {
		name       string
		giveMethod string
		giveMD     metadata.MD
		want       *principal.Principal // nil: no principal in the handler's context
	}{
		{name: "valid token", giveMethod: method, giveMD: metadata.Pairs(principal.MetadataKey, sign(t, priv, maker)),
			want: withIssuer(maker)},
		{name: "health check without token", giveMethod: "/grpc.health.v1.Health/Check"},
		{name: "health watch without token", giveMethod: "/grpc.health.v1.Health/Watch"},
		{name: "reflection without token", giveMethod: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"},
		{name: "health check with a bad token", giveMethod: "/grpc.health.v1.Health/Check", giveMD: metadata.Pairs(principal.MetadataKey, "garbage")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tt.giveMD != nil {
				ctx = metadata.NewIncomingContext(ctx, tt.giveMD)
			}
			seen, err := intercept(t, ctx, v, tt.giveMethod)
			if err != nil || !seen.called {
				t.Fatalf("interceptor = %v (handler ran: %v), want the call through", err, seen.called)
			}
			if tt.want == nil {
				if seen.ok {
					t.Errorf("handler context carries %+v, want no principal", seen.got)
				}
				return
			}
			if !seen.ok {
				t.Fatal("FromContext in the handler found no principal")
			}
			if diff := cmp.Diff(*tt.want, seen.got, cmpopts.IgnoreFields(principal.Principal{}, "IssuedAt", "ExpiresAt")); diff != "" {
				t.Errorf("principal mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnaryServerInterceptorPublicPrefixIsExact(t *testing.T) {
	t.Parallel()
	pub, _ := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	for _, m := range []string{"/grpc.health.v1.HealthX/Check", "/custody.v1.CustodyService/grpc.health.v1.Health/"} {
		if _, err := intercept(t, context.Background(), v, m); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without token = %v, want Unauthenticated", m, err)
		}
	}
}

type stream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s stream) Context() context.Context { return s.ctx }

func TestStreamServerInterceptor(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	tests := []struct {
		name       string
		giveMethod string
		giveMD     metadata.MD
		wantCode   codes.Code
	}{
		{name: "valid token", giveMethod: "/s.v1.S/Watch", giveMD: metadata.Pairs(principal.MetadataKey, sign(t, priv, maker)), wantCode: codes.OK},
		{name: "no token", giveMethod: "/s.v1.S/Watch", giveMD: metadata.MD{}, wantCode: codes.Unauthenticated},
		{name: "health watch without token", giveMethod: "/grpc.health.v1.Health/Watch", giveMD: metadata.MD{}, wantCode: codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			called := false
			ss := stream{ctx: metadata.NewIncomingContext(context.Background(), tt.giveMD)}
			err := v.StreamServerInterceptor()(nil, ss, &grpc.StreamServerInfo{FullMethod: tt.giveMethod}, func(any, grpc.ServerStream) error {
				called = true
				return nil
			})
			if status.Code(err) != tt.wantCode || called != (tt.wantCode == codes.OK) {
				t.Errorf("interceptor = %v (handler ran: %v), want %s", err, called, tt.wantCode)
			}
		})
	}
}

func TestOutgoingContext(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	signer := principal.NewSigner("settlement-engine", priv, time.Minute)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"settlement-engine": pub})
	system := principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"}

	ctx, err := signer.OutgoingContext(context.Background(), system)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := metadata.FromOutgoingContext(ctx)
	tests := []struct {
		name string
		give metadata.MD
	}{
		{name: "OutgoingContext", give: out},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// What the client sends is what the server receives.
			seen, err := intercept(t, metadata.NewIncomingContext(context.Background(), tt.give), v, method)
			if err != nil {
				t.Fatalf("interceptor refused the token: %v", err)
			}
			want := system
			want.Issuer = "settlement-engine"
			if diff := cmp.Diff(want, seen.got, cmpopts.IgnoreFields(principal.Principal{}, "IssuedAt", "ExpiresAt")); diff != "" {
				t.Errorf("principal mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func sign(t *testing.T, priv ed25519.PrivateKey, p principal.Principal) string {
	t.Helper()
	token, err := principal.NewSigner("gateway", priv, time.Minute).Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func withIssuer(p principal.Principal) *principal.Principal {
	p.Issuer = "gateway"
	return &p
}
