package e2e_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// TestLedgerSetPrices: the settlement engine refreshes trading's price table (validated, all
// or nothing) and endpoint 2 values balances with it at once. EURC has no demo price, so no
// other test reads the values it changes.
func TestLedgerSetPrices(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	eurc := f.put(t, "EURC", "250.5", "ACTIVE")
	feed, ctx := newPriceFeed(t)
	refused := []struct {
		name   string
		prices []*tradingv1.Price
		code   string
	}{
		{"empty", nil, "ER-112"},
		{"unsupported currency", []*tradingv1.Price{{Currency: "EURC", Usd: "1.08"}, {Currency: "DOGE", Usd: "0.1"}}, "ER-111"},
		{"negative", []*tradingv1.Price{{Currency: "EURC", Usd: "-1.08"}}, "ER-108"},
		{"zero", []*tradingv1.Price{{Currency: "EURC", Usd: "0"}}, "ER-108"},
		{"not a decimal", []*tradingv1.Price{{Currency: "EURC", Usd: "1,08"}}, "ER-108"},
		{"no price", []*tradingv1.Price{{Currency: "EURC"}}, "ER-101"},
	}
	before := eurcValue(t, eurc)
	for _, tt := range refused {
		_, err := feed.SetPrices(ctx(), &tradingv1.SetPricesRequest{Prices: tt.prices})
		if status.Code(err) != codes.InvalidArgument || grpcERCode(err) != tt.code {
			t.Errorf("%s: %v, want InvalidArgument %s", tt.name, err, tt.code)
		}
	}
	if got := eurcValue(t, eurc); got != before {
		t.Errorf("fiat value after refused refreshes = %q, want %q (nothing stored)", got, before)
	}
	resp, err := feed.SetPrices(ctx(), &tradingv1.SetPricesRequest{Prices: []*tradingv1.Price{{Currency: "EURC", Usd: "1.0850"}}})
	if err != nil || resp.GetUpdated() != 1 {
		t.Fatalf("SetPrices = %v, %v; want 1 updated", resp, err)
	}
	if got := eurcValue(t, eurc); got != "271.7925" {
		t.Errorf("fiat value of 250.5 EURC at 1.0850 = %q, want 271.7925", got)
	}
	if _, err := feed.SetPrices(ctx(), &tradingv1.SetPricesRequest{Prices: []*tradingv1.Price{{Currency: "EURC", Usd: "1.1"}}}); err != nil {
		t.Fatal(err)
	}
	if got := eurcValue(t, eurc); got != "275.55" {
		t.Errorf("fiat value of 250.5 EURC at 1.1 = %q, want 275.55", got)
	}
	gatewayKey, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "gateway-principal.pem"))
	if err != nil {
		t.Fatal(err)
	}
	asCompany := metadata.AppendToOutgoingContext(t.Context(), principal.MetadataKey, token(t, "gateway", gatewayKey, time.Minute))
	_, err = feed.SetPrices(asCompany, &tradingv1.SetPricesRequest{Prices: []*tradingv1.Price{{Currency: "EURC", Usd: "9"}}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a company refreshes prices: %v, want PermissionDenied", err)
	}
}

func eurcValue(t *testing.T, wallet string) string {
	t.Helper()
	var got struct {
		Items []struct {
			Balances []struct {
				Available struct {
					FiatValue string `json:"fiatValue"`
				} `json:"availableBalance"`
			} `json:"balances"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/trading/wallets", mustJSON(t, map[string]any{"ids": []string{wallet}})), &got)
	if len(got.Items) != 1 {
		t.Fatalf("wallet %s not found", wallet)
	}
	return got.Items[0].Balances[0].Available.FiatValue
}
