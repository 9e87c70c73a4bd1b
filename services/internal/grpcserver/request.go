package grpcserver

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/zcustody/suite/platform/logging"
)

// requestContext continues the caller's request in this process: its request id and W3C
// trace (gRPC metadata x-request-id and traceparent, as the gateway or a peer service sent
// them) go into the context, so every line logged with it names them.
func requestContext() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		return handler(logging.NewContext(ctx, logging.Continue(first(md, logging.MetadataRequestID), first(md, logging.MetadataTraceparent))), req)
	}
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// PropagateRequest is the client interceptor of a service's calls to its peers: the request
// the call serves travels with it (x-request-id, and traceparent with this process's span as
// the parent).
func PropagateRequest() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := logging.FromContext(ctx); ok {
			pairs := []string{logging.MetadataTraceparent, r.Traceparent()}
			if r.ID != "" {
				pairs = append(pairs, logging.MetadataRequestID, r.ID)
			}
			ctx = metadata.AppendToOutgoingContext(ctx, pairs...)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
