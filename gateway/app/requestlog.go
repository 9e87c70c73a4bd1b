package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/signing"
)

// HeaderTraceparent is the W3C trace context header.
const HeaderTraceparent = "traceparent"

// requestLog starts each request's part of its trace (the client's traceparent when valid, a
// new trace otherwise) under the client's request-identifier, so that every line the gateway
// logs about it, and the services' lines downstream (requestMetadata), name both; it echoes a
// well-formed request-identifier (a UUID) on every answer, so that the client and support find
// a request, failed or not, by the id the client chose; and it logs one line per request.
func requestLog(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		req := logging.Continue(r.Header.Get(signing.HeaderRequestID), r.Header.Get(HeaderTraceparent))
		ctx := logging.NewContext(r.Context(), req)
		if req.ID != "" {
			w.Header().Set(signing.HeaderRequestID, req.ID)
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(ctx))
		logger.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Int64("duration_ms", time.Since(start).Milliseconds()))
	})
}

// requestMetadata is the gRPC metadata that carries the request to the service: its id and
// the trace, with the gateway's span as the parent.
func requestMetadata(ctx context.Context) metadata.MD {
	r, ok := logging.FromContext(ctx)
	if !ok {
		return metadata.MD{}
	}
	md := metadata.Pairs(logging.MetadataTraceparent, r.Traceparent())
	if r.ID != "" {
		md.Set(logging.MetadataRequestID, r.ID)
	}
	return md
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
