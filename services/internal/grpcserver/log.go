package grpcserver

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/services/apperr"
)

// logUnary maps handler errors to statuses (apperr.ToStatus) and logs one line per call.
// Internal causes are logged here and never sent to the caller.
func logUnary(logger *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		mapped := apperr.ToStatus(err)
		code := status.Code(mapped)
		attrs := []any{"method", info.FullMethod, "code", code.String(), "duration_ms", time.Since(start).Milliseconds()}
		switch {
		case code == codes.Internal || code == codes.Unknown:
			logger.ErrorContext(ctx, "call failed", append(attrs, "error", err.Error())...)
		case code != codes.OK:
			logger.InfoContext(ctx, "call refused", append(attrs, "reason", status.Convert(mapped).Message())...)
		default:
			logger.DebugContext(ctx, "call served", attrs...)
		}
		return resp, mapped
	}
}
