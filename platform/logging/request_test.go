package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"testing"

	"github.com/zcustody/suite/platform/logging"
)

func TestContinue(t *testing.T) {
	t.Parallel()
	const id = "3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b"
	tests := []struct {
		name, id, traceparent string
		wantID, wantTrace     string // wantTrace "" means a new trace
	}{
		{name: "the client's trace", id: id, traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", wantID: id, wantTrace: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{name: "no trace", id: id, wantID: id},
		{name: "unknown version", id: id, traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", wantID: id},
		{name: "all-zero trace id", id: id, traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01", wantID: id},
		{name: "upper-case hex", id: id, traceparent: "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", wantID: id},
		{name: "an id that is no UUID is not logged", id: "x\" injected", wantID: ""},
	}
	hex := regexp.MustCompile(`^[0-9a-f]+$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := logging.Continue(tt.id, tt.traceparent)
			if r.ID != tt.wantID {
				t.Errorf("ID %q, want %q", r.ID, tt.wantID)
			}
			if tt.wantTrace != "" && r.TraceID != tt.wantTrace {
				t.Errorf("TraceID %q, want the client's %q", r.TraceID, tt.wantTrace)
			}
			if len(r.TraceID) != 32 || len(r.SpanID) != 16 || !hex.MatchString(r.TraceID+r.SpanID) {
				t.Errorf("trace %q span %q, want 32 and 16 lower-case hex digits", r.TraceID, r.SpanID)
			}
			if !regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`).MatchString(r.Traceparent()) {
				t.Errorf("Traceparent %q is not a W3C traceparent", r.Traceparent())
			}
		})
	}
}

func TestLinesNameTheRequest(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := logging.WithRequests(slog.New(slog.NewJSONHandler(&buf, nil))).With("service", "x")
	r := logging.Continue("3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b", "")
	logger.InfoContext(logging.NewContext(context.Background(), r), "hello")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["request_id"] != r.ID || line["trace_id"] != r.TraceID || line["span_id"] != r.SpanID || line["service"] != "x" {
		t.Errorf("line %v, want the request's id, trace and span", line)
	}
	if logging.WithRequests(logger) != logger {
		t.Error("WithRequests wraps a logger twice")
	}
}
