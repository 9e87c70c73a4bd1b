package custody_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/custody"
)

func TestNewAssetBalance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		currencyID         string
		give               string
		wantMain, wantUnit string
		wantErr            bool
	}{
		{currencyID: "btc-btc", give: "1.25", wantMain: "1.25", wantUnit: "125000000"},
		{currencyID: "btc-btc", give: "1.250", wantMain: "1.25", wantUnit: "125000000"},
		{currencyID: "btc-btc", give: "", wantMain: "0", wantUnit: "0"},
		{currencyID: "btc-btc", give: "0.00000001", wantMain: "0.00000001", wantUnit: "1"},
		{currencyID: "btc-btc", give: "0.000000001", wantErr: true},
		{currencyID: "btc-btc", give: "-1", wantErr: true},
		{currencyID: "btc-btc", give: "1e", wantErr: true},
		{currencyID: "eth-eth", give: "12.5", wantMain: "12.5", wantUnit: "12500000000000000000"},
		{currencyID: "eth-eth", give: "123456789.123456789123456789", wantMain: "123456789.123456789123456789", wantUnit: "123456789123456789123456789"},
		{currencyID: "eth-eth", give: "0.1234567891234567891", wantErr: true},
		{currencyID: "xlm-xlm", give: "250", wantMain: "250", wantUnit: "2500000000"},
		{currencyID: "usdc-eth", give: "10.000001", wantMain: "10.000001", wantUnit: "10000001"},
	}
	for _, tt := range tests {
		t.Run(tt.currencyID+" "+tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := custody.NewAssetBalance(currency(t, tt.currencyID), custody.Amounts{Available: tt.give})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NewAssetBalance(%q) = %+v, want an error", tt.give, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.AvailableBalance != tt.wantMain || got.AvailableUnitBalance != tt.wantUnit {
				t.Errorf("available = %s / %s units, want %s / %s", got.AvailableBalance, got.AvailableUnitBalance, tt.wantMain, tt.wantUnit)
			}
			if err := got.Check(); err != nil {
				t.Errorf("Check() of a built balance = %v", err)
			}
		})
	}
}

func TestAssetBalanceCheck(t *testing.T) {
	t.Parallel()
	good, err := custody.NewAssetBalance(currency(t, "btc-btc"), custody.Amounts{Available: "1.25", Ledger: "1.25"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*custody.AssetBalance)
	}{
		{"unit disagrees", func(b *custody.AssetBalance) { b.AvailableUnitBalance = "125000001" }},
		{"main disagrees", func(b *custody.AssetBalance) { b.LedgerBalance = "1.26" }},
		{"main not canonical", func(b *custody.AssetBalance) { b.AvailableBalance = "1.250" }},
		{"pending unit missing", func(b *custody.AssetBalance) { b.PendingInUnitBalance = "" }},
		{"unknown currency", func(b *custody.AssetBalance) { b.CurrencyID = "doge-doge" }},
		{"code mismatch", func(b *custody.AssetBalance) { b.Currency = "ETH" }},
		{"unit name mismatch", func(b *custody.AssetBalance) { b.UnitCurrency = "WEI" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := good
			tt.change(&b)
			if err := b.Check(); err == nil {
				t.Errorf("Check() = nil for %s, want an error", cmp.Diff(good, b))
			}
		})
	}
	if err := good.Check(); err != nil {
		t.Errorf("Check() of a valid balance = %v", err)
	}
}
