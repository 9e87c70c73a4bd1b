package e2e_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/platform/signing"
)

// settlementPage is endpoint 8's answer, items kept as the raw JSON objects a client gets.
type settlementPage struct {
	Items []map[string]any `json:"items"`
	Total int              `json:"total"`
}

func listSettlementAddresses(t *testing.T, companyID string, body any) settlementPage {
	t.Helper()
	var got settlementPage
	wantOK(t, do(t, newClient(companyID, maker), http.MethodPost, settlementAddressesPath, mustJSON(t, body)), &got)
	return got
}

func addressesOf(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it["address"].(string))
	}
	return out
}

// verifySettlementItem checks a record the way a client does, from the JSON object alone:
// drop integrityDetails, canonicalise the rest (keys sorted, no whitespace, empty fields
// left out), verify the base64 Ed25519 signature with the base64 key the record names.
func verifySettlementItem(t *testing.T, item map[string]any) bool {
	t.Helper()
	integrity, _ := item["integrityDetails"].(map[string]any)
	pub, err := base64.StdEncoding.DecodeString(integrity["operatorPublicKey"].(string))
	if err != nil || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("operatorPublicKey %v is not a base64 Ed25519 key", integrity["operatorPublicKey"])
	}
	sig, err := base64.StdEncoding.DecodeString(integrity["signature"].(string))
	if err != nil {
		t.Fatalf("signature %v is not base64", integrity["signature"])
	}
	record := map[string]any{}
	for k, v := range item {
		if k != "integrityDetails" {
			record[k] = v
		}
	}
	msg, err := canonical.Marshal(record)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.Verify(pub, msg, sig)
}

// operatorPublicKey is the base64 of the demo operator's raw public key.
func operatorPublicKey(t *testing.T) string {
	t.Helper()
	pemBytes, err := demo.Key("operator.pub.pem")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.ParsePublicKey(string(pemBytes))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pub.(ed25519.PublicKey))
}

var ledgerFormats = map[string]*regexp.Regexp{
	"BTC": regexp.MustCompile(`^bc1q[02-9ac-hj-np-z]{38}$`),
	"ETH": regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`),
	"XLM": regexp.MustCompile(`^G[A-Z2-7]{55}$`),
	"XRP": regexp.MustCompile(`^r[1-9A-HJ-NP-Za-km-z]{24,34}$`),
}

// TestSettlementWalletAddresses: ZTEST's demo settlement addresses, one per venue and
// currency id, each in its ledger's format and signed by the operator.
func TestSettlementWalletAddresses(t *testing.T) {
	t.Parallel()
	got := listSettlementAddresses(t, demo.CompanyZTEST, map[string]any{"paginationLimit": 1024})
	want := map[string]bool{} // walletId/currencyId of the demo
	for _, w := range demo.SettlementWallets() {
		for _, c := range w.CurrencyIDs {
			if w.CompanyID == demo.CompanyZTEST {
				want[demo.CompanyZTEST+"-ISW-"+w.VenueID+"/"+c] = true
			}
		}
	}
	operator := operatorPublicKey(t)
	for _, item := range got.Items {
		delete(want, item["walletId"].(string)+"/"+item["currencyId"].(string))
		if !verifySettlementItem(t, item) {
			t.Errorf("signature of %v does not verify", item["address"])
		}
		if key := item["integrityDetails"].(map[string]any)["operatorPublicKey"]; key != operator {
			t.Errorf("operatorPublicKey %v is not the operator's %s", key, operator)
		}
		if f := ledgerFormats[item["ledger"].(string)]; f == nil || !f.MatchString(item["address"].(string)) {
			t.Errorf("address %v is not in the format of ledger %v", item["address"], item["ledger"])
		}
		if owner := item["walletOwner"].(map[string]any); owner["id"] != demo.CompanyZTEST || owner["name"] != "Zodia Test Ltd" {
			t.Errorf("walletOwner %v, want ZTEST", owner)
		}
		forged := map[string]any{}
		for k, v := range item {
			forged[k] = v
		}
		forged["address"] = got.Items[0]["address"]
		forged["walletId"] = "ZACME-ISW-BYBIT"
		if verifySettlementItem(t, forged) {
			t.Errorf("a record changed after signing still verifies")
		}
	}
	if len(want) != 0 || got.Total != len(got.Items) {
		t.Errorf("missing demo addresses %v; total %d for %d items", want, got.Total, len(got.Items))
	}
	theirs := listSettlementAddresses(t, demo.CompanyZACME, map[string]any{"addresses": addressesOf(got.Items)})
	if theirs.Total != 0 {
		t.Errorf("ZACME sees ZTEST's settlement addresses: %+v", theirs)
	}
}

// TestSettlementWalletAddressesFilters pages and filters ZTEST's demo addresses.
func TestSettlementWalletAddressesFilters(t *testing.T) {
	t.Parallel()
	full := listSettlementAddresses(t, demo.CompanyZTEST, map[string]any{"paginationLimit": 1024, "sort": map[string]string{"by": "id"}})
	mine := addressesOf(full.Items)
	if !slices.IsSorted(mine) || len(mine) < 7 {
		t.Fatalf("sorted by id: %v, want at least the 7 demo addresses in order", mine)
	}
	ofCurrency := func(codes ...string) []string {
		var out []string
		for _, it := range full.Items {
			code := strings.ToUpper(strings.Split(it["currencyId"].(string), "-")[0])
			if slices.Contains(codes, code) {
				out = append(out, it["address"].(string))
			}
		}
		return out
	}
	reversed := slices.Clone(mine)
	slices.Reverse(reversed)
	zacme := addressesOf(listSettlementAddresses(t, demo.CompanyZACME, map[string]any{}).Items)
	if len(zacme) == 0 {
		t.Fatal("ZACME has no settlement addresses: the demo data is missing")
	}
	tests := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"default sort is id", map[string]any{"addresses": mine, "paginationLimit": 1024}, mine},
		{"sort id DESC", map[string]any{"addresses": mine, "paginationLimit": 1024, "sort": map[string]string{"by": "id", "order": "DESC"}}, reversed},
		{"currencies USDC on every ledger", map[string]any{"addresses": mine, "currencies": []string{"USDC"}, "sort": map[string]string{"by": "id"}}, ofCurrency("USDC")},
		{"currencies or-ed", map[string]any{"addresses": mine, "currencies": []string{"XRP", "BTC"}}, ofCurrency("XRP", "BTC")},
		{"currencies are codes", map[string]any{"addresses": mine, "currencies": []string{"btc-btc"}}, []string{}},
		{"addresses exact", map[string]any{"addresses": []string{mine[1], mine[2] + "0", " " + mine[3]}}, mine[1:2]},
		{"another company's address", map[string]any{"addresses": zacme}, []string{}},
		{"limit 1, offset 1", map[string]any{"addresses": mine, "paginationLimit": 1, "paginationOffset": 1}, mine[1:2]},
		{"limit 3, offset 6", map[string]any{"addresses": mine, "paginationLimit": 3, "paginationOffset": 6}, mine[6:min(9, len(mine))]},
		{"offset past the end", map[string]any{"addresses": mine, "paginationOffset": len(mine)}, []string{}},
		{"default limit 10", map[string]any{"addresses": mine}, mine[:min(10, len(mine))]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := listSettlementAddresses(t, demo.CompanyZTEST, tt.body)
			if diff := cmp.Diff(tt.want, addressesOf(got.Items)); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
	byCreated := listSettlementAddresses(t, demo.CompanyZTEST, map[string]any{"addresses": mine, "paginationLimit": 1024, "sort": map[string]string{"by": "createdAt"}})
	if byCreated.Total != len(mine) || len(byCreated.Items) != len(mine) {
		t.Errorf("sort createdAt: total %d, %d items; want %d", byCreated.Total, len(byCreated.Items), len(mine))
	}
}

// TestSettlementWalletAddressesRefused: pagination limits and sort keys.
func TestSettlementWalletAddressesRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		wantCode string
		mention  string
	}{
		{"limit 0", `{"paginationLimit":0}`, "ER-103", "paginationLimit"},
		{"limit 1025", `{"paginationLimit":1025}`, "ER-103", "paginationLimit"},
		{"offset -1", `{"paginationOffset":-1}`, "ER-103", "paginationOffset"},
		{"sort by updatedAt", `{"sort":{"by":"updatedAt"}}`, "ER-108", "sort.by"},
		{"sort order lower case", `{"sort":{"by":"id","order":"desc"}}`, "ER-108", "sort.order"},
		{"field outside the body", `{"walletIds":["ZTEST-ISW-BYBIT"]}`, "ER-108", "walletIds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, settlementAddressesPath, []byte(tt.body))
			if msg := wantError(t, r, http.StatusBadRequest, tt.wantCode); !strings.Contains(msg, tt.mention) {
				t.Errorf("message %q does not name %s", msg, tt.mention)
			}
		})
	}
	var none map[string]any
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, settlementAddressesPath, []byte(`{"addresses":["none"]}`)), &none)
	if diff := cmp.Diff(map[string]any{"items": []any{}, "total": 0.0}, none); diff != "" {
		t.Errorf("no match (-want +got):\n%s", diff)
	}
}
