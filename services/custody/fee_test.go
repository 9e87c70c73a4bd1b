package custody_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/custody"
)

func TestCheckFeeEstimate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	est := func(currencyID string, high, medium, low []string) custody.FeeEstimate {
		return custody.FeeEstimate{CurrencyID: currencyID, High: high, Medium: medium, Low: low, ObservedAt: now}
	}
	v := func(values ...string) []string { return values }
	eleven := strings.Split("11,10,9,8,7,6,5,4,3,2,1", ",")
	tests := []struct {
		name    string
		give    custody.FeeEstimate
		want    custody.FeeEstimate
		wantErr wantErr
	}{
		{name: "btc", give: est("btc-btc", v("30.5", "25"), v("12.5"), v("2.001", "1")),
			want: est("btc-btc", v("30.5", "25"), v("12.5"), v("2.001", "1"))},
		{name: "equal tiers", give: est("xlm-xlm", v("100"), v("100"), v("100")), want: est("xlm-xlm", v("100"), v("100"), v("100"))},
		{name: "eth down to one wei", give: est("eth-eth", v("3.5"), v("2"), v("0.000000001")), want: est("eth-eth", v("3.5"), v("2"), v("0.000000001"))},
		{name: "ten values", give: est("xrp-xrp", eleven[:10], v("1"), v("1")), want: est("xrp-xrp", eleven[:10], v("1"), v("1"))},
		{name: "token uses its ledger's unit", give: est("usdc-xlm", v("200"), v("150"), v("100")), want: est("usdc-xlm", v("200"), v("150"), v("100"))},
		{name: "unsupported currency", give: est("doge-doge", v("1"), v("1"), v("1")), wantErr: wantErr{"ER-111", "estimates[0].currencyId"}},
		{name: "empty tier", give: est("btc-btc", v("1"), nil, v("1")), wantErr: wantErr{"ER-112", "estimates[0].medium"}},
		{name: "eleven values", give: est("btc-btc", v("20"), v("11"), eleven), wantErr: wantErr{"ER-103", "estimates[0].low"}},
		{name: "zero", give: est("btc-btc", v("1"), v("1"), v("0")), wantErr: wantErr{"ER-108", "estimates[0].low"}},
		{name: "negative", give: est("btc-btc", v("-1"), v("1"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].high"}},
		{name: "not a decimal", give: est("btc-btc", v("fast"), v("1"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].high"}},
		{name: "exponent", give: est("btc-btc", v("1e3"), v("1"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].high"}},
		{name: "leading zero", give: est("btc-btc", v("030.5"), v("1"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].high"}},
		{name: "trailing zero", give: est("btc-btc", v("2"), v("1.50"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].medium"}},
		{name: "plus sign", give: est("btc-btc", v("2"), v("1"), v("+1")), wantErr: wantErr{"ER-108", "estimates[0].low"}},
		{name: "finer than sat/kvB", give: est("btc-btc", v("1.0001"), v("1"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].high"}},
		{name: "finer than a wei", give: est("eth-eth", v("1"), v("1"), v("0.0000000001")), wantErr: wantErr{"ER-108", "estimates[0].low"}},
		{name: "fraction of a stroop", give: est("xlm-xlm", v("100.5"), v("100"), v("100")), wantErr: wantErr{"ER-108", "estimates[0].high"}},
		{name: "medium above a high value", give: est("btc-btc", v("20", "9"), v("10"), v("1")), wantErr: wantErr{"ER-108", "estimates[0].medium"}},
		{name: "low above a medium value", give: est("btc-btc", v("20"), v("10", "2"), v("3")), wantErr: wantErr{"ER-108", "estimates[0].low"}},
		{name: "observed in the future", give: custody.FeeEstimate{CurrencyID: "btc-btc", High: v("1"), Medium: v("1"), Low: v("1"), ObservedAt: now.Add(2 * time.Minute)},
			wantErr: wantErr{"ER-108", "estimates[0].observedAt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := custody.CheckFeeEstimate("estimates[0]", tt.give, now)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckFeeEstimate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFeeEntries(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	const maxAge = 10 * time.Minute
	estimates := []custody.FeeEstimate{
		{CurrencyID: "xlm-xlm", High: []string{"300"}, Medium: []string{"200"}, Low: []string{"100"}, ObservedAt: now.Add(-maxAge)}, // at the bound: fresh
		{CurrencyID: "btc-btc", High: []string{"30"}, Medium: []string{"12"}, Low: []string{"2"}, ObservedAt: now},
		{CurrencyID: "eth-eth", High: []string{"3"}, Medium: []string{"2"}, Low: []string{"1"}, ObservedAt: now.Add(-maxAge - time.Millisecond)}, // stale
	}
	unavailable := func(id string) *custody.FeeError {
		return &custody.FeeError{Code: "ER-252", Message: "The fee estimate for " + id + " is currently unavailable. Please contact customer support."}
	}
	want := []custody.FeeEntry{
		{CurrencyID: "btc-btc", Status: "SUCCESS", High: []string{"30"}, Medium: []string{"12"}, Low: []string{"2"}, Type: "UTXO", Weight: "sat/vB"},
		{CurrencyID: "eth-eth", Status: "ERROR", Type: "GAS", Weight: "Gwei", Error: unavailable("eth-eth")},
		{CurrencyID: "eurc-xlm", Status: "ERROR", Type: "BASE_FEE", Weight: "stroop", Error: unavailable("eurc-xlm")},
		{CurrencyID: "usdc-eth", Status: "ERROR", Type: "GAS", Weight: "Gwei", Error: unavailable("usdc-eth")},
		{CurrencyID: "usdc-xlm", Status: "ERROR", Type: "BASE_FEE", Weight: "stroop", Error: unavailable("usdc-xlm")},
		{CurrencyID: "xlm-xlm", Status: "SUCCESS", High: []string{"300"}, Medium: []string{"200"}, Low: []string{"100"}, Type: "BASE_FEE", Weight: "stroop"},
		{CurrencyID: "xrp-xrp", Status: "ERROR", Type: "BASE_FEE", Weight: "drop", Error: unavailable("xrp-xrp")},
	}
	if diff := cmp.Diff(want, custody.FeeEntries(estimates, now, maxAge)); diff != "" {
		t.Errorf("FeeEntries() mismatch (-want +got):\n%s", diff)
	}
}
