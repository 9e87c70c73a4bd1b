package e2e_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/services/interchange/whitelist/address"
)

// Paths of endpoints 8 and 9.
const (
	settlementAddressesPath = "/v3/api/interchange/settlement/wallet/addresses"
	whitelistedPath         = "/v3/api/interchange/settlement/wallet/whitelisted/address"
)

// Valid addresses that no test whitelists to completion: for refusals and pending creates.
const (
	wlSpareBTC = "bc1qkh7auhtp7707ecypag4rrgvkhv6hfut6stv4jx"
	wlSpareXLM = "GBJEED3HPD6DPBTUBNN67MQCQV2GXWPT5FUWR6H4F5MIWAMVFRDHR3AD"
	wlSpareXRP = "rNGdcFVy2GSfuQgwsgsWF7vfXbnud6Xi7K"
)

// wlFresh returns a fresh address of the blockchain (BTC, ETH, XLM or XRP) with a valid
// checksum, so that a test whitelists addresses no other test or earlier run holds.
func wlFresh(t *testing.T, chain string) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a, err := address.NewSettlement(address.Party{ID: "E2E"}, "E2E", strings.ToLower(chain)+"-"+strings.ToLower(chain), key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a.Address
}

// wlETH returns a fresh ETH address in lower case (no checksum).
func wlETH(t *testing.T) string {
	t.Helper()
	return strings.ToLower(wlFresh(t, "ETH"))
}

// wlPayload is a 0x0007-007 payload in the catalog template's form.
func wlPayload(addr, chain, vasp string, purposes ...string) map[string]any {
	if len(purposes) == 0 {
		purposes = []string{"INCOMING, OUTGOING"}
	}
	return map[string]any{"address": []string{addr}, "blockchain": []string{chain}, "vaspId": []string{vasp},
		"addressPurpose": purposes, "hostedAddress": []bool{true}, "notes": []string{"e2e"}}
}

// wlComplete takes a request of companyID from PENDING CONFIRMATION to COMPLETED: its maker
// confirms, its checker approves.
func wlComplete(t *testing.T, companyID, requestID string) {
	t.Helper()
	wantStatus(t, act(t, companyID, maker, requestID, "", ""), "PENDING AUTHORISATION")
	wantStatus(t, act(t, companyID, checker, requestID, "Approve", ""), "COMPLETED")
}

// wlWhitelist whitelists an address for companyID through the service desk and returns the
// reserved id.
func wlWhitelist(t *testing.T, companyID string, payload map[string]any) string {
	t.Helper()
	got := create(t, companyID, maker, createBody(t, "0x0007-007", payload))
	wlComplete(t, companyID, got.RequestID)
	return got.PluginDetail.EntityID[0]
}

// wlDeactivate deactivates a whitelisted address of companyID through the service desk.
func wlDeactivate(t *testing.T, companyID, addr, chain string) {
	t.Helper()
	got := create(t, companyID, maker, createBody(t, "0x0007-008", map[string]any{"address": []string{addr}, "blockchain": []string{chain}}))
	wlComplete(t, companyID, got.RequestID)
}

// whitelistedItem is an item of endpoint 9, exactly the contract's fields.
type whitelistedItem struct {
	Address        string   `json:"address"`
	AddressPurpose []string `json:"addressPurpose"`
	Status         string   `json:"status"`
	CreatedAt      string   `json:"createdAt"`
	Blockchain     string   `json:"blockchain"`
	BlockchainID   string   `json:"blockchainId"`
}

type whitelistedPage struct {
	Items []whitelistedItem `json:"items"`
	Total int               `json:"total"`
}

var millis = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// listWhitelisted calls endpoint 9 as companyID (a company-level call) and decodes the page
// strictly: no field outside the contract's.
func listWhitelisted(t *testing.T, companyID string, body any) whitelistedPage {
	t.Helper()
	r := do(t, newClient(companyID, company), http.MethodPost, whitelistedPath, mustJSON(t, body))
	if r.status != http.StatusOK {
		t.Fatalf("endpoint 9 %s: status %d, body %s", mustJSON(t, body), r.status, r.body)
	}
	var got whitelistedPage
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("endpoint 9 answer %s: %v", r.body, err)
	}
	for _, it := range got.Items {
		if !millis.MatchString(it.CreatedAt) {
			t.Errorf("createdAt %q of %s is not ISO 8601 UTC with milliseconds", it.CreatedAt, it.Address)
		}
	}
	return got
}

func wlAddresses(items []whitelistedItem) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.Address)
	}
	return out
}
