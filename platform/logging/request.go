package logging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"regexp"
	"strings"
)

// Metadata keys that carry a request's identity from the gateway through every gRPC hop.
const (
	// MetadataRequestID is the client's request-identifier, as the gateway verified it.
	MetadataRequestID = "x-request-id"
	// MetadataTraceparent is the W3C trace context of the hop.
	MetadataTraceparent = "traceparent"
)

// Request is what support needs to find a request in every process's log: the id the client
// chose and the W3C trace it belongs to.
type Request struct {
	ID      string // request-identifier as the client sent it, when a UUID; else empty
	TraceID string // 32 lowercase hex digits
	SpanID  string // 16 lowercase hex digits: this process's part of the trace
	Flags   string // 2 hex digits
}

type requestKey struct{}

// NewContext returns ctx carrying r; every line logged with it names r.
func NewContext(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// FromContext returns the request ctx carries.
func FromContext(ctx context.Context) (Request, bool) {
	r, ok := ctx.Value(requestKey{}).(Request)
	return r, ok
}

var (
	traceparentPattern = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)
	uuidPattern        = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// Continue starts this process's part of a request: the request id if it is a UUID (anything
// else is dropped: logs never carry caller-chosen text), the trace of a valid version-00
// traceparent or a new one, and a new span.
func Continue(requestID, traceparent string) Request {
	r := Request{SpanID: randomHex(8), Flags: "01"}
	if uuidPattern.MatchString(requestID) {
		r.ID = requestID
	}
	if m := traceparentPattern.FindStringSubmatch(traceparent); m != nil && m[1] != strings.Repeat("0", 32) && m[2] != strings.Repeat("0", 16) {
		r.TraceID, r.Flags = m[1], m[3]
	} else {
		r.TraceID = randomHex(16)
	}
	return r
}

// Traceparent is the W3C header of a call this process makes: the trace, with this
// process's span as the parent.
func (r Request) Traceparent() string { return "00-" + r.TraceID + "-" + r.SpanID + "-" + r.Flags }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// contextHandler adds the request of the record's context to every line.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, rec slog.Record) error {
	if r, ok := FromContext(ctx); ok {
		if r.ID != "" {
			rec.AddAttrs(slog.String("request_id", r.ID))
		}
		rec.AddAttrs(slog.String("trace_id", r.TraceID), slog.String("span_id", r.SpanID))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}

// WithRequests returns l naming the request of each line's context (New's loggers already do):
// the servers wrap whatever logger they are given.
func WithRequests(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(contextHandler); ok {
		return l
	}
	return slog.New(contextHandler{l.Handler()})
}
