package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// Defaults of ClientConfig.
const (
	DefaultTimeout          = 15 * time.Second
	DefaultMaxResponseBytes = 1024
)

// MaxRetryAfter caps the Retry-After a receiver may ask for, so that a stray huge value does
// not park a delivery for years.
const MaxRetryAfter = 24 * time.Hour

// Outcomes of an attempt.
const (
	OutcomeDelivered  = "DELIVERED"   // a 2xx answer
	OutcomeHTTPError  = "HTTP_ERROR"  // any other HTTP answer, 3xx included (never followed)
	OutcomeTimedOut   = "TIMED_OUT"   // no answer within the timeout
	OutcomeNoResponse = "NO_RESPONSE" // no HTTP answer: DNS, connect, TLS, refused address
)

// maxURLLen bounds a subscription URL; maxDetail the Detail of an attempt; maxHeaderBytes the
// response headers read; drainBytes what is read past the kept body to let the connection be
// reused.
const (
	maxURLLen      = 2048
	maxDetail      = 200
	maxHeaderBytes = 64 << 10
	drainBytes     = 4 << 10
)

// ErrAddressNotAllowed is wrapped by the errors that refuse a loopback, private, link-local,
// metadata or otherwise non-public address, at registration (IP literals) or at connect time.
var ErrAddressNotAllowed = errors.New("webhook: address not allowed")

// ClientConfig configures a Client. The zero value is the production setting: https only,
// public addresses only, 15 s, 1 KB of response kept.
type ClientConfig struct {
	// Timeout bounds a whole attempt: connect, TLS, request and response (default 15 s).
	Timeout time.Duration
	// AllowHTTP lets URLs be plain http (development and tests).
	AllowHTTP bool
	// AllowPrivate lets deliveries reach loopback, private, link-local and metadata addresses
	// (development and tests).
	AllowPrivate bool
	// MaxResponseBytes is how much of a response body is read and kept (default 1024).
	MaxResponseBytes int
	// TLSConfig, when set, is the base of the TLS settings (tests put the httptest server's
	// certificate in RootCAs); nil uses the system roots. The minimum version is raised to
	// TLS 1.2 whatever it says.
	TLSConfig *tls.Config
}

// withDefaults fills the zero fields.
func (cfg ClientConfig) withDefaults() ClientConfig {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return cfg
}

// Client makes delivery attempts. It is safe for concurrent use and meant to be shared: it
// pools connections. Capping the concurrent requests of a subscription is the caller's job.
type Client struct {
	cfg  ClientConfig
	http *http.Client
}

// NewClient returns a client whose every connection goes through a dialer that checks the
// address actually connected to (after DNS resolution, so rebinding cannot bypass it), with
// no proxy, TLS 1.2 or later and redirects not followed.
func NewClient(cfg ClientConfig) *Client {
	cfg = cfg.withDefaults()
	dialer := &net.Dialer{
		KeepAlive: 30 * time.Second,
		Control:   dialControl(cfg.AllowPrivate),
	}
	tlsConfig := &tls.Config{}
	if cfg.TLSConfig != nil {
		tlsConfig = cfg.TLSConfig.Clone()
	}
	if tlsConfig.MinVersion < tls.VersionTLS12 {
		tlsConfig.MinVersion = tls.VersionTLS12
	}
	transport := &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsConfig,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
		// Connect, TLS handshake and response are bounded by the attempt's Timeout alone.
	}
	return &Client{cfg: cfg, http: &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Attempt is the record of one delivery attempt. It never holds the body sent or header values.
type Attempt struct {
	Status     int           // HTTP status; 0 without an HTTP answer
	Outcome    string        // one of the Outcome constants
	Duration   time.Duration // from sending to the end of reading the kept response
	Response   string        // first MaxResponseBytes of the response body, cut to valid UTF-8
	Detail     string        // why, for TIMED_OUT and NO_RESPONSE
	RetryAfter time.Duration // the receiver's Retry-After on 429/502/503/504 (0 if none)
	Gone       bool          // 410 Gone: the subscription is to be suspended at once
}

// Deliver POSTs body to rawURL as application/json with headers and records the attempt.
// Addresses are checked when connecting; the URL's form (scheme, host, no userinfo) here.
func (c *Client) Deliver(ctx context.Context, rawURL string, headers http.Header, body []byte) Attempt {
	start := time.Now()
	if _, err := parseURL(rawURL, c.cfg); err != nil {
		return Attempt{Outcome: OutcomeNoResponse, Detail: cutDetail(err.Error())}
	}
	attemptCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var connected atomic.Bool
	attemptCtx = httptrace.WithClientTrace(attemptCtx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	req, err := http.NewRequestWithContext(attemptCtx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Attempt{Outcome: OutcomeNoResponse, Detail: "webhook: cannot build the request"}
	}
	for k, vs := range headers {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")

	resp, err := c.http.Do(req)
	if err != nil {
		a := c.failed(ctx, attemptCtx, err, connected.Load())
		a.Duration = time.Since(start)
		return a
	}
	received := time.Now()
	// A read cut short by the timeout keeps what came: the status is the answer.
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.cfg.MaxResponseBytes)))
	_, _ = io.CopyN(io.Discard, resp.Body, drainBytes)
	_ = resp.Body.Close()

	a := Attempt{
		Status:   resp.StatusCode,
		Outcome:  OutcomeHTTPError,
		Duration: time.Since(start),
		Response: cutUTF8(kept, c.cfg.MaxResponseBytes),
		Gone:     resp.StatusCode == http.StatusGone,
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.Outcome = OutcomeDelivered
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), received); ok {
			a.RetryAfter = d
		}
	}
	return a
}

// failed records an attempt that got no HTTP answer.
func (c *Client) failed(parent, attemptCtx context.Context, err error, connected bool) Attempt {
	var notAllowed *addressError
	switch {
	case errors.As(err, &notAllowed):
		// Without the address: a subscriber whose name resolves inside our network must not
		// learn our addresses from the attempt history.
		return Attempt{Outcome: OutcomeNoResponse, Detail: "address not allowed: the endpoint resolves to " + article(notAllowed.reason) + " address"}
	case errors.Is(parent.Err(), context.Canceled):
		return Attempt{Outcome: OutcomeNoResponse, Detail: "webhook: attempt cancelled"}
	case errors.Is(err, context.DeadlineExceeded) || attemptCtx.Err() != nil:
		what := "no connection"
		if connected {
			what = "no response"
		}
		return Attempt{Outcome: OutcomeTimedOut, Detail: fmt.Sprintf("%s within %s", what, c.cfg.Timeout)}
	}
	return Attempt{Outcome: OutcomeNoResponse, Detail: describe(err)}
}

// describe says why no HTTP answer came, without the URL (its query may hold a token).
func describe(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before a response"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return cutDetail("DNS lookup of " + dnsErr.Name + ": " + dnsErr.Err)
	}
	return cutDetail(err.Error())
}

// cutDetail keeps a detail short.
func cutDetail(s string) string { return cutUTF8([]byte(s), maxDetail) }

// cutUTF8 returns at most limit bytes of b as valid UTF-8 without NUL (text columns refuse
// it): a rune the limit split is dropped, invalid bytes and NUL become U+FFFD.
func cutUTF8(b []byte, limit int) string {
	var out strings.Builder
	for len(b) > 0 {
		if !utf8.FullRune(b) {
			break // split by the cap, or cut short
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == 0 {
			r = utf8.RuneError
		}
		if out.Len()+utf8.RuneLen(r) > limit {
			break
		}
		out.WriteRune(r)
	}
	return out.String()
}

// ParseRetryAfter reads a Retry-After value, delay-seconds or an HTTP-date, as a wait from
// now: a date past gives 0, and the wait is capped at MaxRetryAfter. It reports false for an
// empty or malformed value.
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(value, 10, 64); err == nil {
		if secs > uint64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	} else if errors.Is(err, strconv.ErrRange) {
		return MaxRetryAfter, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	d := at.Sub(now)
	return min(max(d, 0), MaxRetryAfter), true
}

// CheckURL says whether raw may be registered as a subscription URL: absolute, https
// (or http when cfg.AllowHTTP), with a host, no userinfo and no fragment. A host given as an
// IP literal must be a public address unless cfg.AllowPrivate; a DNS name is not resolved
// here: its addresses are checked at every connection.
func CheckURL(raw string, cfg ClientConfig) error {
	u, err := parseURL(raw, cfg)
	if err != nil {
		return err
	}
	if addr, err := netip.ParseAddr(u.Hostname()); err == nil && !cfg.AllowPrivate {
		if reason := disallowedRange(addr); reason != "" {
			return &addressError{addr: addr.WithZone(""), reason: reason}
		}
	}
	return nil
}

// parseURL checks the form of a subscription URL, not its addresses. Its errors quote no more
// of the URL than the scheme and the host.
func parseURL(raw string, cfg ClientConfig) (*url.URL, error) {
	if len(raw) > maxURLLen {
		return nil, fmt.Errorf("webhook URL: longer than %d bytes", maxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("webhook URL: not a valid URL")
	}
	switch {
	case !u.IsAbs() || u.Opaque != "":
		return nil, errors.New("webhook URL: want an absolute URL such as https://example.com/hook")
	case u.Scheme != "https" && !(u.Scheme == "http" && cfg.AllowHTTP):
		return nil, fmt.Errorf("webhook URL: scheme %q, want https", u.Scheme)
	case u.User != nil:
		return nil, errors.New("webhook URL: no user or password in the URL")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("webhook URL: no fragment (#...)")
	case u.Hostname() == "":
		return nil, errors.New("webhook URL: no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("webhook URL: port %q out of range", p)
		}
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err != nil && numericLabel(host) {
		// 127.1, 0x7f.0.0.1 or 2130706433: some resolvers read these as IPv4 addresses.
		return nil, fmt.Errorf("webhook URL: host %q is neither an IP address nor a DNS name", host)
	}
	return u, nil
}

// numericLabel says whether the last label of host is all digits, or hexadecimal with 0x: no
// top-level domain is, and resolvers may take such a name for an IPv4 address.
func numericLabel(host string) bool {
	host = strings.TrimSuffix(host, ".")
	label := strings.ToLower(host[strings.LastIndexByte(host, '.')+1:])
	if hex, ok := strings.CutPrefix(label, "0x"); ok {
		label = hex
		if label == "" {
			return true
		}
		return strings.Trim(label, "0123456789abcdef") == ""
	}
	return label != "" && strings.Trim(label, "0123456789") == ""
}

// addressError refuses an address in a range deliveries may not reach.
type addressError struct {
	addr   netip.Addr
	reason string
}

func (e *addressError) Error() string {
	return fmt.Sprintf("address not allowed: %s is %s", e.addr, e.reason)
}

func (e *addressError) Unwrap() error { return ErrAddressNotAllowed }

// article prefixes a range's reason with "a" or "an" ("a private", "an unspecified"); a
// reason that starts with one keeps it.
func article(reason string) string {
	switch {
	case strings.HasPrefix(reason, "a "), strings.HasPrefix(reason, "an "):
		return reason
	case strings.IndexAny(reason[:1], "aeiouAEIOU") == 0:
		return "an " + reason
	}
	return "a " + reason
}

// dialControl returns the net.Dialer Control func: it runs on every connection, with the
// resolved address about to be connected to, and refuses disallowed ranges.
func dialControl(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: cannot read %q", ErrAddressNotAllowed, address)
		}
		if reason := disallowedRange(ap.Addr()); reason != "" {
			return &addressError{addr: ap.Addr().WithZone(""), reason: reason}
		}
		return nil
	}
}

// blockedRanges are the ranges deliveries may not reach, each with what it is. IPv4-mapped
// IPv6 addresses are unmapped before the lookup.
var blockedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (shared address space)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata address"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	// Special-purpose ranges (RFC 6890): nothing a subscriber's endpoint lives on.
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved (documentation)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 (local use)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo (an IPv4 address inside)"},
}

// Prefixes of IPv6 addresses that reach an IPv4 address written inside them: the IPv4
// address decides (a NAT64 or 6to4 gateway would carry the delivery to it).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// disallowedRange returns what addr is when deliveries may not reach it ("loopback",
// "private", ...), or "" for an allowed (public) address.
func disallowedRange(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not a valid address"
	}
	addr = addr.WithZone("").Unmap() // a zoned address matches no prefix
	b := addr.As16()
	switch {
	case addr.Is6() && nat64.Contains(addr):
		return disallowedRange(netip.AddrFrom4([4]byte(b[12:16])))
	case addr.Is6() && sixToFour.Contains(addr):
		return disallowedRange(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	return ""
}
