package auth_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/signing"
)

// TestSignedURLBehindAProxy: a client signs the public URL; the gateway, reached through a
// TLS-terminating proxy, rebuilds it from forwarded headers, believed only from the proxy.
func TestSignedURLBehindAProxy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const public = "https://api.custody.example"
	path := "/v3/api/compliance/vasps/V/activate/true"
	tests := []struct {
		name       string
		remote     string
		proto      string
		host       string
		wantStatus int
	}{
		{"from the proxy", "192.0.2.7:40000", "https", "api.custody.example", http.StatusNoContent},
		{"from the proxy, several hops", "192.0.2.7:40000", "https, http", "api.custody.example, internal:8080", http.StatusNoContent},
		{"forwarded headers from elsewhere are ignored", "203.0.113.9:40000", "https", "api.custody.example", http.StatusUnauthorized},
		{"from the proxy without forwarded headers", "192.0.2.7:40000", "", "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &signing.Client{BaseURL: public, Company: "ZED", Key: f.edKey, Now: func() time.Time { return now }}
			sent, err := c.NewRequest(http.MethodPost, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "http://gateway.internal:8080"+path, bytes.NewReader(nil))
			r.Header = sent.Header.Clone()
			r.RemoteAddr = tt.remote
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
				r.Header.Set("X-Forwarded-Host", tt.host)
			}
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, r)
			if rec.Code != tt.wantStatus {
				t.Errorf("status %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
		})
	}
}

// TestForwardedTokenReused: the same caller's requests carry the same forwarded token (signed
// once per reuse period), another caller's a different one.
func TestForwardedTokenReused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var tokens []string
	for _, c := range []call{
		{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath},
		{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath},
		{company: "ZRSA", key: f.rsaKey, method: http.MethodPost, path: vaspPath},
	} {
		r := request(t, c)
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, r)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		tok, ok := f.token(r.Header.Get(signing.HeaderRequestID))
		if !ok {
			t.Fatal("no token forwarded")
		}
		tokens = append(tokens, tok)
	}
	if tokens[0] != tokens[1] || tokens[0] == tokens[2] {
		t.Errorf("tokens: same caller equal = %v, other caller different = %v; want true, true", tokens[0] == tokens[1], tokens[0] != tokens[2])
	}
}
