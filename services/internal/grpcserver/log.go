package grpcserver

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
)

// logUnary maps handler errors to statuses (apperr.ToStatus) and logs one line per call.
// Internal causes are logged here and never sent to the caller.
func logUnary(logger *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		mapped := apperr.ToStatus(databaseDown(err))
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

// databaseDown turns the driver's errors of an unreachable database (no server selected,
// network failure, driver timeout) into Unavailable, so callers get a retryable 503 rather
// than an internal error; the cause is kept for the log line.
func databaseDown(err error) error {
	if err == nil {
		return nil
	}
	var sel topology.ServerSelectionError
	if errors.As(err, &sel) || mongo.IsNetworkError(err) || (mongo.IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded)) {
		return &unavailable{cause: err}
	}
	return err
}

type unavailable struct{ cause error }

func (u *unavailable) Error() string { return "database unavailable: " + u.cause.Error() }

// GRPCStatus makes the error a clean Unavailable with the suite's ER code.
func (u *unavailable) GRPCStatus() *status.Status {
	return (&apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable, Message: "the database is unavailable, retry later"}).GRPCStatus()
}
