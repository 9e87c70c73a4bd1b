// Package e2e_test holds black-box HTTP tests of the whole suite: one in-process stack
// (embedded database, the five gRPC services, the gateway) shared by every test, called
// through the gateway with signed requests exactly as a client of the contract would.
package e2e_test

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/stack"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// env is the stack every test shares; TestMain sets it before any test runs.
var env struct {
	stack   *stack.Stack
	dataDir string
	logger  *slog.Logger
	keys    map[string]crypto.PrivateKey // company id → request-signing key
	// deskAhead is how far the service desk's clock runs ahead of the real one.
	deskAhead atomic.Int64
}

// deskNow is the service desk's clock: the real time plus env.deskAhead.
func deskNow() time.Time { return time.Now().Add(time.Duration(env.deskAhead.Load())) }

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "e2e-stack-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	env.dataDir = dir
	// Every component logs at debug level into logs, which is scanned for secrets at the end.
	var out io.Writer = &logs
	if os.Getenv("E2E_VERBOSE") != "" {
		out = io.MultiWriter(&logs, os.Stderr)
	}
	env.logger = slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if env.keys, err = companyKeys(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.stack, err = stack.Start(ctx, stack.Options{DataDir: dir, HTTPAddr: "127.0.0.1:0", Logger: env.logger, DeskClock: deskNow})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start stack:", err)
		return 1
	}
	code := m.Run()
	if err := journalReconciles(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: after every test:", err)
		code = 1
	}
	if err := controlsRanClean(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: the scheduled reconciliations:", err)
		code = 1
	}
	if err := env.stack.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop stack:", err)
		return 1
	}
	if leaks := secretsInLogs(); len(leaks) > 0 {
		fmt.Fprintln(os.Stderr, "e2e: secrets found in the logs of the run:", leaks)
		return 1
	}
	return code
}

func companyKeys() (map[string]crypto.PrivateKey, error) {
	keys := map[string]crypto.PrivateKey{}
	for _, company := range []string{demo.CompanyZTEST, demo.CompanyZACME, demo.CompanyZBYBIT, demo.CompanyZDERIBIT} {
		file := short(company) + "-company.pem"
		pemBytes, err := demo.Key(file)
		if err != nil {
			return nil, err
		}
		if keys[company], err = signing.ParsePrivateKey(pemBytes); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return keys, nil
}

// Demo users by role; the empty role is a company-level caller (no submitter-id).
const (
	maker   = "maker"
	checker = "checker"
	viewer  = "viewer"
	company = ""
)

// newClient returns a client of the shared gateway signing as company (demo.CompanyZTEST or
// demo.CompanyZACME) with the demo user of role as submitter.
func newClient(company, role string) *signing.Client {
	return clientAt(env.stack.GatewayURL, company, role)
}

func clientAt(baseURL, companyID, role string) *signing.Client {
	c := &signing.Client{BaseURL: baseURL, Company: companyID, Key: env.keys[companyID],
		HTTP: &http.Client{Timeout: 30 * time.Second}}
	if role != company {
		c.Submitter = demo.UserEmail(short(companyID), role)
	}
	return c
}

// short is the demo's short name of a company (its key files and e-mails), e.g. ztest.
func short(companyID string) string { return strings.ToLower(companyID) }

// response is what a client sees of an answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send sends req and reads the whole answer.
func send(t *testing.T, req *http.Request) response {
	t.Helper()
	remember(req.Header.Get(signing.HeaderSignature))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// do signs and sends one request with c.
func do(t *testing.T, c *signing.Client, method, path string, body []byte) response {
	t.Helper()
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	return send(t, req)
}

// wantOK fails unless r is a 200 and decodes its body into v.
func wantOK(t *testing.T, r response, v any) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode body %s: %v", r.body, err)
	}
}

// errorBody is the contract's error body.
type errorBody struct {
	Timestamp string        `json:"timestamp"`
	Title     string        `json:"title"`
	Status    int           `json:"status"`
	Details   []errorDetail `json:"details"`
}

type errorDetail struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

// errTimestamp is ISO 8601 UTC with milliseconds, as the error body carries it.
var errTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// wantError fails unless r is the contract's error body with HTTP status and one detail of
// code; it returns the detail's message.
func wantError(t *testing.T, r response, status int, code string) string {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	got := decodeError(t, r)
	if got.Code != code {
		t.Errorf("code %q, want %q (message %q)", got.Code, code, got.Message)
	}
	return got.Message
}

// decodeError fails unless r carries the contract's error body for its HTTP status: the
// exact fields, title the reason phrase, status the HTTP status, a current timestamp with
// milliseconds, and one detail with a code and a message. It returns the detail.
func decodeError(t *testing.T, r response) errorDetail {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var got errorBody
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("error body %s is not the contract's shape: %v", r.body, err)
	}
	checkTimestamp(t, got.Timestamp)
	if len(got.Details) != 1 {
		t.Fatalf("details %+v, want exactly one", got.Details)
	}
	want := errorBody{Timestamp: got.Timestamp, Title: http.StatusText(r.status), Status: r.status, Details: got.Details}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error body mismatch (-want +got):\n%s", diff)
	}
	if d := got.Details[0]; d.Message == "" || !erCode.MatchString(d.Code) {
		t.Errorf("detail %+v: want a message and an ER-nnn code", d)
	}
	return got.Details[0]
}

var erCode = regexp.MustCompile(`^ER-\d{3}$`)

func checkTimestamp(t *testing.T, ts string) {
	t.Helper()
	if !errTimestamp.MatchString(ts) {
		t.Errorf("timestamp %q is not ISO 8601 UTC with milliseconds", ts)
		return
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		t.Errorf("timestamp %q: %v", ts, err)
		return
	}
	if d := time.Since(at); d < -time.Minute || d > time.Minute {
		t.Errorf("timestamp %q is %v away from now", ts, d)
	}
}

// golden compares got (JSON) with testdata/name, indented; -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("golden %s: body is not JSON: %v", name, err)
	}
	pretty, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	pretty = append(pretty, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatalf("write golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(pretty)); diff != "" {
		t.Errorf("%s mismatch (-want +got); rerun with -update if the change is intended:\n%s", path, diff)
	}
}

// journalReconciles asks trading, as the settlement engine, to reconcile its journal once
// every test has ended: whatever moved money, through any endpoint, the books must agree.
func journalReconciles() error {
	key, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "settlement-engine.pem"))
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(env.stack.Services["trading"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, err = principal.NewSigner("settlement-engine", key, time.Minute).OutgoingContext(ctx,
		principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
	if err != nil {
		return err
	}
	resp, err := tradingv1.NewTradingLedgerServiceClient(conn).Reconcile(ctx, &tradingv1.ReconcileRequest{})
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if v := resp.GetViolations(); len(v) > 0 {
		return fmt.Errorf("trading's journal does not reconcile:\n%s", strings.Join(v, "\n"))
	}
	return nil
}

// controlsRanClean checks the scheduled reconciliations of the run (services/internal/control,
// every minute in the local suite): each ran while the tests moved money, and its last pass
// found no difference.
func controlsRanClean() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(env.stack.MongoURI))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(ctx) }()
	var errs []error
	for db, name := range map[string]string{"trading": "trading.journal", "custody": "custody.journal", "interchange": "interchange.transit"} {
		var d struct {
			LastRunAt   time.Time `bson:"lastRunAt"`
			Differences int       `bson:"differences"`
			Samples     []string  `bson:"samples"`
		}
		// A short run may end before the first pass (a tenth of the interval after the start).
		var err error
		for wait := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
			err = client.Database(db).Collection("controls").FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&d)
			if err == nil && !d.LastRunAt.IsZero() || time.Now().After(wait) {
				break
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if d.LastRunAt.IsZero() || d.Differences != 0 {
			errs = append(errs, fmt.Errorf("%s: last pass at %s found %d differences: %q", name, d.LastRunAt, d.Differences, d.Samples))
		}
	}
	return errors.Join(errs...)
}
