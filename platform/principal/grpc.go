package principal

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// publicMethods need no principal: probes and service discovery.
var publicPrefixes = []string{"/grpc.health.v1.Health/", "/grpc.reflection."}

func isPublic(method string) bool {
	for _, p := range publicPrefixes {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// UnaryServerInterceptor refuses calls without a verifiable principal and puts the principal
// into the handler's context.
func (v *Verifier) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if isPublic(info.FullMethod) {
			return handler(ctx, req)
		}
		p, err := v.fromIncoming(ctx)
		if err != nil {
			return nil, err
		}
		return handler(NewContext(ctx, p), req)
	}
}

// StreamServerInterceptor is the streaming counterpart of UnaryServerInterceptor.
func (v *Verifier) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if isPublic(info.FullMethod) {
			return handler(srv, ss)
		}
		p, err := v.fromIncoming(ss.Context())
		if err != nil {
			return err
		}
		return handler(srv, &principalStream{ServerStream: ss, ctx: NewContext(ss.Context(), p)})
	}
}

func (v *Verifier) fromIncoming(ctx context.Context) (Principal, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	tokens := md.Get(MetadataKey)
	if len(tokens) != 1 {
		return Principal{}, status.Error(codes.Unauthenticated, "missing caller credentials")
	}
	p, err := v.Verify(tokens[0])
	if err != nil {
		return Principal{}, status.Error(codes.Unauthenticated, "invalid caller credentials")
	}
	return p, nil
}

// OutgoingContext returns ctx with p's token as outgoing metadata.
func (s *Signer) OutgoingContext(ctx context.Context, p Principal) (context.Context, error) {
	token, err := s.Sign(p)
	if err != nil {
		return nil, err
	}
	return metadata.AppendToOutgoingContext(ctx, MetadataKey, token), nil
}

// principalStream carries the verified principal in its context.
type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *principalStream) Context() context.Context { return s.ctx }
