package trading_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/trading"
)

var fixedNow = time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC)

func demoPrices() trading.Prices {
	return trading.Prices{
		"BTC": {Currency: "BTC", Price: "65000.00", FiatCurrency: "USD"},
		"XLM": {Currency: "XLM", Price: "0.12", FiatCurrency: "USD"},
		"XRP": {Currency: "XRP", Price: "0.55", FiatCurrency: "USD"},
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		amount, currency string
		wantFiat         string
	}{
		{"1.23456789", "BTC", "80246.91285"},
		{"2", "BTC", "130000.00"},
		{"0", "BTC", "0.00"},
		{"0", "XLM", "0.00"},
		{"0", "ETH", "0"}, // no price
		{"0.0", "BTC", "0.00"},
		{"0.00000001", "BTC", "0.00065"},
		{"0.3", "XLM", "0.036"},
		{"123456789.123456", "XRP", "67901234.0179008"},
		{"-1.5", "XRP", "-0.825"},
		{"5", "ETH", "0"},     // no price
		{"abc", "BTC", "0"},   // not a decimal
		{"1", "DOGE", "0"},    // no price
		{"10", "XRP", "5.50"}, // the price's two decimals
	}
	for _, tt := range tests {
		got := demoPrices().Value(tt.amount, tt.currency)
		want := trading.Amount{Amount: tt.amount, Unit: tt.currency, FiatValue: tt.wantFiat, FiatCurrency: "USD", USDValue: tt.wantFiat}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Value(%s %s) diff (-want +got):\n%s", tt.amount, tt.currency, diff)
		}
	}
}

// The values are exact: 0.1 + 0.2 is 0.3, in amounts and in fiat.
func TestValueIsExact(t *testing.T) {
	t.Parallel()
	sum := decimal.RequireFromString("0.1").Add(decimal.RequireFromString("0.2"))
	if sum.String() != "0.3" {
		t.Fatalf("0.1 + 0.2 = %s", sum)
	}
	p := demoPrices()
	a := decimal.RequireFromString(p.Value("0.1", "XRP").FiatValue)
	b := decimal.RequireFromString(p.Value("0.2", "XRP").FiatValue)
	c := p.Value(sum.String(), "XRP").FiatValue
	if got := a.Add(b); !got.Equal(decimal.RequireFromString(c)) || c != "0.165" {
		t.Errorf("fiat(0.1) + fiat(0.2) = %s, fiat(0.3) = %s; want both 0.165", got, c)
	}
}

func TestPriceValidate(t *testing.T) {
	t.Parallel()
	if err := (trading.Price{Currency: "BTC", Price: "65000.00", FiatCurrency: "USD"}).Validate(); err != nil {
		t.Errorf("valid price: %v", err)
	}
	wantAppErr(t, trading.Price{Price: "1", FiatCurrency: "USD"}.Validate(), apperr.CodeMissing, "currency")
	wantAppErr(t, trading.Price{Currency: "BTC", Price: "1", FiatCurrency: "EUR"}.Validate(), apperr.CodeCurrency, "fiatCurrency")
	wantAppErr(t, trading.Price{Currency: "BTC", Price: "-1", FiatCurrency: "USD"}.Validate(), apperr.CodeFormat, "price")
	wantAppErr(t, trading.Price{Currency: "BTC", Price: "1e3", FiatCurrency: "USD"}.Validate(), apperr.CodeFormat, "price")
}
