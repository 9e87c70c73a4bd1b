package edge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/gateway/internal/edge"
	"github.com/zcustody/suite/gateway/internal/httperr"
)

const limit = 16

// seen is what the next handler observed.
type seen struct {
	called  bool
	body    []byte
	ctxBody []byte
}

func guarded(t *testing.T) (http.Handler, *seen) {
	t.Helper()
	s := &seen{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.called = true
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("next: read body: %v", err)
		}
		s.body = b
		s.ctxBody = edge.Body(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	return edge.Guard(limit, next), s
}

// chunked hides the length of r so the request carries no Content-Length, as a chunked
// upload does.
type chunked struct{ io.Reader }

func TestGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		giveBody        string
		giveContentType string
		giveChunked     bool
		wantStatus      int
		wantCode        string
	}{
		{name: "json body", giveBody: `{"a":1}`, giveContentType: "application/json", wantStatus: http.StatusNoContent},
		{name: "json with utf-8 charset", giveBody: `{"a":1}`, giveContentType: "application/json; charset=utf-8", wantStatus: http.StatusNoContent},
		{name: "json with upper-case charset", giveBody: `{"a":1}`, giveContentType: "application/json;charset=UTF-8", wantStatus: http.StatusNoContent},
		{name: "body exactly at the limit", giveBody: strings.Repeat("1", limit), giveContentType: "application/json", wantStatus: http.StatusNoContent},
		{name: "chunked body at the limit", giveBody: strings.Repeat("1", limit), giveContentType: "application/json", giveChunked: true, wantStatus: http.StatusNoContent},
		{name: "empty body without content type", wantStatus: http.StatusNoContent},
		{name: "empty body with another content type", giveContentType: "text/plain", wantStatus: http.StatusNoContent},
		{name: "content length over the limit", giveBody: strings.Repeat("1", limit+1), giveContentType: "application/json",
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: "ER-413"},
		{name: "chunked body over the limit", giveBody: strings.Repeat("1", limit+1), giveContentType: "application/json", giveChunked: true,
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: "ER-413"},
		{name: "too large and not json", giveBody: strings.Repeat("1", 10*limit), giveContentType: "text/plain",
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: "ER-413"},
		{name: "body without content type", giveBody: `{"a":1}`, wantStatus: http.StatusUnsupportedMediaType, wantCode: "ER-415"},
		{name: "text/plain body", giveBody: `{"a":1}`, giveContentType: "text/plain", wantStatus: http.StatusUnsupportedMediaType, wantCode: "ER-415"},
		{name: "form body", giveBody: `a=1`, giveContentType: "application/x-www-form-urlencoded", wantStatus: http.StatusUnsupportedMediaType, wantCode: "ER-415"},
		{name: "json with latin1 charset", giveBody: `{"a":1}`, giveContentType: "application/json; charset=latin1", wantStatus: http.StatusUnsupportedMediaType, wantCode: "ER-415"},
		{name: "malformed content type", giveBody: `{"a":1}`, giveContentType: "application/json; charset", wantStatus: http.StatusUnsupportedMediaType, wantCode: "ER-415"},
		{name: "json suffix type", giveBody: `{"a":1}`, giveContentType: "application/problem+json", wantStatus: http.StatusUnsupportedMediaType, wantCode: "ER-415"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, s := guarded(t)
			var body io.Reader = strings.NewReader(tt.giveBody)
			if tt.giveChunked {
				body = chunked{body}
			}
			req := httptest.NewRequest(http.MethodPost, "/v3/api/trading/wallets", body)
			if tt.giveChunked {
				req.ContentLength = -1
				req.TransferEncoding = []string{"chunked"}
			}
			if tt.giveContentType != "" {
				req.Header.Set("Content-Type", tt.giveContentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantCode == "" {
				if !s.called {
					t.Fatal("next was not called")
				}
				return
			}
			if s.called {
				t.Error("next was called for a refused request")
			}
			var b httperr.Body
			if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
				t.Fatalf("error body %q: %v", rec.Body, err)
			}
			if len(b.Details) != 1 || b.Details[0].Code != tt.wantCode || b.Status != tt.wantStatus {
				t.Errorf("error body = %+v, want status %d with %s", b, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

func TestGuardPassesExactBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give []byte
	}{
		{name: "compact", give: []byte(`{"a":1}`)},
		{name: "whitespace and newline kept", give: []byte("{ \"a\" :\t1 }\r\n")},
		{name: "non-ASCII kept", give: []byte(`{"n":"Zürich"}`)},
		{name: "empty", give: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, s := guarded(t)
			req := httptest.NewRequest(http.MethodPost, "/v3/api/trading/wallets", bytes.NewReader(tt.give))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), req)
			if !s.called {
				t.Fatal("next was not called")
			}
			if diff := cmp.Diff(string(tt.give), string(s.body)); diff != "" {
				t.Errorf("r.Body mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(string(tt.give), string(s.ctxBody)); diff != "" {
				t.Errorf("edge.Body(ctx) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// countingReader counts the bytes the server reads.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestGuardRefusesDeclaredLengthUnread(t *testing.T) {
	t.Parallel()
	h, s := guarded(t)
	body := &countingReader{r: strings.NewReader(strings.Repeat("1", 1<<20))}
	req := httptest.NewRequest(http.MethodPost, "/v3/api/trading/wallets", body)
	req.ContentLength = 1 << 20
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || s.called {
		t.Fatalf("status = %d (next called: %v), want 413 without next", rec.Code, s.called)
	}
	if body.n != 0 {
		t.Errorf("read %d bytes of a body whose Content-Length is over the limit, want none", body.n)
	}
}
