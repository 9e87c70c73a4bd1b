// Package fault_test holds the fault-tolerance tests of the suite (issue point 3): the
// database goes away under load and comes back, a service is killed in the middle of a
// settlement and restarted, a service hangs past the gateway's deadline, and the gateway
// and a service shut down with requests in flight. Each test runs a stack of its own
// (embedded database, the five services, the gateway) whose links it controls through the
// injectors of package fault, and is bounded in time.
package fault_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/embeddb"
	"github.com/zcustody/suite/deploy/local/fault"
	"github.com/zcustody/suite/deploy/local/stack"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/signing"
	interchangeapp "github.com/zcustody/suite/services/interchange/app"
)

// Demo users by role; the empty role is a company-level caller (no submitter-id).
const (
	maker   = "maker"
	viewer  = "viewer"
	company = ""
)

// setup says how a test's stack is wired.
type setup struct {
	// ownLink lists services that reach the database through a link of their own instead
	// of the shared one (so a test can cut one service off alone).
	ownLink []string
	// relays lists the calls between services that pass through a fault.Relay: {from, to}.
	relays [][2]string
	// service changes a service's settings at each of its starts.
	service func(name string, c *config.Common)
	// interchange changes interchange's own settings (its recovery sweeper, its lease).
	interchange func(c *interchangeapp.Config)
}

// suite is one test's stack and the injectors on its links.
type suite struct {
	t      *testing.T
	dir    string
	direct string       // the database's URI, not through any proxy (fixtures, checks)
	link   *fault.Proxy // the database link of the gateway and of every service not in own
	own    map[string]*fault.Proxy
	relays map[[2]string]*fault.Relay
	stack  *stack.Stack
	logger *slog.Logger
	logs   *logBuffer
}

// newSuite starts an embedded database, the proxies and relays setup asks for, and a stack
// over them; everything stops when the test ends.
func newSuite(t *testing.T, cfg setup) *suite {
	t.Helper()
	s := &suite{t: t, dir: t.TempDir(), own: map[string]*fault.Proxy{}, relays: map[[2]string]*fault.Relay{}, logs: &logBuffer{}}
	var out io.Writer = s.logs
	if os.Getenv("FAULT_VERBOSE") != "" {
		out = io.MultiWriter(s.logs, os.Stderr)
	}
	s.logger = slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last log lines of the stack:\n%s", s.logs.tail(80))
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := embeddb.Start(ctx, embeddb.Config{Dir: filepath.Join(s.dir, "ferretdb"), Logger: s.logger, Profile: profileSink(t)})
	if err != nil {
		t.Fatalf("embedded database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	s.direct = db.URI()
	upstream := hostOf(t, s.direct)
	s.link = s.newProxy(upstream)
	for _, name := range cfg.ownLink {
		s.own[name] = s.newProxy(upstream)
	}
	var relayErr error
	opts := stack.Options{
		MongoURI: s.direct, // the demo data goes in directly
		DataDir:  s.dir,
		HTTPAddr: "127.0.0.1:0",
		Logger:   s.logger,
		Service: func(name string, c *config.Common) {
			c.MongoURI = s.uriOf(name)
			c.HealthInterval = 200 * time.Millisecond
			if cfg.service != nil {
				cfg.service(name, c)
			}
		},
		Peers:       s.relayPeers(cfg.relays, &relayErr),
		Gateway:     func(c *gatewayapp.Config) { c.MongoURI = s.uriOf("gateway") },
		Interchange: cfg.interchange,
	}
	st, err := stack.Start(ctx, opts)
	if err == nil {
		s.stack = st
		t.Cleanup(func() {
			if err := st.Stop(); err != nil {
				t.Errorf("stop stack: %v", err)
			}
		})
	}
	if err != nil || relayErr != nil {
		t.Fatalf("start stack: %v", errors.Join(err, relayErr))
	}
	return s
}

// relayPeers points each caller of pairs at a relay to its peer. The stack asks when it
// starts a service, once every service has its address; the relay is made on first use
// (its client connects lazily, so the target need not listen yet) and kept for restarts.
func (s *suite) relayPeers(pairs [][2]string, failed *error) func(string, map[string]string) {
	var mu sync.Mutex
	return func(name string, peers map[string]string) {
		mu.Lock()
		defer mu.Unlock()
		for _, pair := range pairs {
			if pair[0] != name {
				continue
			}
			r, ok := s.relays[pair]
			if !ok {
				var err error
				if r, err = fault.NewRelay(peers[pair[1]]); err != nil {
					*failed = errors.Join(*failed, err)
					continue
				}
				s.relays[pair] = r
				s.t.Cleanup(r.Close)
			}
			peers[pair[1]] = r.Addr()
		}
	}
}

func (s *suite) newProxy(upstream string) *fault.Proxy {
	s.t.Helper()
	p, err := fault.NewProxy(upstream)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(p.Close)
	return p
}

// uriOf is the database URI a component uses: its own link's, or the shared one's.
func (s *suite) uriOf(name string) string {
	p, ok := s.own[name]
	if !ok {
		p = s.link
	}
	return "mongodb://" + p.Addr() + "/"
}

// relay returns the relay of calls from → to.
func (s *suite) relay(from, to string) *fault.Relay {
	s.t.Helper()
	r, ok := s.relays[[2]string{from, to}]
	if !ok {
		s.t.Fatalf("no relay %s → %s", from, to)
	}
	return r
}

func hostOf(t *testing.T, uri string) string {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// client signs requests as companyID with the demo user of role as submitter.
func (s *suite) client(companyID, role string) *signing.Client {
	return clientAt(s.t, s.stack.GatewayURL, companyID, role)
}

func clientAt(t *testing.T, baseURL, companyID, role string) *signing.Client {
	t.Helper()
	return signedAs(t, baseURL, companyID, role, map[string]string{demo.CompanyZTEST: "ztest", demo.CompanyZACME: "zacme"}[companyID])
}

// signedAs is a client of companyID signing with the demo keys named keys (a company's short
// name: its company key, its users' e-mails).
func signedAs(t *testing.T, baseURL, companyID, role, keys string) *signing.Client {
	t.Helper()
	file := keys + "-company.pem"
	pemBytes, err := demo.Key(file)
	if err != nil {
		t.Fatal(err)
	}
	key, err := signing.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	c := &signing.Client{BaseURL: baseURL, Company: companyID, Key: crypto.PrivateKey(key),
		HTTP: &http.Client{Timeout: 30 * time.Second}}
	if role != company {
		c.Submitter = demo.UserEmail(strings.ToLower(companyID), role)
	}
	return c
}

// response is what a client saw of an answer.
type response struct {
	status  int
	header  http.Header
	body    []byte
	err     error // transport error (no answer)
	elapsed time.Duration
}

// call signs and sends one request; a transport failure is returned in response.err.
func call(c *signing.Client, method, path string, body []byte) response {
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		return response{err: err}
	}
	start := time.Now()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return response{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data, err: err, elapsed: time.Since(start)}
}

// mustOK fails unless r is a 200 and decodes its body into v.
func mustOK(t *testing.T, r response, v any) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("no answer: %v", r.err)
	}
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decode %s: %v", r.body, err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// errorBody is the contract's error body.
type errorBody struct {
	Timestamp string `json:"timestamp"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Details   []struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"details"`
}

var errTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// contractError checks that r is the contract's error body for HTTP status with code,
// and that it leaks nothing of the infrastructure; it returns what is wrong, or "".
func contractError(r response, status int, code string) string {
	if r.err != nil {
		return fmt.Sprintf("no answer: %v", r.err)
	}
	if r.status != status {
		return fmt.Sprintf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		return fmt.Sprintf("Content-Type %q, want application/json", ct)
	}
	var b errorBody
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return fmt.Sprintf("body %s is not the contract's error body: %v", r.body, err)
	}
	switch {
	case !errTimestamp.MatchString(b.Timestamp):
		return fmt.Sprintf("timestamp %q is not ISO 8601 UTC with milliseconds", b.Timestamp)
	case b.Status != status || b.Title != http.StatusText(status):
		return fmt.Sprintf("status %d / title %q in the body, want %d / %q", b.Status, b.Title, status, http.StatusText(status))
	case len(b.Details) != 1 || b.Details[0].Code != code || b.Details[0].Message == "":
		return fmt.Sprintf("details %+v, want one with code %s and a message", b.Details, code)
	}
	for _, leak := range []string{"127.0.0.1", "mongodb", "dial", "connection", "topology", "server selection"} {
		if strings.Contains(strings.ToLower(string(r.body)), leak) {
			return fmt.Sprintf("body leaks %q: %s", leak, r.body)
		}
	}
	return ""
}

// health asks a gRPC server's grpc.health.v1 for service ("" = the whole server).
func health(ctx context.Context, addr, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	return resp.GetStatus(), err
}

// waitFor polls cond every 20 ms until it holds or limit passes; it returns how long it took.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// logBuffer keeps the stack's log lines for the report of a failed test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimRight(b.buf.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// profileSink is where the embedded database profiles its commands when FAULT_PROFILE
// names a file (one line per command: name, collection, microseconds); nil otherwise.
func profileSink(t *testing.T) io.Writer {
	path := os.Getenv("FAULT_PROFILE")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	w := bufio.NewWriter(f)
	t.Cleanup(func() {
		_ = w.Flush()
		_ = f.Close()
	})
	return w
}
