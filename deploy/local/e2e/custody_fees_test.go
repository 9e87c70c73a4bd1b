package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
)

type feeEntry struct {
	CurrencyID string `json:"currencyId"`
	Status     string `json:"status"`
	High       *struct {
		Value []string `json:"value"`
	} `json:"high"`
	Type   string `json:"type"`
	Weight string `json:"weight"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ledgerFees reads endpoint 12 as the ZTEST viewer and returns the entries by currency id.
func ledgerFees(t *testing.T, companyID string) map[string]feeEntry {
	t.Helper()
	var got struct {
		Items []feeEntry `json:"items"`
	}
	wantOK(t, do(t, newClient(companyID, viewer), http.MethodPost, feesPath, nil), &got)
	out := map[string]feeEntry{}
	for _, e := range got.Items {
		out[e.CurrencyID] = e
	}
	return out
}

// TestLedgerFeesShape pins the demo's fresh estimates (all but xrp-xrp, which no test
// refreshes with fresh values before TestLedgerFeesRefresh reads it).
func TestLedgerFeesShape(t *testing.T) {
	t.Parallel()
	r := do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, feesPath, nil)
	var body struct {
		Items []map[string]any `json:"items"`
	}
	wantOK(t, r, &body)
	want := map[string]any{"currencyId": "btc-btc", "status": "SUCCESS", "type": "UTXO", "weight": "sat/vB",
		"high": map[string]any{"value": []any{"35.5", "30"}}, "medium": map[string]any{"value": []any{"18.25"}}, "low": map[string]any{"value": []any{"6", "4.001"}}}
	if len(body.Items) != 7 {
		t.Fatalf("%d entries, want one per supported currency (7): %s", len(body.Items), r.body)
	}
	if diff := cmp.Diff(want, body.Items[0]); diff != "" {
		t.Errorf("first entry (btc-btc) mismatch (-want +got):\n%s", diff)
	}
	fees := ledgerFees(t, demo.CompanyZTEST)
	for id, weight := range map[string]string{"eth-eth": "Gwei", "usdc-eth": "Gwei", "xlm-xlm": "stroop", "usdc-xlm": "stroop", "eurc-xlm": "stroop"} {
		if e := fees[id]; e.Status != "SUCCESS" || e.Weight != weight || e.Error != nil || e.High == nil || len(e.High.Value) == 0 {
			t.Errorf("%s: %+v, want SUCCESS values in %s", id, e, weight)
		}
	}
	// Every company sees the same estimates. xrp-xrp is left out: TestLedgerFeesRefresh, in
	// parallel, refreshes it between the two reads.
	others := ledgerFees(t, demo.CompanyZACME)
	delete(fees, "xrp-xrp")
	delete(others, "xrp-xrp")
	if diff := cmp.Diff(fees, others); diff != "" {
		t.Errorf("ZACME sees other fees than ZTEST (-ztest +zacme):\n%s", diff)
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, feesPath, nil), http.StatusUnauthorized, "ER-401") // submitter-id required
}

// TestLedgerFeesRefresh: xrp-xrp has no estimate (ER-252 in place of values, asking to contact
// customer support); an estimate observed longer ago than the bound stays unavailable; a
// fresh one shows; a late older one does not replace it.
func TestLedgerFeesRefresh(t *testing.T) {
	t.Parallel()
	admin, as := custodyAdmin(t)
	xrp := ledgerFees(t, demo.CompanyZTEST)["xrp-xrp"]
	if xrp.Status != "ERROR" || xrp.High != nil || xrp.Error == nil || xrp.Error.Code != "ER-252" || !strings.Contains(xrp.Error.Message, "contact customer support") {
		t.Fatalf("xrp-xrp before any estimate: %+v, want ERROR with ER-252 asking to contact customer support", xrp)
	}
	refresh := func(observed time.Time, high string) int32 {
		t.Helper()
		resp, err := admin.RefreshFeeEstimates(as(), &custodyv1.RefreshFeeEstimatesRequest{Estimates: []*custodyv1.FeeEstimate{
			{CurrencyId: "xrp-xrp", High: []string{high}, Medium: []string{"12"}, Low: []string{"10"}, ObservedAt: observed.UTC().Format(time.RFC3339Nano)}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetUpdated()
	}
	if n := refresh(time.Now().Add(-11*time.Minute), "15"); n != 1 {
		t.Fatalf("stale refresh stored %d, want 1", n)
	}
	if e := ledgerFees(t, demo.CompanyZTEST)["xrp-xrp"]; e.Status != "ERROR" || e.Error == nil || e.Error.Code != "ER-252" {
		t.Errorf("xrp-xrp with an 11-minute-old estimate: %+v, want ER-252", e)
	}
	fresh := time.Now()
	if n := refresh(fresh, "20"); n != 1 {
		t.Fatalf("fresh refresh stored %d, want 1", n)
	}
	if n := refresh(fresh.Add(-time.Second), "99"); n != 0 {
		t.Errorf("an older estimate delivered late was stored (%d)", n)
	}
	e := ledgerFees(t, demo.CompanyZTEST)["xrp-xrp"]
	if e.Status != "SUCCESS" || e.Error != nil || e.High == nil || !cmp.Equal(e.High.Value, []string{"20"}) || e.Weight != "drop" {
		t.Errorf("xrp-xrp after a fresh estimate: %+v, want SUCCESS with high [20] drops", e)
	}
}

// TestRefreshFeeEstimatesValidation: only internal systems refresh, and every rule of an
// estimate is checked before anything is stored.
func TestRefreshFeeEstimatesValidation(t *testing.T) {
	t.Parallel()
	admin, as := custodyAdmin(t)
	good := &custodyv1.FeeEstimate{CurrencyId: "btc-btc", High: []string{"99"}, Medium: []string{"98"}, Low: []string{"97"}}
	tests := []struct {
		name      string
		estimates []*custodyv1.FeeEstimate
		code      string
	}{
		{"unsupported currency", []*custodyv1.FeeEstimate{good, {CurrencyId: "doge-doge", High: []string{"1"}, Medium: []string{"1"}, Low: []string{"1"}}}, "ER-111"},
		{"zero", []*custodyv1.FeeEstimate{good, {CurrencyId: "eth-eth", High: []string{"1"}, Medium: []string{"1"}, Low: []string{"0"}}}, "ER-108"},
		{"not a decimal", []*custodyv1.FeeEstimate{good, {CurrencyId: "eth-eth", High: []string{"1e3"}, Medium: []string{"1"}, Low: []string{"1"}}}, "ER-108"},
		{"medium above high", []*custodyv1.FeeEstimate{good, {CurrencyId: "eth-eth", High: []string{"1"}, Medium: []string{"2"}, Low: []string{"1"}}}, "ER-108"},
		{"eleven values", []*custodyv1.FeeEstimate{good, {CurrencyId: "eth-eth", High: strings.Split("1,1,1,1,1,1,1,1,1,1,1", ","), Medium: []string{"1"}, Low: []string{"1"}}}, "ER-103"},
		{"empty tier", []*custodyv1.FeeEstimate{good, {CurrencyId: "eth-eth", High: []string{"1"}, Low: []string{"1"}}}, "ER-112"},
		{"nothing", nil, "ER-112"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := admin.RefreshFeeEstimates(as(), &custodyv1.RefreshFeeEstimatesRequest{Estimates: tt.estimates})
			if status.Code(err) != codes.InvalidArgument || erCodeOf(err) != tt.code {
				t.Errorf("err = %v (%s), want InvalidArgument %s", err, erCodeOf(err), tt.code)
			}
		})
	}
	_, err := admin.RefreshFeeEstimates(asGatewayCompany(t), &custodyv1.RefreshFeeEstimatesRequest{Estimates: []*custodyv1.FeeEstimate{good}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a company caller refreshed estimates: err = %v, want PermissionDenied", err)
	}
	if e := ledgerFees(t, demo.CompanyZTEST)["btc-btc"]; e.High == nil || e.High.Value[0] == "99" {
		t.Errorf("a refused refresh stored its valid estimate: %+v", e)
	}
}
