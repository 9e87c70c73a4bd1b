package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
)

// counts returns the number of documents of each collection of each service database.
func counts(t *testing.T) map[string]int64 {
	t.Helper()
	client, err := mongodb.Connect(context.Background(), env.stack.MongoURI)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	out := map[string]int64{}
	for _, db := range []string{"servicedesk", "trading", "interchange", "custody", "compliance"} {
		names, err := client.Database(db).ListCollectionNames(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			n, err := client.Database(db).Collection(name).CountDocuments(context.Background(), bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			out[db+"."+name] = n
		}
	}
	return out
}

// TestServerOwnedFieldsRefused: a client cannot set what the server owns (ids, statuses,
// owners, timestamps); each such body is refused naming the field, and nothing is written.
func TestServerOwnedFieldsRefused(t *testing.T) {
	// Not parallel: it compares document counts of the whole database before and after.
	before := counts(t)
	tests := []struct {
		name, path, body, field string
	}{
		{"request id on create", createPath, `{"serviceId":"0x0013-001","endToEndId":"0b9a4a52-9a3e-4f5c-9d0a-1f2e3d4c5b6a","payload":{"name":["x"],"currency":["BTC"],"currencyId":["btc-btc"]},"requestId":"SERV-REQ-MINE000001"}`, "requestId"},
		{"status on create", createPath, `{"serviceId":"0x0013-001","endToEndId":"0b9a4a52-9a3e-4f5c-9d0a-1f2e3d4c5b6a","payload":{"name":["x"]},"status":"COMPLETED"}`, "status"},
		{"company on create", createPath, `{"serviceId":"0x0013-001","endToEndId":"0b9a4a52-9a3e-4f5c-9d0a-1f2e3d4c5b6a","payload":{"name":["x"]},"companyId":"ZACME"}`, "companyId"},
		{"tracking id on settlement", "/v3/api/interchange/settlement/create", `{"header":{"venueId":"BYBIT","settlementRequestId":"own-1","instructionCount":0},"settlementTrackingId":"STL-MINE"}`, "settlementTrackingId"},
		{"status on withdrawal", "/v3/api/interchange/withdrawal/confirm", `{"transferId":"ZTEST-WD-DEMO0001","withdrawalConfirmation":"ACCEPT","status":"ACCEPTED"}`, "status"},
		{"approver on approve", approvePath, `{"requestId":"SERV-REQ-NOSUCH0000","request":{},"signature":"x","approvedBy":"api-checker@ztest.example"}`, "approvedBy"},
		{"owner in a filter body", "/v3/api/trading/wallets", `{"ids":[],"companyId":"ZACME"}`, "companyId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, tt.path, []byte(tt.body)), http.StatusBadRequest, "ER-108")
			if !strings.Contains(msg, tt.field) {
				t.Errorf("message %q does not name %s", msg, tt.field)
			}
		})
	}
	// Malformed, oversized and replayed mutations, each refused before anything is written.
	c := newClient(demo.CompanyZTEST, maker)
	valid := createBody(t, "0x0013-001", custodyWalletPayload("Never"))
	for _, tt := range []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"oversized body", append([]byte(`{"serviceId":"0x0013-001","payload":{"name":["`), append([]byte(strings.Repeat(" ", 1<<20)), []byte(`"]}}`)...)...), http.StatusRequestEntityTooLarge, "ER-413"},
		{"10,000-element array", []byte(`{"serviceId":"0x0013-001","endToEndId":"0b9a4a52-9a3e-4f5c-9d0a-1f2e3d4c5b6b","payload":{"name":["` + strings.Repeat(`x","`, 9999) + `x"]}}`), http.StatusBadRequest, "ER-103"},
		{"deeply nested", []byte(`{"serviceId":"0x0013-001","payload":{"name":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`), http.StatusBadRequest, "ER-103"},
		{"invalid UTF-8", []byte("{\"serviceId\":\"0x0013-001\",\"payload\":{\"name\":[\"\xff\"]}}"), http.StatusBadRequest, "ER-100"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, do(t, c, http.MethodPost, createPath, tt.body), tt.status, tt.code)
		})
	}
	t.Run("replayed create", func(t *testing.T) {
		req, err := c.NewRequest(http.MethodPost, createPath, valid)
		if err != nil {
			t.Fatal(err)
		}
		replay := req.Clone(req.Context())
		replay.Body = io.NopCloser(bytes.NewReader(valid))
		first := send(t, req)
		wantError(t, send(t, replay), http.StatusUnauthorized, "ER-401")
		if first.status == http.StatusOK {
			before["servicedesk.requests"]++ // the original create is the one write expected
		}
	})
	// Top-level parallel tests wait until the sequential ones are done, so nothing else writes
	// while this test runs: every count must be the same.
	if diff := cmp.Diff(before, counts(t)); diff != "" {
		t.Errorf("documents per collection changed by refused requests (-before +after):\n%s", diff)
	}
}

// TestOtherCompanysIDs: ZACME naming ZTEST's objects on every endpoint that takes an id gets
// "does not exist", and ZTEST's objects are unchanged. (Endpoint 11 is a venue operator's:
// a client is 403 there, another venue 404, in TestWithdrawalConfirmation.)
func TestOtherCompanysIDs(t *testing.T) {
	t.Parallel()
	ztestRequest := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload("Theirs"))).RequestID
	venue := newVenueFixture(t, "1", "1", "1", "1")
	settlementID := "theirs-" + uuid.NewString()[:8]
	venue.createSettlement(t, instructionBody(settlementID, venue.venue, []map[string]any{legOf(venue.btc, "BTC", "BTC", "0.1")}))
	tests := []struct {
		name, role, method, path, body string
	}{
		{"4 v2 wallet action", company, "POST", "/v2/api/core/wallets/ZTEST-NOBENF-DEMO000004/action",
			`{"request":{"author":{"id":"` + demo.UserID("zacme", checker) + `","domainId":"` + demo.DomainID(demo.CompanyZACME) + `"},"targetDomainId":"` + demo.DomainID(demo.CompanyZACME) + `","intentId":"5f0c8a4e-2b7d-4e19-9c3a-6d1e8f2b4a70","proposalSignature":"x","type":"Approve"},"signature":"MEUCIQ=="}`},
		{"13 trustline", maker, "POST", "/v3/api/custody/wallets/ZTEST-NOBENF-DEMO000003/activate/eurc-xlm", ``},
		{"15 restricted VASP", company, "POST", "/v3/api/compliance/vasps/VASP-002/activate/false", ``},
		{"pending", checker, "POST", pendingPath, `{"requestId":"` + ztestRequest + `"}`},
		{"cancel", maker, "POST", cancelPath, `{"requestId":"` + ztestRequest + `"}`},
		{"settlement status", company, "POST", "/v3/api/interchange/settlement/status", `{"settlementRequestId":"` + settlementID + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			wantError(t, do(t, newClient(demo.CompanyZACME, tt.role), tt.method, tt.path, body), http.StatusNotFound, "ER-102")
		})
	}
	if r := settlementStatus(t, venue.operatorClient(company), settlementID); r.status != http.StatusOK || !strings.Contains(string(r.body), "SETTLEMENT_RECEIVED") {
		t.Errorf("the venue's settlement after ZACME's attempts: %d %s", r.status, r.body)
	}
	if s := requestStatus(t, demo.CompanyZTEST, ztestRequest); s != "PENDING CONFIRMATION" {
		t.Errorf("ZTEST's request is %s after ZACME's attempts, want PENDING CONFIRMATION", s)
	}
	for name, body := range map[string]string{
		"/v3/api/trading/wallets":          `{"ids":["ZTEST-TW-DEMO000001"]}`,
		"/v3/api/trading/vaults/addresses": `{"walletIds":["ZTEST-TW-DEMO000001"]}`,
		requestsPath:                       `{"requestIds":["` + ztestRequest + `"]}`,
		"/v3/api/interchange/settlement/wallet/whitelisted/address": `{"addressFragment":""}`,
	} {
		r := do(t, newClient(demo.CompanyZACME, maker), http.MethodPost, name, []byte(body))
		if r.status != http.StatusOK || strings.Contains(string(r.body), "ZTEST") {
			t.Errorf("%s as ZACME: status %d, body %s; want 200 without ZTEST's objects", name, r.status, r.body)
		}
	}
}

// TestForgedPrincipalHeadersIgnored: a client cannot smuggle a principal past the gateway
// in gRPC metadata headers; the call runs as the signed caller.
func TestForgedPrincipalHeadersIgnored(t *testing.T) {
	t.Parallel()
	for _, header := range []string{"Grpc-Metadata-X-Principal", "X-Principal"} {
		req, err := newClient(demo.CompanyZTEST, viewer).NewRequest(http.MethodPost, "/v3/api/compliance/vasps/VASP-NOSUCH/activate/true", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(header, "eyJpc3MiOiJnYXRld2F5Iiwia2luZCI6InN5c3RlbSJ9.AAAA")
		wantError(t, send(t, req), http.StatusForbidden, "ER-403") // still the VIEWER
	}
}
