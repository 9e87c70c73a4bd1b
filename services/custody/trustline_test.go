package custody_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/ledger"
)

func TestTrustlineAsset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		wantErr wantErr
	}{
		{give: "usdc-xlm"},
		{give: "eurc-xlm"},
		{give: "", wantErr: wantErr{"ER-101", "currencyId"}},
		{give: "doge-xlm", wantErr: wantErr{"ER-111", "currencyId"}},
		{give: "usdc-eth", wantErr: wantErr{"ER-111", "currencyId"}},
		{give: "btc-btc", wantErr: wantErr{"ER-111", "currencyId"}},
		{give: "xlm-xlm", wantErr: wantErr{"ER-108", "currencyId"}},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			cur, err := custody.TrustlineAsset(tt.give)
			checkErr(t, err, tt.wantErr)
			if err == nil && cur.CurrencyID != tt.give {
				t.Errorf("TrustlineAsset(%s) = %s", tt.give, cur.CurrencyID)
			}
		})
	}
}

func TestTrustlineReserve(t *testing.T) {
	t.Parallel()
	for subentries, want := range []string{"1.5", "2", "2.5", "3"} {
		if got := custody.TrustlineReserve(subentries).String(); got != want {
			t.Errorf("TrustlineReserve(%d) = %s, want %s", subentries, got, want)
		}
	}
}

// stellar is an ACTIVE Stellar wallet holding xlm available XLM (none: no XLM entry) and
// the given assets, with one subentry per asset.
func stellar(t *testing.T, xlm string, assets ...string) custody.Wallet {
	t.Helper()
	w := custody.Wallet{ID: "W", CompanyID: "ZTEST", Status: custody.StatusActive, Blockchain: ledger.XLM}
	add := func(id, amount string) {
		cur, _ := ledger.ByID(id)
		b, err := custody.NewAssetBalance(cur, custody.Amounts{Available: amount, Ledger: amount})
		if err != nil {
			t.Fatal(err)
		}
		w.AssetBalances = append(w.AssetBalances, b)
	}
	if xlm != "" {
		add("xlm-xlm", xlm)
	}
	for _, a := range assets {
		add(a, "0")
		w.Subentries++
	}
	return w
}

func TestPlanTrustline(t *testing.T) {
	t.Parallel()
	usdc, _ := ledger.ByID("usdc-xlm")
	eurc, _ := ledger.ByID("eurc-xlm")
	btc := stellar(t, "250")
	btc.Blockchain = ledger.BTC
	off, pending := stellar(t, "250"), stellar(t, "250")
	off.Status, pending.Status = custody.StatusDeactivated, custody.StatusPendingAuth
	tests := []struct {
		name        string
		wallet      custody.Wallet
		asset       ledger.Currency
		wantMinimum string
		wantErr     wantErr
		wantMessage []string
	}{
		{name: "exactly enough", wallet: stellar(t, "1.5"), asset: usdc, wantMinimum: "1.5"},
		{name: "plenty", wallet: stellar(t, "250"), asset: usdc, wantMinimum: "1.5"},
		{name: "one stroop short", wallet: stellar(t, "1.4999999"), asset: usdc, wantErr: wantErr{"ER-409", "walletId"},
			wantMessage: []string{"required 1.5 XLM", "available 1.4999999 XLM", "(2 + 0 subentries + 1) × 0.5 XLM"}},
		{name: "second trustline exactly enough", wallet: stellar(t, "2", "usdc-xlm"), asset: eurc, wantMinimum: "2"},
		{name: "second trustline one stroop short", wallet: stellar(t, "1.9999999", "usdc-xlm"), asset: eurc, wantErr: wantErr{"ER-409", "walletId"},
			wantMessage: []string{"required 2 XLM", "available 1.9999999 XLM"}},
		{name: "no XLM at all", wallet: stellar(t, "", "usdc-xlm"), asset: eurc, wantErr: wantErr{"ER-409", "walletId"},
			wantMessage: []string{"required 2 XLM", "available 0 XLM"}},
		{name: "already active", wallet: stellar(t, "250", "usdc-xlm"), asset: usdc, wantErr: wantErr{"ER-104", "currencyId"}},
		{name: "not a Stellar wallet", wallet: btc, asset: usdc, wantErr: wantErr{"ER-111", "walletId"}},
		{name: "deactivated", wallet: off, asset: usdc, wantErr: wantErr{"ER-113", "walletId"}},
		{name: "pending approval", wallet: pending, asset: usdc, wantErr: wantErr{"ER-409", "walletId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := custody.PlanTrustline(tt.wallet, tt.asset)
			checkErr(t, err, tt.wantErr)
			for _, part := range tt.wantMessage {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q does not say %q", err.Error(), part)
				}
			}
			if err != nil {
				return
			}
			zero, _ := custody.NewAssetBalance(tt.asset, custody.Amounts{})
			if diff := cmp.Diff(custody.Trustline{Balance: zero, MinimumBalanceXLM: tt.wantMinimum}, got); diff != "" {
				t.Errorf("PlanTrustline() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenCountsTheTrustlineOfAStellarToken(t *testing.T) {
	t.Parallel()
	for currencyID, want := range map[string]int{"usdc-xlm": 1, "eurc-xlm": 1, "xlm-xlm": 0, "usdc-eth": 0, "btc-btc": 0} {
		w, err := custody.Open(custody.Opening{ID: "W", CompanyID: "ZTEST", CurrencyID: currencyID})
		if err != nil {
			t.Fatal(err)
		}
		if w.Subentries != want {
			t.Errorf("Open(%s).Subentries = %d, want %d", currencyID, w.Subentries, want)
		}
	}
}
