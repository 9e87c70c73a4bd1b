// Package contract_test checks the published OpenAPI document against the running suite, as
// an integrator's contract tool would: one signed request per operation built only from the
// document (its path parameters' and properties' examples), each request and each answer
// validated against the document, and the bounds the document promises tried one past them.
//
// By default it starts its own suite on the embedded database (the operations change state).
// CONTRACT_BASE_URL points it at a running one instead (make run), signing with the demo keys.
package contract_test

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/stack"
	"github.com/zcustody/suite/gateway"
	"github.com/zcustody/suite/platform/signing"
)

var env struct {
	baseURL string
	doc     *openapi3.T
	router  routers.Router
	// key signs for ZTEST, a client; venueKey for ZBYBIT, which operates the venue BYBIT.
	key, venueKey crypto.PrivateKey
}

// venueOperations are the venue's side of interchange: only a company that operates a venue
// may call them (the authorization policy refuses anyone else before the body is read), so
// they are signed for ZBYBIT.
var venueOperations = map[string]bool{"createSettlementInstruction": true, "confirmOrRejectWithdrawal": true}

// checkerOperations are signed by a CHECKER: a maker is refused (403) before the body is
// read.
var checkerOperations = map[string]bool{"approveWebhookSubscriptionChange": true, "rejectWebhookSubscriptionChange": true}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	env.baseURL = strings.TrimRight(os.Getenv("CONTRACT_BASE_URL"), "/")
	if env.baseURL == "" {
		dir, err := os.MkdirTemp("", "contract-stack-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "contract:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
		st, err := stack.Start(ctx, stack.Options{DataDir: dir, HTTPAddr: "127.0.0.1:0", Logger: logger})
		if err != nil {
			fmt.Fprintln(os.Stderr, "contract: start stack:", err)
			return 1
		}
		defer func() { _ = st.Stop() }()
		env.baseURL = st.GatewayURL
	}
	for file, key := range map[string]*crypto.PrivateKey{"ztest-company.pem": &env.key, "zbybit-company.pem": &env.venueKey} {
		pemBytes, err := demo.Key(file)
		if err == nil {
			*key, err = signing.ParsePrivateKey(pemBytes)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "contract:", file, err)
			return 1
		}
	}
	return m.Run()
}

// document loads the served document; the router resolves operations against the suite under
// test, whatever servers the document lists.
func document(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	if env.doc != nil {
		return env.doc, env.router
	}
	resp, err := http.Get(env.baseURL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
	}
	if !bytes.Equal(raw, gateway.OpenAPI) {
		t.Log("the suite serves another document than this tree's gateway/openapi/openapi.json")
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: env.baseURL}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	env.doc, env.router = doc, router
	return doc, router
}

// operation is one documented operation.
type operation struct {
	method, path string
	op           *openapi3.Operation
}

func operations(doc *openapi3.T) []operation {
	var out []operation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, operation{method: method, path: path, op: op})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].op.OperationID < out[j].op.OperationID })
	return out
}

// exchange is one signed request and its answer, both checked against the document.
type exchange struct {
	status int
	body   []byte
}

// caller signs for ZTEST (ZBYBIT for the venueOperations): as its maker (checker for the
// checkerOperations) where the operation requires submitter-id, else with the company key
// alone.
func caller(path, method string) *signing.Client {
	c := &signing.Client{BaseURL: env.baseURL, Company: demo.CompanyZTEST, Key: env.key, HTTP: &http.Client{Timeout: 30 * time.Second}}
	doc := env.doc
	if item := doc.Paths.Find(path); item != nil {
		if op := item.GetOperation(method); op != nil {
			user := "ztest"
			if venueOperations[op.OperationID] {
				c.Company, c.Key, user = demo.CompanyZBYBIT, env.venueKey, "zbybit"
			}
			for _, p := range op.Parameters {
				if p.Ref == "#/components/parameters/SubmitterId" {
					c.Submitter = demo.UserEmail(user, "maker")
					if checkerOperations[op.OperationID] {
						c.Submitter = demo.UserEmail(user, "checker")
					}
				}
			}
		}
	}
	return c
}

// call signs method path body (caller), validates the request against the document
// (so a test that builds a wrong request fails here, not at the server), sends it, and
// validates the answer: a status the operation documents and a body of its schema.
func call(t *testing.T, o operation, path string, body []byte) exchange {
	t.Helper()
	_, router := document(t)
	method := strings.ToUpper(o.method)
	c := caller(o.path, method)
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is no documented operation: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		t.Fatalf("%s %s: the request breaks the document: %v", method, path, err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("%s %s: rate limited; the contract test sends one request at a time", method, path)
	}
	checkAnswer(t, req, route, params, resp.StatusCode, resp.Header, got)
	if id := req.Header.Get(signing.HeaderRequestID); resp.Header.Get(signing.HeaderRequestID) != id {
		t.Errorf("%s %s: request-identifier %q echoed as %q", method, path, id, resp.Header.Get(signing.HeaderRequestID))
	}
	return exchange{status: resp.StatusCode, body: got}
}

// checkAnswer validates an answer against the document: a status the operation documents and
// a body of its schema. The request's own body is not checked (the caller may mean it wrong).
func checkAnswer(t *testing.T, req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) {
	t.Helper()
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s: the answer %d breaks the document: %v\nbody: %.600s", req.Method, req.URL.Path, status, err, body)
	}
}

// examplePath fills the path's variables with their parameters' examples.
func examplePath(t *testing.T, o operation) string {
	t.Helper()
	path := o.path
	for _, p := range o.op.Parameters {
		if p.Value.In != openapi3.ParameterInPath {
			continue
		}
		v, ok := example(p.Value.Schema.Value)
		if !ok {
			t.Fatalf("%s: path parameter %s has no example", o.op.OperationID, p.Value.Name)
		}
		path = strings.ReplaceAll(path, "{"+p.Value.Name+"}", url.PathEscape(fmt.Sprint(v)))
	}
	return path
}

// exampleBody builds the operation's body from its schema's examples: every property that has
// one, and every required object from its own properties. Nil without a request body.
func exampleBody(t *testing.T, o operation) []byte {
	t.Helper()
	if o.op.RequestBody == nil {
		return nil
	}
	mt := o.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil {
		t.Fatalf("%s: the request body is not JSON", o.op.OperationID)
	}
	v, err := build(mt.Schema.Value, "body")
	if err != nil {
		t.Fatalf("%s: %v", o.op.OperationID, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func build(s *openapi3.Schema, at string) (any, error) {
	if v, ok := example(s); ok {
		return v, nil
	}
	if !s.Type.Is(openapi3.TypeObject) {
		return nil, fmt.Errorf("%s has no example", at)
	}
	out := map[string]any{}
	for name, p := range s.Properties {
		v, ok := example(p.Value)
		switch {
		case ok:
			out[name] = v
		case slices.Contains(s.Required, name):
			nested, err := build(p.Value, at+"."+name)
			if err != nil {
				return nil, err
			}
			out[name] = nested
		}
	}
	return out, nil
}

func example(s *openapi3.Schema) (any, bool) {
	switch {
	case s == nil:
		return nil, false
	case len(s.Examples) > 0:
		return s.Examples[0], true
	case s.Example != nil:
		return s.Example, true
	}
	return nil, false
}

// TestEveryOperationAsDocumented sends each operation once, built from the document alone,
// and checks each answer against the document. A 4xx the operation documents is a valid
// answer (the examples name demo entities another company owns, or none); a 5xx is not.
func TestEveryOperationAsDocumented(t *testing.T) {
	doc, _ := document(t)
	ops := operations(doc)
	if len(ops) < 23 {
		t.Fatalf("the document has %d operations, want the contract's 15 and the extensions", len(ops))
	}
	ok := 0
	for _, o := range ops {
		t.Run(o.op.OperationID, func(t *testing.T) {
			ex := call(t, o, examplePath(t, o), exampleBody(t, o))
			if ex.status >= 500 {
				t.Errorf("status %d: %s", ex.status, ex.body)
			}
			if ex.status < 300 {
				ok++
			}
			t.Logf("%s %s: %d", o.method, o.path, ex.status)
		})
	}
	// Every search and list answers 200 from its examples.
	if ok < 12 {
		t.Errorf("%d operations answered 2xx from the document's examples, want at least 12", ok)
	}
}

// TestBoundsAsDocumented tries, on every operation, each string the document bounds with
// maxLength one character past it, and each list bounded by maxItems one item past it: the
// suite must answer the documented 400 with ER-103 naming the field, as the document promises.
func TestBoundsAsDocumented(t *testing.T) {
	doc, _ := document(t)
	tried := 0
	for _, o := range operations(doc) {
		if o.op.RequestBody == nil {
			continue
		}
		schema := o.op.RequestBody.Value.Content.Get("application/json").Schema.Value
		names := make([]string, 0, len(schema.Properties))
		for name := range schema.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := schema.Properties[name].Value
			var bad any
			switch {
			case p.Type.Is(openapi3.TypeString) && p.MaxLength != nil && *p.MaxLength < 4096:
				bad = strings.Repeat("x", int(*p.MaxLength)+1)
			case p.Type.Is(openapi3.TypeArray) && p.MaxItems != nil && *p.MaxItems < 1024:
				items := make([]any, int(*p.MaxItems)+1)
				for i := range items {
					items[i] = fmt.Sprintf("v%d", i)
					if p.Items.Value.Type.Is(openapi3.TypeObject) {
						items[i] = map[string]any{}
					}
				}
				bad = items
			default:
				continue
			}
			t.Run(o.op.OperationID+"/"+name, func(t *testing.T) {
				var body map[string]any
				if err := json.Unmarshal(exampleBody(t, o), &body); err != nil {
					t.Fatal(err)
				}
				body[name] = bad
				raw, _ := json.Marshal(body)
				ex := sendRaw(t, o, examplePath(t, o), raw)
				if ex.status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400; body %.300s", ex.status, ex.body)
				}
				var e struct {
					Details []struct{ Message, Code string } `json:"details"`
				}
				if err := json.Unmarshal(ex.body, &e); err != nil || len(e.Details) != 1 || e.Details[0].Code != "ER-103" || !strings.HasPrefix(e.Details[0].Message, name) {
					t.Errorf("answer %s, want ER-103 naming %s", ex.body, name)
				}
			})
			tried++
		}
	}
	if tried < 20 {
		t.Errorf("tried %d bounds, want every bounded field of every operation", tried)
	}
}

// sendRaw sends a request the document forbids (the test means it) and validates the answer.
func sendRaw(t *testing.T, o operation, path string, body []byte) exchange {
	t.Helper()
	_, router := document(t)
	c := caller(o.path, strings.ToUpper(o.method))
	req, err := c.NewRequest(strings.ToUpper(o.method), path, body)
	if err != nil {
		t.Fatal(err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	checkAnswer(t, req, route, params, resp.StatusCode, resp.Header, got)
	return exchange{status: resp.StatusCode, body: got}
}

// TestUnsignedIsDocumented401: a request without the signing headers gets the documented 401.
func TestUnsignedIsDocumented401(t *testing.T) {
	_, router := document(t)
	req, err := http.NewRequest(http.MethodPost, env.baseURL+"/v3/api/trading/wallets", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	checkAnswer(t, req, route, params, resp.StatusCode, resp.Header, got)
}
