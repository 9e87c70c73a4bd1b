package auth_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
)

const (
	productsPath = "/v3/api/servicedesk/products"              // endpoint 6: sends submitter-id
	vaspPath     = "/v3/api/compliance/vasps/V1/activate/true" // endpoint 15: company-level

	// refusedSignature answers an unknown or inactive company and a bad signature alike.
	refusedSignature = "unknown company or signature does not verify"
)

// serve sends r through the fixture and returns the status and, for refusals, the detail.
func serve(t *testing.T, f *fixture, r *http.Request) (int, httperr.Detail) {
	t.Helper()
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, r)
	if rec.Code == http.StatusNoContent {
		return rec.Code, httperr.Detail{}
	}
	var b httperr.Body
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || len(b.Details) != 1 {
		t.Fatalf("refusal body %q is not the error body with one detail (%v)", rec.Body, err)
	}
	return rec.Code, b.Details[0]
}

func TestMiddlewareRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	products := call{company: "ZED", submitter: "maker@zed.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)}
	tests := []struct {
		name   string
		give   call
		mutate func(r *http.Request)
		want   string // in the detail message
	}{
		{name: "missing company-identifier", give: products, mutate: del(signing.HeaderCompany), want: "missing header: company-identifier"},
		{name: "missing request-identifier", give: products, mutate: del(signing.HeaderRequestID), want: "missing header: request-identifier"},
		{name: "missing request-timestamp", give: products, mutate: del(signing.HeaderTimestamp), want: "missing header: request-timestamp"},
		{name: "missing signature", give: products, mutate: del(signing.HeaderSignature), want: "missing header: signature"},
		{name: "request-identifier not a UUID", give: products, mutate: set(signing.HeaderRequestID, "req-1"), want: "request-identifier must be a UUID"},
		{name: "request-identifier without dashes", give: products, mutate: set(signing.HeaderRequestID, strings.ReplaceAll(uuid.NewString(), "-", "")), want: "request-identifier must be a UUID"},
		{name: "request-identifier as URN", give: products, mutate: set(signing.HeaderRequestID, "urn:uuid:"+uuid.NewString()), want: "request-identifier must be a UUID"},
		{name: "timestamp not a number", give: products, mutate: set(signing.HeaderTimestamp, "2023-11-14T22:13:20Z"), want: "request-timestamp must be epoch milliseconds"},
		{name: "timestamp in seconds-with-fraction", give: products, mutate: set(signing.HeaderTimestamp, "1700000000.000"), want: "request-timestamp must be epoch milliseconds"},
		{name: "timestamp too old", give: at(products, now.Add(-window-time.Millisecond)), want: "outside the allowed window"},
		{name: "timestamp too far ahead", give: at(products, now.Add(window+time.Millisecond)), want: "outside the allowed window"},
		{name: "timestamp in seconds", give: products, mutate: set(signing.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10)), want: "outside the allowed window"},
		{name: "signed with another key", give: call{company: "ZED", submitter: "maker@zed.example", key: f.strangerKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)},
			want: refusedSignature},
		{name: "RSA company, Ed25519 signature", give: call{company: "ZRSA", key: f.edKey, method: http.MethodPost, path: vaspPath}, want: refusedSignature},
		{name: "body changed after signing", give: products, mutate: body(`{"productName":["CUSTODY"]}`), want: refusedSignature},
		{name: "path changed after signing", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath},
			mutate: retarget("/v3/api/compliance/vasps/V2/activate/true"), want: refusedSignature},
		{name: "company changed after signing", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath},
			mutate: set(signing.HeaderCompany, "ZBAD"), want: refusedSignature},
		{name: "timestamp changed after signing", give: products, mutate: set(signing.HeaderTimestamp, strconv.FormatInt(now.UnixMilli()+1, 10)), want: refusedSignature},
		{name: "signature not base64", give: products, mutate: set(signing.HeaderSignature, "%%%"), want: refusedSignature},
		{name: "inactive company", give: call{company: "ZOFF", key: f.edKey, method: http.MethodPost, path: vaspPath}, want: refusedSignature},
		{name: "unknown company", give: call{company: "ZNONE", key: f.edKey, method: http.MethodPost, path: vaspPath}, want: refusedSignature},
		{name: "submitter missing where the contract sends it", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)},
			want: "missing header: submitter-id"},
		{name: "submitter missing on the trustline endpoint", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: "/v3/api/custody/wallets/W1/activate/xlm-usdc"},
			want: "missing header: submitter-id"},
		{name: "submitter missing on a lifecycle extension", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: "/v3/api/servicedesk/approve", body: []byte(`{}`)},
			want: "missing header: submitter-id"},
		{name: "submitter of another company", give: call{company: "ZED", submitter: "maker@zrsa.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)},
			want: "submitter-id is not an active user of the signing company"},
		{name: "submitter inactive", give: call{company: "ZED", submitter: "gone@zed.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)},
			want: "submitter-id is not an active user of the signing company"},
		{name: "submitter unknown", give: call{company: "ZED", submitter: "nobody@zed.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)},
			want: "submitter-id is not an active user of the signing company"},
		{name: "submitter unknown on a company-level endpoint", give: call{company: "ZED", submitter: "nobody@zed.example", key: f.edKey, method: http.MethodPost, path: vaspPath},
			want: "submitter-id is not an active user of the signing company"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := request(t, tt.give)
			if tt.mutate != nil {
				tt.mutate(r)
			}
			code, d := serve(t, f, r)
			wantCode := "ER-401"
			if strings.Contains(tt.want, "outside the allowed window") {
				wantCode = "ER-410" // clock skew is told apart from a bad signature
			}
			if code != http.StatusUnauthorized || d.Code != wantCode {
				t.Fatalf("status = %d %s, want 401 %s", code, d.Code, wantCode)
			}
			if !strings.Contains(d.Message, tt.want) {
				t.Errorf("message = %q, want it to say %q", d.Message, tt.want)
			}
			if _, ok := f.token(r.Header.Get(signing.HeaderRequestID)); ok {
				t.Error("next saw a refused request")
			}
		})
	}
}

func TestMiddlewareAccepts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name   string
		give   call
		mutate func(r *http.Request)
	}{
		{name: "RSA company key", give: call{company: "ZRSA", key: f.rsaKey, method: http.MethodPost, path: vaspPath}},
		{name: "Ed25519 company key", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath}},
		{name: "rotation: old key", give: call{company: "ZROT", key: f.oldKey, method: http.MethodPost, path: vaspPath}},
		{name: "rotation: new key", give: call{company: "ZROT", key: f.newKey, method: http.MethodPost, path: vaspPath}},
		{name: "an unparsable registered key is skipped", give: call{company: "ZBAD", key: f.edKey, method: http.MethodPost, path: vaspPath}},
		{name: "X-Signature alias", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath}, mutate: func(r *http.Request) {
			r.Header.Set(signing.HeaderXSignature, r.Header.Get(signing.HeaderSignature))
			r.Header.Del(signing.HeaderSignature)
		}},
		{name: "GET without body", give: call{company: "ZED", key: f.edKey, method: http.MethodGet, path: "/v2/api/core/wallets"}},
		{name: "query string signed", give: call{company: "ZED", key: f.edKey, method: http.MethodGet, path: "/v2/api/core/wallets?limit=5&offset=0"}},
		{name: "submitter on a submitter endpoint", give: call{company: "ZED", submitter: "maker@zed.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{"productName":["CUSTODY"]}`)}},
		{name: "submitter not required on the VASP endpoint", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath}},
		{name: "unknown path leaves routing to the mux", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: "/v3/api/nope"}},
		{name: "oldest timestamp of the window", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath, at: now.Add(-window)}},
		{name: "newest timestamp of the window", give: call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath, at: now.Add(window)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := request(t, tt.give)
			if tt.mutate != nil {
				tt.mutate(r)
			}
			if code, d := serve(t, f, r); code != http.StatusNoContent {
				t.Fatalf("status = %d %+v, want the request through", code, d)
			}
			token, _ := f.token(r.Header.Get(signing.HeaderRequestID))
			if _, err := f.verifier.Verify(token); err != nil {
				t.Errorf("next got token %q the services cannot verify: %v", token, err)
			}
		})
	}
}

func TestMiddlewareSignedURLIncludesScheme(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath}
	r := request(t, c)
	// Signed for http://gw.example, received over TLS: the signed URL differs.
	tlsReq := httptest.NewRequest(http.MethodPost, "https://gw.example"+vaspPath, nil)
	tlsReq.Header = r.Header.Clone()
	if code, d := serve(t, f, tlsReq); code != http.StatusUnauthorized || d.Message != refusedSignature {
		t.Errorf("http-signed request over TLS = %d %q, want 401 %s", code, d.Message, refusedSignature)
	}
}

func TestMiddlewarePrincipal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name string
		give call
		want principal.Principal
	}{
		{name: "user", give: call{company: "ZED", submitter: "maker@zed.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)},
			want: principal.Principal{Issuer: "gateway", Kind: principal.KindUser, CompanyID: "ZED", CompanyName: "Ed Ltd", UserEmail: "maker@zed.example",
				Roles: []string{principal.RoleMaker, principal.RoleViewer}, Entitlements: []string{"0x0013-001", "0x0007-004"}}},
		{name: "company", give: call{company: "ZRSA", key: f.rsaKey, method: http.MethodPost, path: vaspPath},
			want: principal.Principal{Issuer: "gateway", Kind: principal.KindCompany, CompanyID: "ZRSA", CompanyName: "RSA Ltd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := request(t, tt.give)
			if code, d := serve(t, f, r); code != http.StatusNoContent {
				t.Fatalf("status = %d %+v, want the request through", code, d)
			}
			token, _ := f.token(r.Header.Get(signing.HeaderRequestID))
			got, err := f.verifier.Verify(token)
			if err != nil {
				t.Fatalf("Verify(token): %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(principal.Principal{}, "IssuedAt", "ExpiresAt")); diff != "" {
				t.Errorf("principal mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMiddlewareReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := request(t, call{company: "ZED", submitter: "maker@zed.example", key: f.edKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)})
	id := first.Header.Get(signing.HeaderRequestID)
	again := httptest.NewRequest(http.MethodPost, base+productsPath, strings.NewReader(`{}`))
	again.Header = first.Header.Clone()

	if code, d := serve(t, f, first); code != http.StatusNoContent {
		t.Fatalf("first use = %d %+v, want the request through", code, d)
	}
	code, d := serve(t, f, again)
	if code != http.StatusUnauthorized || !strings.Contains(d.Message, "request-identifier was already used") {
		t.Errorf("second use = %d %q, want 401 request-identifier was already used", code, d.Message)
	}
	// The identifier must stay claimed as long as its timestamp is accepted.
	expires, _ := f.replay.expiry("ZED", id)
	if accepted := now.Add(window); expires.Before(accepted) {
		t.Errorf("identifier claimed until %s, but its timestamp is accepted until %s", expires, accepted)
	}
}

func TestMiddlewareReplayIsPerCompany(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := request(t, call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath})
	b := request(t, call{company: "ZRSA", key: f.rsaKey, method: http.MethodPost, path: vaspPath})
	// Same identifier from two companies: both are first uses. Re-sign b with a's identifier.
	id := a.Header.Get(signing.HeaderRequestID)
	ts := b.Header.Get(signing.HeaderTimestamp)
	sig, err := signing.Sign(f.rsaKey, signing.StringToSign("ZRSA", id, ts, base+vaspPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	b.Header.Set(signing.HeaderRequestID, id)
	b.Header.Set(signing.HeaderSignature, sig)
	for _, r := range []*http.Request{a, b} {
		if code, d := serve(t, f, r); code != http.StatusNoContent {
			t.Errorf("%s = %d %+v, want the request through", r.Header.Get(signing.HeaderCompany), code, d)
		}
	}
}

func TestMiddlewareRefusalDoesNotBurnIdentifier(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	good := request(t, call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath})
	bad := httptest.NewRequest(http.MethodPost, base+vaspPath, nil)
	bad.Header = good.Header.Clone()
	bad.Header.Set(signing.HeaderSignature, good.Header.Get(signing.HeaderSignature)[4:])
	if code, _ := serve(t, f, bad); code != http.StatusUnauthorized {
		t.Fatalf("bad signature = %d, want 401", code)
	}
	if code, d := serve(t, f, good); code != http.StatusNoContent {
		t.Errorf("correctly signed retry with the same identifier = %d %+v, want the request through", code, d)
	}
}

func TestMiddlewareIdentityUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       error
		wantStatus int
		wantCode   string
	}{
		{name: "service down", give: status.Error(codes.Unavailable, "dial tcp 10.0.0.1:9000: connection refused"), wantStatus: http.StatusServiceUnavailable, wantCode: "ER-503"},
		{name: "service refuses the gateway", give: status.Error(codes.PermissionDenied, "identity lookups are reserved to the gateway"), wantStatus: http.StatusServiceUnavailable, wantCode: "ER-503"},
		{name: "timeout", give: status.Error(codes.DeadlineExceeded, "deadline exceeded"), wantStatus: http.StatusGatewayTimeout, wantCode: "ER-504"},
		// A plain error (the replay store's database unreachable, say) is an outage, not a bug
		// in the caller's request: 503, retry later.
		{name: "not a status", give: errors.New("dial tcp 10.0.0.1:9000: connection refused"), wantStatus: http.StatusServiceUnavailable, wantCode: "ER-503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.identity.fail(tt.give)
			code, d := serve(t, f, request(t, call{company: "ZED", key: f.edKey, method: http.MethodPost, path: vaspPath}))
			if code != tt.wantStatus || d.Code != tt.wantCode {
				t.Errorf("status = %d %s, want %d %s (not a 401: the caller did nothing wrong)", code, d.Code, tt.wantStatus, tt.wantCode)
			}
			if strings.Contains(d.Message, "10.0.0.1") {
				t.Errorf("message %q leaks the cause", d.Message)
			}
		})
	}
}

func TestMiddlewareDoesNotRevealCompanies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	refusal := func(company string) httperr.Detail {
		_, d := serve(t, f, request(t, call{company: company, key: f.strangerKey, method: http.MethodPost, path: vaspPath}))
		return d
	}
	known := refusal("ZED")
	for _, company := range []string{"ZNONE", "ZOFF"} {
		if diff := cmp.Diff(known, refusal(company)); diff != "" {
			t.Errorf("%s and a known company with a wrong key answer differently (-known +%s):\n%s", company, company, diff)
		}
	}
}

func TestMiddlewareSubmitterOnEmptySegment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, d := serve(t, f, request(t, call{company: "ZED", key: f.edKey, method: http.MethodPost, path: "/v3/api/custody/wallets//activate/xlm-usdc"}))
	if code != http.StatusUnauthorized || !strings.Contains(d.Message, "submitter-id") {
		t.Errorf("status = %d %q, want 401 missing header: submitter-id", code, d.Message)
	}
}

func del(header string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Del(header) }
}

func set(header, value string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(header, value) }
}

func at(c call, t time.Time) call {
	c.at = t
	return c
}

func body(b string) func(*http.Request) {
	return func(r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader(b))
		r.ContentLength = int64(len(b))
	}
}

func retarget(path string) func(*http.Request) {
	return func(r *http.Request) {
		r.URL.Path = path
		r.RequestURI = path
	}
}

// TestMiddlewareLooksUpUsersOnlyOnceSigned: the company's keys are looked up, the signature
// verified, and only then the submitter: a request whose signature fails never makes the
// service desk look up (or the gateway cache) the user it names.
func TestMiddlewareLooksUpUsersOnlyOnceSigned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	forged := call{company: "ZED", submitter: "maker@zed.example", key: f.strangerKey, method: http.MethodPost, path: productsPath, body: []byte(`{}`)}
	if code, _ := serve(t, f, request(t, forged)); code != http.StatusUnauthorized {
		t.Fatalf("forged request: %d, want 401", code)
	}
	if got := f.identity.Emails(); len(got) != 0 {
		t.Errorf("a request with a bad signature made the gateway look up users %v", got)
	}
	signed := forged
	signed.key = f.edKey
	if code, _ := serve(t, f, request(t, signed)); code != http.StatusNoContent {
		t.Fatalf("signed request: %d, want it through", code)
	}
	if got := f.identity.Emails(); len(got) != 1 || got[0] != "maker@zed.example" {
		t.Errorf("users looked up once signed: %v, want the submitter once", got)
	}
}
