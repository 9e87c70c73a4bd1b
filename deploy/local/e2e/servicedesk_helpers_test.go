package e2e_test

import (
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// Paths of the service-desk endpoints and lifecycle extensions.
const (
	createPath   = "/v3/api/servicedesk/create"
	requestsPath = "/v3/api/servicedesk/requests"
	auditPath    = "/v3/api/servicedesk/audit-trail"
	pendingPath  = "/v3/api/servicedesk/pending"
	approvePath  = "/v3/api/servicedesk/approve"
	cancelPath   = "/v3/api/servicedesk/cancel"
)

// admin is the ZTEST demo user holding both MAKER and CHECKER.
const admin = "admin"

type createAnswer struct {
	RequestID    string `json:"requestId"`
	PluginDetail struct {
		EntityID []string         `json:"entityId"`
		Details  []map[string]any `json:"details"`
	} `json:"pluginDetail"`
}

type pendingAnswer struct {
	Request   map[string]any `json:"request"`
	Signature string         `json:"signature"`
}

type statusAnswer struct {
	RequestID string `json:"requestId"`
	Status    string `json:"status"`
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// createBody is a create request for serviceID with payload and a fresh endToEndId.
func createBody(t *testing.T, serviceID string, payload map[string]any) []byte {
	t.Helper()
	return mustJSON(t, map[string]any{"serviceId": serviceID, "payload": payload, "endToEndId": uuid.NewString()})
}

// custodyWalletPayload asks for one BTC custody wallet named name.
func custodyWalletPayload(name string) map[string]any {
	return map[string]any{"name": []string{name}, "currency": []string{"BTC"}, "currencyId": []string{"btc-btc"}}
}

func create(t *testing.T, companyID, role string, body []byte) createAnswer {
	t.Helper()
	var got createAnswer
	wantOK(t, do(t, newClient(companyID, role), http.MethodPost, createPath, body), &got)
	return got
}

func pending(t *testing.T, companyID, role, requestID string) pendingAnswer {
	t.Helper()
	var got pendingAnswer
	wantOK(t, do(t, newClient(companyID, role), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": requestID})), &got)
	return got
}

// userKey returns the demo approval key of a user.
func userKey(t *testing.T, companyID, role string) *ecdsa.PrivateKey {
	t.Helper()
	pemBytes, err := demo.Key(short(companyID) + "-" + role + ".pem")
	if err != nil {
		t.Fatal(err)
	}
	key, err := signing.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return key.(*ecdsa.PrivateKey)
}

// approveBody signs the pending object (with decision applied) with signer's key.
func approveBody(t *testing.T, requestID string, obj map[string]any, signer *ecdsa.PrivateKey) []byte {
	t.Helper()
	sig, err := signing.SignApproval(signer, mustJSON(t, obj))
	if err != nil {
		t.Fatal(err)
	}
	remember(sig)
	return mustJSON(t, map[string]any{"requestId": requestID, "request": obj, "signature": sig})
}

// act fetches the pending object as role, sets the decision, signs and sends it.
func act(t *testing.T, companyID, role, requestID, decision, reason string) response {
	t.Helper()
	obj := pending(t, companyID, role, requestID).Request
	if decision != "" {
		obj["type"] = decision
	}
	if reason != "" {
		obj["rejectReason"] = reason
	}
	return do(t, newClient(companyID, role), http.MethodPost, approvePath, approveBody(t, requestID, obj, userKey(t, companyID, role)))
}

func wantStatus(t *testing.T, r response, want string) {
	t.Helper()
	var got statusAnswer
	wantOK(t, r, &got)
	if got.Status != want {
		t.Fatalf("status %q, want %q", got.Status, want)
	}
}

type serviceRequest struct {
	RequestID  string         `json:"requestId"`
	ServiceID  string         `json:"serviceId"`
	Product    string         `json:"product"`
	ProductID  string         `json:"productId"`
	EndToEndID string         `json:"endToEndId"`
	Status     string         `json:"status"`
	CompanyID  string         `json:"companyId"`
	CreatedBy  string         `json:"createdBy"`
	UpdatedBy  string         `json:"updatedBy"`
	EntityID   string         `json:"entityId"`
	Payload    map[string]any `json:"payload"`
	CreatedAt  string         `json:"createdAt"`
	UpdatedAt  string         `json:"updatedAt"`
	ExpiresAt  string         `json:"expiresAt"`
}

type searchAnswer struct {
	Total int              `json:"total"`
	Items []serviceRequest `json:"items"`
}

func search(t *testing.T, companyID, role string, body any) searchAnswer {
	t.Helper()
	var got searchAnswer
	wantOK(t, do(t, newClient(companyID, role), http.MethodPost, requestsPath, mustJSON(t, body)), &got)
	return got
}

// requestStatus returns the request's status as its company's maker sees it.
func requestStatus(t *testing.T, companyID, requestID string) string {
	t.Helper()
	got := search(t, companyID, maker, map[string]any{"requestIds": []string{requestID}})
	if got.Total != 1 {
		t.Fatalf("search for %s: total %d, want 1", requestID, got.Total)
	}
	return got.Items[0].Status
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}
