package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
)

const productsPath = "/v3/api/servicedesk/products"

// catalogItem is one item of endpoint 6's answer; productId must be a JSON number.
type catalogItem struct {
	Product     string                     `json:"product"`
	ProductID   int                        `json:"productId"`
	ServiceID   string                     `json:"serviceId"`
	ServiceName string                     `json:"serviceName"`
	RequestType string                     `json:"requestType"`
	Description string                     `json:"description"`
	Template    map[string]json.RawMessage `json:"template"`
}

type catalog struct {
	Items *[]catalogItem `json:"items"`
}

// Service ids of the demo catalog, by group.
var (
	// clientServices are the catalog but the venue operators' settlement instruction.
	clientServices = []string{"0x0001-001", "0x0003-001", "0x0003-002", "0x0003-004", "0x0007-004", "0x0007-005", "0x0007-006",
		"0x0007-007", "0x0007-008", "0x0013-001", "0x0013-002", "0x0013-003", "0x0014-007"}
	custodyWallet = []string{"0x0013-001", "0x0013-002", "0x0013-003"}
	ztestViewer   = []string{"0x0003-001", "0x0013-001", "0x0013-002", "0x0013-003"}
	zacmeServices = []string{"0x0003-001", "0x0003-002", "0x0007-004", "0x0007-005", "0x0007-006", "0x0007-007", "0x0007-008"}
)

// listProducts calls endpoint 6 and returns the items; it fails unless the answer is a 200
// with an items array (an empty catalog is [], not a missing field).
func listProducts(t *testing.T, companyID, role, body string) []catalogItem {
	t.Helper()
	var got catalog
	wantOK(t, do(t, newClient(companyID, role), http.MethodPost, productsPath, []byte(body)), &got)
	if got.Items == nil {
		t.Fatalf("answer has no items array")
	}
	return *got.Items
}

func serviceIDs(items []catalogItem) []string {
	ids := []string{}
	for _, it := range items {
		ids = append(ids, it.ServiceID)
	}
	slices.Sort(ids)
	return ids
}

func TestCatalogFilters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		company string
		role    string
		give    string
		want    []string
	}{
		{"ztest maker sees the eleven of a client", demo.CompanyZTEST, maker, `{}`, clientServices},
		{"no body is no filter", demo.CompanyZTEST, maker, ``, clientServices},
		{"empty filter arrays are no constraint", demo.CompanyZTEST, maker, `{"products":[],"productIds":[],"serviceIds":[],"serviceNames":[],"requestTypes":[]}`, clientServices},
		{"ztest checker sees the eleven of a client", demo.CompanyZTEST, checker, `{}`, clientServices},
		{"a venue operator's maker sees the settlement instruction", demo.CompanyZBYBIT, maker, `{}`, []string{"0x0003-003"}},
		{"a venue operator's checker too", demo.CompanyZBYBIT, checker, `{"products":["TRADING"]}`, []string{"0x0003-003"}},
		{"ztest viewer sees its four", demo.CompanyZTEST, viewer, `{}`, ztestViewer},
		{"zacme maker sees its eight", demo.CompanyZACME, maker, `{}`, zacmeServices},
		{"zacme has no custody product", demo.CompanyZACME, maker, `{"products":["CUSTODY"]}`, nil},
		{"zacme has no custody product ids", demo.CompanyZACME, maker, `{"productIds":["0x0013","0x0014"]}`, nil},
		{"zacme cannot name a service it is not entitled to", demo.CompanyZACME, maker, `{"serviceIds":["0x0013-001"]}`, nil},
		{"viewer entitlement and product filter", demo.CompanyZTEST, viewer, `{"products":["CUSTODY"]}`, custodyWallet},
		{"viewer cannot name a service it is not entitled to", demo.CompanyZTEST, viewer, `{"serviceIds":["0x0014-007","0x0007-004"]}`, nil},
		{"products", demo.CompanyZTEST, maker, `{"products":["CUSTODY"]}`, []string{"0x0013-001", "0x0013-002", "0x0013-003", "0x0014-007"}},
		{"products or-ed", demo.CompanyZTEST, maker, `{"products":["TRADING","NETWORK_MGMT"]}`,
			[]string{"0x0001-001", "0x0003-001", "0x0003-002", "0x0003-004", "0x0007-004", "0x0007-005", "0x0007-006", "0x0007-007", "0x0007-008"}},
		{"productIds hexadecimal", demo.CompanyZTEST, maker, `{"productIds":["0x0013"]}`, custodyWallet},
		{"productIds decimal", demo.CompanyZTEST, maker, `{"productIds":["19"]}`, custodyWallet},
		{"productIds or-ed, mixed forms", demo.CompanyZTEST, maker, `{"productIds":["0x0003","20"]}`, []string{"0x0003-001", "0x0003-002", "0x0003-004", "0x0014-007"}},
		{"productIds no such product", demo.CompanyZTEST, maker, `{"productIds":["0x0099"]}`, nil},
		{"serviceIds", demo.CompanyZTEST, maker, `{"serviceIds":["0x0013-001","0x0007-004"]}`, []string{"0x0007-004", "0x0013-001"}},
		{"serviceIds unknown", demo.CompanyZTEST, maker, `{"serviceIds":["0x0013-999"]}`, nil},
		{"serviceNames exact", demo.CompanyZTEST, maker, `{"serviceNames":["Custody Wallet Management"]}`, custodyWallet},
		{"serviceNames substring matches nothing", demo.CompanyZTEST, maker, `{"serviceNames":["Custody Wallet"]}`, nil},
		{"serviceNames other case matches nothing", demo.CompanyZTEST, maker, `{"serviceNames":["custody wallet management"]}`, nil},
		{"serviceNames or-ed", demo.CompanyZTEST, maker, `{"serviceNames":["Custody Transfer","Address Whitelisting"]}`, []string{"0x0007-007", "0x0007-008", "0x0014-007"}},
		{"requestTypes", demo.CompanyZTEST, maker, `{"requestTypes":["DEACTIVATE"]}`, []string{"0x0003-002", "0x0007-006", "0x0007-008", "0x0013-003"}},
		{"requestTypes or-ed", demo.CompanyZTEST, maker, `{"requestTypes":["UPDATE","DEACTIVATE"]}`, []string{"0x0001-001", "0x0003-002", "0x0007-005", "0x0007-006", "0x0007-008", "0x0013-002", "0x0013-003"}},
		{"filters and-ed", demo.CompanyZTEST, maker, `{"products":["TRADING"],"requestTypes":["CREATE"]}`, []string{"0x0003-001", "0x0003-004"}},
		{"filters and-ed without overlap", demo.CompanyZTEST, maker, `{"products":["TRADING"],"serviceNames":["Custody Wallet Management"]}`, nil},
		{"every filter and-ed", demo.CompanyZTEST, maker, `{"products":["CUSTODY"],"productIds":["19"],"serviceIds":["0x0013-001","0x0013-002","0x0014-007"],"serviceNames":["Custody Wallet Management"],"requestTypes":["CREATE"]}`, []string{"0x0013-001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := serviceIDs(listProducts(t, tt.company, tt.role, tt.give))
			want := append([]string{}, tt.want...)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("service ids mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCatalogInvalidFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		give      string
		wantField string
	}{
		{"product lower case", `{"products":["custody"]}`, "products"},
		{"product unknown", `{"products":["CUSTODY","LENDING"]}`, "products"},
		{"requestType unknown", `{"requestTypes":["DELETE"]}`, "requestTypes"},
		{"requestType lower case", `{"requestTypes":["create"]}`, "requestTypes"},
		{"productId not hexadecimal", `{"productIds":["0xZZ"]}`, "productIds"},
		{"productId a word", `{"productIds":["nineteen"]}`, "productIds"},
		{"productId empty", `{"productIds":[""]}`, "productIds"},
		{"productId negative", `{"productIds":["-1"]}`, "productIds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(tt.give))
			msg := wantError(t, r, http.StatusBadRequest, "ER-108")
			switch {
			case strings.Contains(msg, tt.wantField):
			default:
				t.Errorf("message %q does not name the field %s", msg, tt.wantField)
			}
		})
	}
}

func TestCatalogItems(t *testing.T) {
	t.Parallel()
	items := listProducts(t, demo.CompanyZTEST, maker, `{}`)
	for _, it := range items {
		if !strings.HasPrefix(it.ServiceID, fmt.Sprintf("0x%04X-", it.ProductID)) {
			t.Errorf("%s: productId %d does not match the service id", it.ServiceID, it.ProductID)
		}
		if !slices.Contains([]string{"NETWORK_MGMT", "TRADING", "CUSTODY"}, it.Product) {
			t.Errorf("%s: product %q", it.ServiceID, it.Product)
		}
		if !slices.Contains([]string{"CREATE", "UPDATE", "DEACTIVATE"}, it.RequestType) {
			t.Errorf("%s: requestType %q", it.ServiceID, it.RequestType)
		}
		if it.ServiceName == "" || it.Description == "" || len(it.Template) == 0 {
			t.Errorf("%s: serviceName, description or template empty: %+v", it.ServiceID, it)
		}
	}
}

func TestCatalogProductIDIsNumber(t *testing.T) {
	t.Parallel()
	r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{"serviceIds":["0x0013-001"]}`))
	var got struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	wantOK(t, r, &got)
	if len(got.Items) != 1 {
		t.Fatalf("items %s, want one", r.body)
	}
	if diff := cmp.Diff("19", string(got.Items[0]["productId"])); diff != "" {
		t.Errorf("productId (-want +got):\n%s", diff)
	}
}

func TestCatalogCustodyWalletTemplate(t *testing.T) {
	t.Parallel()
	items := listProducts(t, demo.CompanyZTEST, maker, `{"serviceIds":["0x0013-001"]}`)
	if len(items) != 1 {
		t.Fatalf("got %d items, want 1", len(items))
	}
	want := catalogItem{Product: "CUSTODY", ProductID: 19, ServiceID: "0x0013-001", ServiceName: "Custody Wallet Management",
		RequestType: "CREATE", Description: "Custody Wallet"}
	got := items[0]
	template := got.Template
	got.Template = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("item (-want +got):\n%s", diff)
	}
	var keys []string
	for k, raw := range template {
		keys = append(keys, k)
		var values []string
		if err := json.Unmarshal(raw, &values); err != nil || len(values) == 0 {
			t.Errorf("template %s = %s, want a non-empty array of strings", k, raw)
		}
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"currency", "currencyId", "name", "walletOwnerId"}, keys); diff != "" {
		t.Errorf("template fields (-want +got):\n%s", diff)
	}
}

func TestCatalogGolden(t *testing.T) {
	t.Parallel()
	r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{"products":["CUSTODY"]}`))
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	golden(t, "catalog_ztest_custody.golden.json", r.body)
}
