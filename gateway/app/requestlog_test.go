package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zcustody/suite/platform/logging"
)

func TestRequestLogEchoesTheRequestID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "uuid", give: "3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b", want: "3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b"},
		{name: "upper-case uuid, as sent", give: "3F0E4B7A-8C1D-4E2F-9A6B-5C7D8E9F0A1B", want: "3F0E4B7A-8C1D-4E2F-9A6B-5C7D8E9F0A1B"},
		{name: "absent", give: "", want: ""},
		{name: "not a uuid", give: "hello", want: ""},
		{name: "uuid in braces", give: "{3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b}", want: ""},
		{name: "urn form", give: "urn:uuid:3f0e4b7a-8c1d-4e2f-9a6b-5c7d8e9f0a1b", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := logging.WithRequests(slog.New(slog.NewJSONHandler(&logs, nil)))
			// The inner handler fails, as authentication would: the id is echoed all the same.
			h := requestLog(logger, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "no", http.StatusUnauthorized)
			}))
			req := httptest.NewRequest(http.MethodPost, "/v3/api/trading/wallets", nil)
			if tt.give != "" {
				req.Header.Set("request-identifier", tt.give)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Header().Get("request-identifier"); got != tt.want {
				t.Errorf("request-identifier %q echoed as %q, want %q", tt.give, got, tt.want)
			}
			var line struct {
				Msg       string `json:"msg"`
				Status    int    `json:"status"`
				RequestID string `json:"request_id"`
				TraceID   string `json:"trace_id"`
			}
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", logs.String(), err)
			}
			if line.Msg != "request" || line.Status != http.StatusUnauthorized || line.RequestID != tt.want || len(line.TraceID) != 32 {
				t.Errorf("log line %+v, want the request's status, id %q and a trace", line, tt.want)
			}
		})
	}
}
