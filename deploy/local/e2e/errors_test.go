package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	gatewayapp "github.com/zcustody/suite/gateway/app"
)

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		role      string
		method    string
		path      string
		body      string
		wantCode  int
		wantER    string
		wantAllow string
	}{
		{"unknown path", company, http.MethodPost, "/v3/api/servicedesk/nope", `{}`, http.StatusNotFound, "ER-404", ""},
		{"unknown version", maker, http.MethodPost, "/v4/api/servicedesk/products", `{}`, http.StatusNotFound, "ER-404", ""},
		{"unknown GET path", company, http.MethodGet, "/v3/api/wallets", ``, http.StatusNotFound, "ER-404", ""},
		{"GET on a POST path", maker, http.MethodGet, productsPath, ``, http.StatusMethodNotAllowed, "ER-204", "POST"},
		{"GET on a POST path with parameters", company, http.MethodGet, vaspPath("VASP-001", "true"), ``, http.StatusMethodNotAllowed, "ER-204", "POST"},
		{"PUT on a POST path", maker, http.MethodPut, "/v3/api/trading/wallets", `{}`, http.StatusMethodNotAllowed, "ER-204", "POST"},
		{"DELETE on a POST path", company, http.MethodDelete, "/v3/api/interchange/withdrawal/confirm", ``, http.StatusMethodNotAllowed, "ER-204", "POST"},
		{"POST on the GET path", company, http.MethodPost, "/v2/api/core/wallets", `{}`, http.StatusMethodNotAllowed, "ER-204", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(demo.CompanyZTEST, tt.role), tt.method, tt.path, []byte(tt.body))
			msg := wantError(t, r, tt.wantCode, tt.wantER)
			if diff := cmp.Diff(tt.wantAllow, r.header.Get("Allow")); diff != "" {
				t.Errorf("Allow header (-want +got):\n%s", diff)
			}
			if tt.wantAllow != "" && !strings.Contains(msg, tt.wantAllow) {
				t.Errorf("message %q does not list the allowed method %s", msg, tt.wantAllow)
			}
		})
	}
}

func TestBodyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		path      string
		body      string
		wantCode  int
		wantER    string
		wantInMsg string
	}{
		{"truncated JSON", productsPath, `{"products":`, http.StatusBadRequest, "ER-100", ""},
		{"not JSON", productsPath, `products=CUSTODY`, http.StatusBadRequest, "ER-100", ""},
		{"array instead of object", productsPath, `[{"products":["CUSTODY"]}]`, http.StatusBadRequest, "ER-100", ""},
		{"unknown field", productsPath, `{"productz":["CUSTODY"]}`, http.StatusBadRequest, "ER-108", "productz"},
		{"unknown field next to known ones", productsPath, `{"products":["CUSTODY"],"companyId":"ZACME"}`, http.StatusBadRequest, "ER-108", "companyId"},
		{"unknown field on an unimplemented endpoint", "/v3/api/servicedesk/requests", `{"isAdmin":true}`, http.StatusBadRequest, "ER-108", "isAdmin"},
		{"unknown nested field", "/v3/api/servicedesk/requests", `{"sort":{"byy":"id"}}`, http.StatusBadRequest, "ER-108", "byy"},
		{"string for an array", productsPath, `{"products":"CUSTODY"}`, http.StatusBadRequest, "ER-100", ""},
		{"number for a string", productsPath, `{"productIds":[19]}`, http.StatusBadRequest, "ER-108", "productIds"},
		// The signature covers every byte: data the server would not read is refused.
		{"two JSON values", productsPath, `{}{}`, http.StatusBadRequest, "ER-108", "after its JSON value"},
		{"text after the JSON value", productsPath, `{"products":["CUSTODY"]} trailing`, http.StatusBadRequest, "ER-108", "after its JSON value"},
		{"a second value after white space", "/v3/api/servicedesk/requests", "{}\n[]", http.StatusBadRequest, "ER-108", "after its JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, tt.path, []byte(tt.body))
			msg := wantError(t, r, tt.wantCode, tt.wantER)
			if !strings.Contains(msg, tt.wantInMsg) {
				t.Errorf("message %q does not name %q", msg, tt.wantInMsg)
			}
		})
	}
}

// paddedFilter returns a valid endpoint 6 body of exactly size bytes (padded with JSON
// whitespace, so that no single value exceeds the gateway's shape limits).
func paddedFilter(size int) []byte {
	const head, tail = `{"serviceNames":["A"]`, `}`
	return []byte(head + strings.Repeat(" ", size-len(head)-len(tail)) + tail)
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20 // the stack's MaxBodyBytes
	c := newClient(demo.CompanyZTEST, maker)
	t.Run("exactly the limit is accepted", func(t *testing.T) {
		t.Parallel()
		var got catalog
		wantOK(t, do(t, c, http.MethodPost, productsPath, paddedFilter(limit)), &got)
	})
	t.Run("over the limit", func(t *testing.T) {
		t.Parallel()
		wantError(t, do(t, c, http.MethodPost, productsPath, paddedFilter(limit+1)), http.StatusRequestEntityTooLarge, "ER-413")
	})
	t.Run("well over the limit", func(t *testing.T) {
		t.Parallel()
		wantError(t, do(t, c, http.MethodPost, productsPath, paddedFilter(3*limit)), http.StatusRequestEntityTooLarge, "ER-413")
	})
	t.Run("over the limit, chunked without Content-Length", func(t *testing.T) {
		t.Parallel()
		body := paddedFilter(limit + 1024)
		req, err := c.NewRequest(http.MethodPost, productsPath, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Body = io.NopCloser(struct{ io.Reader }{bytes.NewReader(body)})
		req.ContentLength = -1
		req.GetBody = nil
		wantError(t, send(t, req), http.StatusRequestEntityTooLarge, "ER-413")
	})
}

func TestContentType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string // "-" removes the header
		wantCode    int
	}{
		{"json", "application/json", http.StatusOK},
		{"json utf-8", "application/json; charset=utf-8", http.StatusOK},
		{"text", "text/plain", http.StatusUnsupportedMediaType},
		{"form", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"xml", "application/xml", http.StatusUnsupportedMediaType},
		{"json latin1", "application/json; charset=latin1", http.StatusUnsupportedMediaType},
		{"missing", "-", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := newClient(demo.CompanyZTEST, maker).NewRequest(http.MethodPost, productsPath, []byte(`{"products":["CUSTODY"]}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Del("Content-Type")
			if tt.contentType != "-" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			r := send(t, req)
			if tt.wantCode == http.StatusOK {
				var got catalog
				wantOK(t, r, &got)
				return
			}
			wantError(t, r, tt.wantCode, "ER-415")
		})
	}
}

// secondGateway starts another gateway over the shared stack, with change applied to the
// configuration the stack's own gateway uses, and returns its base URL.
func secondGateway(t *testing.T, change func(*gatewayapp.Config)) string {
	t.Helper()
	s := env.stack
	cfg := gatewayapp.Config{HTTPAddr: "127.0.0.1:0", MongoURI: s.MongoURI, Database: "gateway",
		ServicedeskAddr: s.Services["servicedesk"], TradingAddr: s.Services["trading"],
		InterchangeAddr: s.Services["interchange"], CustodyAddr: s.Services["custody"],
		ComplianceAddr: s.Services["compliance"], EventsAddr: s.Services["events"], PrivateKeyFile: filepath.Join(env.dataDir, "keys", "gateway-principal.pem"),
		LogLevel: "info", SignatureWindow: 5 * time.Minute, IdentityTTL: 30 * time.Second, MaxBodyBytes: 1 << 20,
		RequestTimeout: 15 * time.Second, ShutdownTimeout: 10 * time.Second, CompanyRPS: 500, UserRPS: 200, RateBurst: 400, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	change(&cfg)
	g, err := gatewayapp.New(t.Context(), cfg, env.logger)
	if err != nil {
		t.Fatalf("second gateway: %v", err)
	}
	srv := httptest.NewServer(g.Handler)
	t.Cleanup(func() {
		srv.Close()
		g.Close()
	})
	return srv.URL
}

// closedAddr returns an address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// silentAddr returns an address that accepts TCP connections and never answers.
func silentAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}

func TestServiceDown(t *testing.T) {
	t.Parallel()
	down := closedAddr(t)
	url := secondGateway(t, func(c *gatewayapp.Config) { c.CustodyAddr = down })
	r := do(t, clientAt(url, demo.CompanyZTEST, maker), http.MethodPost, "/v3/api/custody/currencies/fees", nil)
	msg := wantError(t, r, http.StatusServiceUnavailable, "ER-503")
	_, port, _ := net.SplitHostPort(down)
	for _, leak := range []string{down, port, "127.0.0.1", "dial", "connection refused"} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("error body leaks %q: %s", leak, r.body)
		}
	}
	t.Logf("message: %s", msg)
	t.Run("other services still answer", func(t *testing.T) {
		var got catalog
		wantOK(t, do(t, clientAt(url, demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{}`)), &got)
	})
	t.Run("healthz names the service that is down", func(t *testing.T) {
		r := send(t, mustRequest(t, http.MethodGet, url+"/healthz"))
		var got struct {
			Status string   `json:"status"`
			Down   []string `json:"down"`
		}
		if r.status != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503; body %s", r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("NOT_SERVING", got.Status); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"custody"}, got.Down); diff != "" {
			t.Errorf("down (-want +got):\n%s", diff)
		}
	})
}

func TestServiceDeadline(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	silent := silentAddr(t)
	url := secondGateway(t, func(c *gatewayapp.Config) {
		c.ComplianceAddr = silent
		c.RequestTimeout = timeout
	})
	begin := time.Now()
	r := do(t, clientAt(url, demo.CompanyZTEST, company), http.MethodPost, vaspPath("VASP-999", "true"), nil)
	elapsed := time.Since(begin)
	wantError(t, r, http.StatusGatewayTimeout, "ER-504")
	if elapsed > 5*time.Second {
		t.Errorf("answered after %v, want about the request timeout %v", elapsed, timeout)
	}
	if strings.Contains(string(r.body), silent) {
		t.Errorf("error body leaks the address: %s", r.body)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestMethodOverrideIgnored: only the documented method reaches a route. A POST that asks to
// be taken as a GET (X-HTTP-Method-Override, or a form body on a GET path) is a POST: 405 on
// the GET path, whatever the headers say.
func TestMethodOverrideIgnored(t *testing.T) {
	t.Parallel()
	for name, headers := range map[string]map[string]string{
		"override header":           {"X-HTTP-Method-Override": "GET", "Content-Type": "application/x-www-form-urlencoded"},
		"form body, no override":    {"Content-Type": "application/x-www-form-urlencoded"},
		"override header with json": {"X-HTTP-Method-Override": "GET", "Content-Type": "application/json"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req, err := newClient(demo.CompanyZTEST, company).NewRequest(http.MethodPost, walletsPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			r := send(t, req)
			if r.status == http.StatusOK {
				t.Fatalf("POST served as GET: %s", r.body)
			}
			if r.status != http.StatusMethodNotAllowed && r.status != http.StatusUnsupportedMediaType {
				t.Errorf("status %d, want 405 (or 415 for a form); body %s", r.status, r.body)
			}
		})
	}
}

// TestSignedForAnotherHost: a request signed for another deployment's URL (its Host) is
// refused even though the signature verifies: a captured request cannot be replayed against
// a gateway that trusts the same company key under another name.
func TestSignedForAnotherHost(t *testing.T) {
	t.Parallel()
	gw, err := url.Parse(env.stack.GatewayURL)
	if err != nil {
		t.Fatal(err)
	}
	for name, host := range map[string]string{"another host": "api.other-deployment.example", "another port": gw.Hostname() + ":1"} {
		t.Run(name, func(t *testing.T) {
			c := newClient(demo.CompanyZTEST, maker)
			c.BaseURL = "http://" + host
			req, err := c.NewRequest(http.MethodPost, productsPath, []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Host = gw.Host // sent to this gateway, Host header still the signed one
			msg := wantError(t, send(t, req), http.StatusUnauthorized, "ER-401")
			if !strings.Contains(msg, "public URL") {
				t.Errorf("message %q does not say the URL is not this gateway's", msg)
			}
		})
	}
	// The same request signed for this gateway's URL goes through.
	var got catalog
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{}`)), &got)
}

// TestEchoedInputIsCapped: an error message that quotes the client's input (here an unknown
// field named with 5,000 characters) echoes at most a bounded part of it.
func TestEchoedInputIsCapped(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("a", 5000)
	msg := wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{"`+name+`":1}`)), http.StatusBadRequest, "ER-108")
	if len(msg) > 600 || !strings.Contains(msg, "truncated") {
		t.Errorf("message of %d bytes, want it capped and marked truncated", len(msg))
	}
}
