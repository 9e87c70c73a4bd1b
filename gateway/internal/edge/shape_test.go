package edge_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zcustody/suite/gateway/internal/edge"
)

func TestGuardRefusesBadShapes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", edge.MaxStringBytes+1)
	ids := func(n int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = "W"
		}
		b, _ := json.Marshal(map[string]any{"ids": list})
		return string(b)
	}
	tests := []struct {
		name, give string
		wantStatus int
		wantCode   string
	}{
		{"nested too deep", strings.Repeat(`{"a":`, edge.MaxDepth+1) + "1" + strings.Repeat("}", edge.MaxDepth+1), 400, "ER-103"},
		{"nested arrays too deep", strings.Repeat("[", edge.MaxDepth+1) + strings.Repeat("]", edge.MaxDepth+1), 400, "ER-103"},
		{"nested to the limit", strings.Repeat(`{"a":`, edge.MaxDepth) + "1" + strings.Repeat("}", edge.MaxDepth), 200, ""},
		{"10,000-element filter", ids(10000), 400, "ER-103"},
		{"1,024-element filter", ids(edge.MaxArrayLength), 200, ""},
		{"string too long", `{"name":"` + long + `"}`, 400, "ER-103"},
		{"key too long", `{"` + long + `":1}`, 400, "ER-103"},
		{"invalid UTF-8", "{\"name\":\"\xff\xfe\"}", 400, "ER-100"},
		{"syntax error is left to the decoder", `{"a":`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			called := false
			h := edge.Guard(1<<22, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
			req := httptest.NewRequest(http.MethodPost, "/v3/api/trading/wallets", bytes.NewReader([]byte(tt.give)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantCode != "" && (!strings.Contains(rec.Body.String(), tt.wantCode) || called) {
				t.Errorf("body %s (next called: %v), want %s and next not called", rec.Body, called, tt.wantCode)
			}
		})
	}
}
