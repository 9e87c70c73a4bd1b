package signing_test

import (
	"crypto"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/signing"
)

func TestClientNewRequest(t *testing.T) {
	t.Parallel()
	key := edKey(t)
	now := time.UnixMilli(1_700_000_000_123)
	tests := []struct {
		name            string
		giveMethod      string
		givePath        string
		giveBody        []byte
		giveSubmitter   string
		wantContentType string
	}{
		{name: "post with body", giveMethod: http.MethodPost, givePath: "/v3/api/trading/wallets", giveBody: []byte(`{"paginationLimit":5}`),
			giveSubmitter: "maker@ztest.example", wantContentType: "application/json"},
		{name: "get without body", giveMethod: http.MethodGet, givePath: "/v2/api/core/wallets?limit=5"},
		{name: "post without body", giveMethod: http.MethodPost, givePath: "/v3/api/compliance/vasps/V1/activate/true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &signing.Client{BaseURL: "http://127.0.0.1:8080", Company: "ZTEST", Submitter: tt.giveSubmitter, Key: key,
				Now: func() time.Time { return now }}
			req, err := c.NewRequest(tt.giveMethod, tt.givePath, tt.giveBody)
			if err != nil {
				t.Fatalf("NewRequest: %v", err)
			}
			h := req.Header
			if got := h.Get(signing.HeaderCompany); got != "ZTEST" {
				t.Errorf("%s = %q, want ZTEST", signing.HeaderCompany, got)
			}
			if got := h.Get(signing.HeaderSubmitter); got != tt.giveSubmitter {
				t.Errorf("%s = %q, want %q", signing.HeaderSubmitter, got, tt.giveSubmitter)
			}
			if got := h.Get(signing.HeaderTimestamp); got != strconv.FormatInt(now.UnixMilli(), 10) {
				t.Errorf("%s = %q, want %d", signing.HeaderTimestamp, got, now.UnixMilli())
			}
			if _, err := uuid.Parse(h.Get(signing.HeaderRequestID)); err != nil {
				t.Errorf("%s = %q, want a UUID", signing.HeaderRequestID, h.Get(signing.HeaderRequestID))
			}
			if got := h.Get("Content-Type"); got != tt.wantContentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantContentType)
			}
			msg := signing.StringToSign("ZTEST", h.Get(signing.HeaderRequestID), h.Get(signing.HeaderTimestamp),
				"http://127.0.0.1:8080"+tt.givePath, tt.giveBody)
			if err := signing.Verify(key.Public(), msg, h.Get(signing.HeaderSignature)); err != nil {
				t.Errorf("signature does not verify over %q: %v", msg, err)
			}
		})
	}
}

func TestClientNewRequestFreshIdentifiers(t *testing.T) {
	t.Parallel()
	c := &signing.Client{BaseURL: "http://h", Company: "ZTEST", Key: edKey(t)}
	a, err := c.NewRequest(http.MethodGet, "/v2/api/core/wallets", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.NewRequest(http.MethodGet, "/v2/api/core/wallets", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Header.Get(signing.HeaderRequestID) == b.Header.Get(signing.HeaderRequestID) {
		t.Error("two requests share a request-identifier; the second would be refused as a replay")
	}
}

func TestClientNewRequestUnsupportedKey(t *testing.T) {
	t.Parallel()
	c := &signing.Client{BaseURL: "http://h", Company: "ZTEST", Key: crypto.PrivateKey("not a key")}
	if _, err := c.NewRequest(http.MethodGet, "/v2/api/core/wallets", nil); err == nil {
		t.Error("NewRequest with an unusable key succeeded, want an error")
	}
}

func TestClientDo(t *testing.T) {
	t.Parallel()
	key := edKey(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg := signing.StringToSign(r.Header.Get(signing.HeaderCompany), r.Header.Get(signing.HeaderRequestID),
			r.Header.Get(signing.HeaderTimestamp), "http://"+r.Host+r.URL.RequestURI(), body)
		if err := signing.Verify(key.Public(), msg, r.Header.Get(signing.HeaderSignature)); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c := &signing.Client{BaseURL: srv.URL, Company: "ZTEST", Key: key}
	code, body, err := c.Do(http.MethodPost, "/v3/api/trading/wallets?x=1", []byte(`{"a":1}`))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if code != http.StatusAccepted || string(body) != `{"a":1}` {
		t.Errorf("Do = %d %s, want 202 with the echoed body (signature verified by the server)", code, body)
	}
}
