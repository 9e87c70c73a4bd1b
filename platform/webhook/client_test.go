package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// The tests talk to httptest servers on loopback, so most of them set AllowPrivate (and
// AllowHTTP for plain servers); https servers are trusted through ClientConfig.TLSConfig.

// clientTestTLS trusts srv's certificate.
func clientTestTLS(srv *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

// clientTestServer serves h over https and counts its requests.
func clientTestServer(t *testing.T, tlsServer bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	handler := func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(http.HandlerFunc(handler))
	} else {
		srv = httptest.NewServer(http.HandlerFunc(handler))
	}
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestClientDeliversOverHTTPS(t *testing.T) {
	body := []byte(`{"type":"deposit.confirmed"}`)
	srv, hits := clientTestServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get(HeaderID) != "msg_1" || string(got) != string(body) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := NewClient(ClientConfig{AllowPrivate: true, TLSConfig: clientTestTLS(srv)})
	h := http.Header{}
	h.Set(HeaderID, "msg_1")
	a := c.Deliver(context.Background(), srv.URL+"/hook", h, body)
	if a.Outcome != OutcomeDelivered || a.Status != http.StatusNoContent || hits.Load() != 1 {
		t.Fatalf("attempt %+v, %d requests: want DELIVERED 204 once", a, hits.Load())
	}
	if a.Duration <= 0 || a.Detail != "" || a.Gone || a.RetryAfter != 0 {
		t.Errorf("attempt %+v", a)
	}
}

func TestClientStatuses(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter string
		outcome    string
		wantRetry  time.Duration
		gone       bool
	}{
		{"ok", 200, "", OutcomeDelivered, 0, false},
		{"accepted", 202, "", OutcomeDelivered, 0, false},
		{"server error", 500, "", OutcomeHTTPError, 0, false},
		{"gone", 410, "", OutcomeHTTPError, 0, true},
		{"unavailable", 503, "120", OutcomeHTTPError, 2 * time.Minute, false},
		{"too many", 429, "7", OutcomeHTTPError, 7 * time.Second, false},
		{"bad gateway, no header", 502, "", OutcomeHTTPError, 0, false},
		{"500 ignores Retry-After", 500, "120", OutcomeHTTPError, 0, false},
		{"bad Retry-After", 503, "soon", OutcomeHTTPError, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, "answer")
			})
			c := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true})
			a := c.Deliver(context.Background(), srv.URL, nil, []byte(`{}`))
			if a.Status != tc.status || a.Outcome != tc.outcome || a.RetryAfter != tc.wantRetry ||
				a.Gone != tc.gone || a.Response != "answer" {
				t.Errorf("attempt %+v", a)
			}
		})
	}
}

func TestClientRetryAfterDate(t *testing.T) {
	srv, _ := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	a := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true}).Deliver(context.Background(), srv.URL, nil, nil)
	if a.RetryAfter < 80*time.Second || a.RetryAfter > 90*time.Second {
		t.Errorf("RetryAfter %s, want about 90s", a.RetryAfter)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	target, targetHits := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {})
	srv, _ := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	a := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true}).Deliver(context.Background(), srv.URL, nil, []byte(`{}`))
	if a.Status != http.StatusFound || a.Outcome != OutcomeHTTPError {
		t.Errorf("attempt %+v: want HTTP_ERROR 302", a)
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("redirect target saw %d requests, want 0", n)
	}
}

func TestClientTimesOut(t *testing.T) {
	srv, _ := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // after the body, the server notices the client leaving
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true, Timeout: 200 * time.Millisecond})
	a := c.Deliver(context.Background(), srv.URL, nil, []byte(`{}`))
	if a.Outcome != OutcomeTimedOut || a.Status != 0 || !strings.Contains(a.Detail, "no response within 200ms") {
		t.Errorf("attempt %+v: want TIMED_OUT", a)
	}
	if a.Duration < 200*time.Millisecond || a.Duration > 3*time.Second {
		t.Errorf("duration %s", a.Duration)
	}
}

func TestClientClosedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true})
	a := c.Deliver(context.Background(), "http://"+addr+"/hook?token=s3cret", http.Header{"Authorization": {"Bearer s3cret"}}, nil)
	if a.Outcome != OutcomeNoResponse || a.Status != 0 || a.Detail == "" {
		t.Fatalf("attempt %+v: want NO_RESPONSE with a detail", a)
	}
	if strings.Contains(a.Detail, "s3cret") {
		t.Errorf("detail %q quotes the URL or a header", a.Detail)
	}
	t.Logf("detail: %s", a.Detail)
}

func TestClientCapsResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"long", strings.Repeat("x", 5000), strings.Repeat("x", 1024)},
		{"rune split by the cap", strings.Repeat("a", 1023) + "é and more", strings.Repeat("a", 1023)},
		{"invalid bytes and NUL", "ok\xff\x00", "ok\uFFFD\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, tc.body)
			})
			a := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true}).Deliver(context.Background(), srv.URL, nil, nil)
			if a.Response != tc.want || !utf8.ValidString(a.Response) || len(a.Response) > DefaultMaxResponseBytes {
				t.Errorf("response of %d bytes %.40q..., want %d bytes", len(a.Response), a.Response, len(tc.want))
			}
		})
	}
}

func TestClientRefusesLoopbackAtConnect(t *testing.T) {
	srv, hits := clientTestServer(t, true, func(w http.ResponseWriter, r *http.Request) {})
	plain, plainHits := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) {})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(plain.URL, "http://"))
	for _, tc := range []struct {
		name string
		cfg  ClientConfig
		url  string
	}{
		// The production setting: https, public addresses only; the URL is an IP literal
		// that Deliver does not pre-check, so the dialer refuses it.
		{"IP literal", ClientConfig{TLSConfig: clientTestTLS(srv)}, srv.URL},
		// A DNS name resolving to loopback: only the resolved address shows it.
		{"localhost", ClientConfig{AllowHTTP: true}, "http://localhost:" + port},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewClient(tc.cfg).Deliver(context.Background(), tc.url, nil, []byte(`{}`))
			if a.Outcome != OutcomeNoResponse || !strings.Contains(a.Detail, "address not allowed") ||
				!strings.Contains(a.Detail, "loopback") || strings.Contains(a.Detail, "127.0.0.1") || strings.Contains(a.Detail, "::1") {
				t.Errorf("attempt %+v: want NO_RESPONSE, address not allowed, without the address", a)
			}
		})
	}
	if hits.Load()+plainHits.Load() != 0 {
		t.Errorf("servers saw %d requests, want 0", hits.Load()+plainHits.Load())
	}
}

func TestClientRefusesBadURLs(t *testing.T) {
	c := NewClient(ClientConfig{AllowPrivate: true})
	for _, u := range []string{"http://example.com/hook", "https://user:pw@example.com/", "/hook"} {
		if a := c.Deliver(context.Background(), u, nil, nil); a.Outcome != OutcomeNoResponse || a.Detail == "" {
			t.Errorf("%s: attempt %+v, want NO_RESPONSE", u, a)
		}
	}
}

func TestClientCancelled(t *testing.T) {
	srv, _ := clientTestServer(t, false, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	a := NewClient(ClientConfig{AllowHTTP: true, AllowPrivate: true}).Deliver(ctx, srv.URL, nil, nil)
	if a.Outcome != OutcomeNoResponse || !strings.Contains(a.Detail, "cancelled") {
		t.Errorf("attempt %+v: want NO_RESPONSE, cancelled", a)
	}
}

func TestClientTransport(t *testing.T) {
	c := NewClient(ClientConfig{TLSConfig: &tls.Config{MinVersion: tls.VersionTLS10}})
	tr := c.http.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport takes a proxy")
	}
	if tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("TLS min version %x, want 1.2", tr.TLSClientConfig.MinVersion)
	}
	if c.http.CheckRedirect == nil || c.http.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
		t.Error("redirects are followed")
	}
	if c.cfg.Timeout != 15*time.Second || c.cfg.MaxResponseBytes != 1024 {
		t.Errorf("defaults %+v", c.cfg)
	}
}

func TestCheckURL(t *testing.T) {
	prod := ClientConfig{}
	for _, tc := range []struct {
		url string
		cfg ClientConfig
		ok  bool
	}{
		{"https://example.com/hook", prod, true},
		{"https://hooks.example.com:8443/a/b?x=1", prod, true},
		{"https://8.8.8.8/hook", prod, true},
		{"https://[2001:4860:4860::8888]/hook", prod, true},
		{"https://localhost/hook", prod, true}, // a name: checked when connecting
		{"http://example.com/hook", prod, false},
		{"http://example.com/hook", ClientConfig{AllowHTTP: true}, true},
		{"ftp://example.com/", prod, false},
		{"https://127.0.0.1/", prod, false},
		{"https://10.1.2.3/", prod, false},
		{"https://169.254.169.254/latest/meta-data/", prod, false},
		{"https://[::1]/", prod, false},
		{"https://[fe80::1]/", prod, false},
		{"https://[fe80::1%25eth0]/", prod, false},
		{"https://[::ffff:127.0.0.1]/", prod, false},
		{"https://[fd00:ec2::254]/", prod, false},
		{"https://100.64.0.1/", prod, false},
		{"https://0.0.0.0/", prod, false},
		{"https://127.0.0.1/", ClientConfig{AllowPrivate: true}, true},
		{"https://127.1/", prod, false},
		{"https://2130706433/", prod, false},
		{"https://0x7f.0.0.1/", prod, false},
		{"https://user:pw@example.com/", prod, false},
		{"https://user@example.com/", prod, false},
		{"https://example.com/hook#frag", prod, false},
		{"https://example.com/hook#", prod, false},
		{"/hook", prod, false},
		{"example.com/hook", prod, false},
		{"https:example.com", prod, false},
		{"https:///hook", prod, false},
		{"https://example.com:0/", prod, false},
		{"https://example.com:99999/", prod, false},
		{"https://example.com/" + strings.Repeat("a", 2100), prod, false},
		{"", prod, false},
	} {
		err := CheckURL(tc.url, tc.cfg)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%.60q, %+v) = %v, want ok %v", tc.url, tc.cfg, err, tc.ok)
		}
	}
}

func TestDisallowedRange(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		blocked bool
	}{
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"172.32.0.1", false},
		{"100.128.0.1", false},
		{"2001:4860:4860::8888", false},
		{"::ffff:8.8.8.8", false},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"::1", true},
		{"10.0.0.1", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"169.254.169.254", true},
		{"169.254.1.1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"ff02::1", true},
		{"255.255.255.255", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"fd00:ec2::254", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:100.64.0.1", true},
		{"64:ff9b::7f00:1", true},     // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", true},  // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", false},   // NAT64 of 8.8.8.8
		{"64:ff9b:1::808:808", true},  // local-use NAT64
		{"2002:a00:1::1", true},       // 6to4 of 10.0.0.1
		{"2002:808:808::1", false},    // 6to4 of 8.8.8.8
		{"2001:0:4136:e378::1", true}, // Teredo
		{"2001:db8::1", true},
		{"192.0.0.8", true},
		{"198.18.0.1", true},
		{"198.19.255.255", true},
		{"203.0.113.7", true},
		{"8.8.8.8", false},
		{"2a00:1450:4001:800::200e", false},
	} {
		got := disallowedRange(netip.MustParseAddr(tc.addr))
		if (got != "") != tc.blocked {
			t.Errorf("disallowedRange(%s) = %q, want blocked %v", tc.addr, got, tc.blocked)
		}
	}
	if got := disallowedRange(netip.Addr{}); got == "" {
		t.Error("the zero address is allowed")
	}
	if got := disallowedRange(netip.MustParseAddr("169.254.169.254")); !strings.Contains(got, "metadata") {
		t.Errorf("169.254.169.254 is %q, want metadata", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"99999999999999999999999", MaxRetryAfter, true},
		{"864000", MaxRetryAfter, true},
		{"Sat, 01 Mar 2025 12:05:00 GMT", 5 * time.Minute, true},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"tomorrow", 0, false},
	} {
		got, ok := ParseRetryAfter(tc.value, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tc.value, got, ok, tc.want, tc.ok)
		}
	}
}
