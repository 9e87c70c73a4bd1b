package e2e_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// signed returns a request signed by c, changed by tamper (if set) after signing.
func signed(t *testing.T, c *signing.Client, method, path string, body []byte, tamper func(*http.Request)) *http.Request {
	t.Helper()
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	if tamper != nil {
		tamper(req)
	}
	return req
}

// setBody replaces the body of a request already signed.
func setBody(body string) func(*http.Request) {
	return func(r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = nil
	}
}

func withHeader(name, value string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(name, value) }
}

func withoutHeader(name string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Del(name) }
}

func at(offset time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(offset) }
}

// withKey is newClient signing with another company's key.
func withKey(c *signing.Client, keyOf string) *signing.Client {
	c.Key = env.keys[keyOf]
	return c
}

func withNow(c *signing.Client, now func() time.Time) *signing.Client {
	c.Now = now
	return c
}

func withSubmitter(c *signing.Client, email string) *signing.Client {
	c.Submitter = email
	return c
}

func withCompany(c *signing.Client, id string) *signing.Client {
	c.Company = id
	return c
}

func TestAuthRefused(t *testing.T) {
	t.Parallel()
	ztest := func() *signing.Client { return newClient(demo.CompanyZTEST, maker) }
	garbage := base64.StdEncoding.EncodeToString([]byte("not a signature of this request"))
	tests := []struct {
		name      string
		client    *signing.Client
		tamper    func(*http.Request)
		wantInMsg string
	}{
		{"unsigned", ztest(), func(r *http.Request) {
			for _, h := range []string{signing.HeaderCompany, signing.HeaderSubmitter, signing.HeaderRequestID, signing.HeaderTimestamp, signing.HeaderSignature} {
				r.Header.Del(h)
			}
		}, ""},
		{"missing company-identifier", ztest(), withoutHeader(signing.HeaderCompany), signing.HeaderCompany},
		{"missing request-identifier", ztest(), withoutHeader(signing.HeaderRequestID), signing.HeaderRequestID},
		{"missing request-timestamp", ztest(), withoutHeader(signing.HeaderTimestamp), signing.HeaderTimestamp},
		{"missing signature", ztest(), withoutHeader(signing.HeaderSignature), signing.HeaderSignature},
		{"missing submitter-id on endpoint 6", ztest(), withoutHeader(signing.HeaderSubmitter), signing.HeaderSubmitter},
		{"empty signature", ztest(), withHeader(signing.HeaderSignature, ""), signing.HeaderSignature},
		{"signed with the other company's key (RSA company, Ed25519 key)", withKey(ztest(), demo.CompanyZACME), nil, ""},
		{"signed with the other company's key (Ed25519 company, RSA key)", withKey(newClient(demo.CompanyZACME, maker), demo.CompanyZTEST), nil, ""},
		{"signature not base64", ztest(), withHeader(signing.HeaderSignature, "!!not*base64!!"), ""},
		{"signature of something else", ztest(), withHeader(signing.HeaderSignature, garbage), ""},
		{"timestamp 6 minutes old", withNow(ztest(), at(-6*time.Minute)), nil, signing.HeaderTimestamp},
		{"timestamp 6 minutes ahead", withNow(ztest(), at(6*time.Minute)), nil, signing.HeaderTimestamp},
		{"timestamp in seconds", ztest(), withHeader(signing.HeaderTimestamp, strconv.FormatInt(time.Now().Unix(), 10)), signing.HeaderTimestamp},
		{"timestamp not a number", ztest(), withHeader(signing.HeaderTimestamp, "yesterday"), signing.HeaderTimestamp},
		{"request-identifier not a UUID", ztest(), withHeader(signing.HeaderRequestID, "request-1"), signing.HeaderRequestID},
		{"request-identifier changed after signing", ztest(), withHeader(signing.HeaderRequestID, "3f0e8f0c-5a8e-4a4e-9d7c-0a6a3b0b1c2d"), ""},
		{"body changed after signing", ztest(), setBody(`{"products":["CUSTODY"]}`), ""},
		{"query added after signing", ztest(), func(r *http.Request) { r.URL.RawQuery = "products=CUSTODY" }, ""},
		{"path changed after signing", ztest(), func(r *http.Request) { r.URL.Path = "/v3/api/servicedesk/requests" }, ""},
		{"company changed after signing", ztest(), withHeader(signing.HeaderCompany, demo.CompanyZACME), ""},
		{"unknown company", withCompany(ztest(), "ZNOPE"), nil, ""},
		{"submitter of the other company", withSubmitter(ztest(), demo.UserEmail("zacme", maker)), nil, signing.HeaderSubmitter},
		{"unknown submitter", withSubmitter(ztest(), "api-nobody@ztest.example"), nil, signing.HeaderSubmitter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := signed(t, tt.client, http.MethodPost, productsPath, []byte(`{}`), tt.tamper)
			msg := wantError(t, send(t, req), http.StatusUnauthorized, refusalCode(tt.name))
			if !strings.Contains(msg, tt.wantInMsg) {
				t.Errorf("message %q does not name %q", msg, tt.wantInMsg)
			}
		})
	}
}

func TestAuthAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		client *signing.Client
		tamper func(*http.Request)
	}{
		{"RSA company", newClient(demo.CompanyZTEST, maker), nil},
		{"Ed25519 company", newClient(demo.CompanyZACME, viewer), nil},
		{"X-Signature alias", newClient(demo.CompanyZTEST, maker), func(r *http.Request) {
			r.Header.Set(signing.HeaderXSignature, r.Header.Get(signing.HeaderSignature))
			r.Header.Del(signing.HeaderSignature)
		}},
		{"timestamp 4 minutes old", withNow(newClient(demo.CompanyZTEST, maker), at(-4*time.Minute)), nil},
		{"timestamp 4 minutes ahead", withNow(newClient(demo.CompanyZACME, maker), at(4*time.Minute)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got catalog
			wantOK(t, send(t, signed(t, tt.client, http.MethodPost, productsPath, []byte(`{}`), tt.tamper)), &got)
			if len(*got.Items) == 0 {
				t.Errorf("empty catalog")
			}
		})
	}
}

func TestAuthReplay(t *testing.T) {
	t.Parallel()
	first := signed(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{}`), nil)
	again := first.Clone(t.Context())
	again.Body = io.NopCloser(bytes.NewReader([]byte(`{}`)))
	var got catalog
	wantOK(t, send(t, first), &got)
	msg := wantError(t, send(t, again), http.StatusUnauthorized, "ER-401")
	if !strings.Contains(msg, signing.HeaderRequestID) {
		t.Errorf("message %q does not name %s", msg, signing.HeaderRequestID)
	}

	t.Run("the other company may use the same request-identifier", func(t *testing.T) {
		zacme := newClient(demo.CompanyZACME, maker)
		req := signed(t, zacme, http.MethodPost, productsPath, []byte(`{}`), nil)
		ts := req.Header.Get(signing.HeaderTimestamp)
		reqID := first.Header.Get(signing.HeaderRequestID)
		sig, err := signing.Sign(zacme.Key, signing.StringToSign(zacme.Company, reqID, ts, req.URL.String(), []byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(signing.HeaderRequestID, reqID)
		req.Header.Set(signing.HeaderSignature, sig)
		wantOK(t, send(t, req), &got)
	})
}

// TestAuthSubmitterPerEndpoint: endpoint 6 needs submitter-id, endpoint 15 is a company call.
func TestAuthSubmitterPerEndpoint(t *testing.T) {
	t.Parallel()
	wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, productsPath, []byte(`{}`)), http.StatusUnauthorized, "ER-401")
	r := do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, vaspPath("VASP-998", "false"), nil)
	wantError(t, r, http.StatusNotFound, "ER-102") // authenticated: the service looked the VASP up
}

// TestAuthRefusalChangesNothing sends refused deactivations of ZACME's VASP-003 and checks,
// with the answer of a following valid call, that none of them changed it.
func TestAuthRefusalChangesNothing(t *testing.T) {
	t.Parallel()
	zacme := func() *signing.Client { return newClient(demo.CompanyZACME, company) }
	before := setVASP(t, zacme(), "VASP-003", true)
	off := vaspPath("VASP-003", "false")
	refused := []struct {
		name   string
		client *signing.Client
		path   string // signed path
		tamper func(*http.Request)
	}{
		{"unsigned", zacme(), off, withoutHeader(signing.HeaderSignature)},
		{"wrong key", withKey(zacme(), demo.CompanyZTEST), off, nil},
		{"malformed signature", zacme(), off, withHeader(signing.HeaderSignature, "%%%")},
		{"timestamp 6 minutes old", withNow(zacme(), at(-6*time.Minute)), off, nil},
		{"timestamp 6 minutes ahead", withNow(zacme(), at(6*time.Minute)), off, nil},
		{"activation signed, deactivation sent", zacme(), vaspPath("VASP-003", "true"), func(r *http.Request) { r.URL.Path = off }},
		{"company header changed after signing", withKey(withCompany(zacme(), demo.CompanyZTEST), demo.CompanyZTEST), off, withHeader(signing.HeaderCompany, demo.CompanyZACME)},
		{"submitter of the other company", withSubmitter(zacme(), demo.UserEmail("ztest", maker)), off, nil},
		{"unknown submitter", withSubmitter(zacme(), "api-nobody@zacme.example"), off, nil},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, send(t, signed(t, tt.client, http.MethodPost, tt.path, nil, tt.tamper)), http.StatusUnauthorized, refusalCode(tt.name))
		})
	}
	t.Run("viewer", func(t *testing.T) {
		wantError(t, do(t, newClient(demo.CompanyZACME, viewer), http.MethodPost, off, nil), http.StatusForbidden, "ER-403")
	})
	after := setVASP(t, zacme(), "VASP-003", true)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a refused call changed VASP-003 (-before +after):\n%s", diff)
	}
}

// TestAuthDoesNotRevealCompanies: a refusal reads the same whether the company exists and the
// signature is wrong, or the company does not exist.
func TestAuthDoesNotRevealCompanies(t *testing.T) {
	t.Parallel()
	unknown := wantError(t, do(t, withCompany(newClient(demo.CompanyZTEST, company), "ZNOPE"), http.MethodPost, vaspPath("VASP-001", "true"), nil), http.StatusUnauthorized, "ER-401")
	wrongKey := wantError(t, do(t, withKey(newClient(demo.CompanyZTEST, company), demo.CompanyZACME), http.MethodPost, vaspPath("VASP-001", "true"), nil), http.StatusUnauthorized, "ER-401")
	if unknown != wrongKey {
		t.Errorf("an unknown company answers %q, a wrong key answers %q", unknown, wrongKey)
	}
}

// refusalCode is the ER code of a refusal: a timestamp outside the window (clock skew) is
// told apart from every other authentication failure.
func refusalCode(name string) string {
	if strings.HasPrefix(name, "timestamp") && strings.Contains(name, "minutes") || name == "timestamp in seconds" {
		return "ER-410"
	}
	return "ER-401"
}
