package e2e_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
)

func activate(t *testing.T, companyID, role, walletID, currencyID string) response {
	t.Helper()
	return do(t, newClient(companyID, role), http.MethodPost, trustlinePath(walletID, currencyID), nil)
}

// TestTrustlineActivation: the success body, the new asset in endpoint 14, and the reserve
// boundaries computed exactly: (2 + subentries + 1) × 0.5 XLM available.
func TestTrustlineActivation(t *testing.T) {
	t.Parallel()
	id := stellarWallet(t, "xlm-xlm", "1.5") // exactly enough for a first trustline
	r := activate(t, demo.CompanyZTEST, maker, id, "usdc-xlm")
	var got map[string]any
	wantOK(t, r, &got)
	zero := map[string]any{"currency": "USDC", "unitCurrency": "STROOP", "availableUnitBalance": "0", "ledgerUnitBalance": "0",
		"pendingOutUnitBalance": "0", "pendingInUnitBalance": "0", "availableBalance": "0", "ledgerBalance": "0", "pendingOutBalance": "0", "pendingInBalance": "0"}
	want := map[string]any{"walletId": id, "currencyId": "usdc-xlm", "status": "ACTIVE", "assetBalance": zero, "minimumBalanceXlm": "1.5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endpoint 13 body mismatch (-want +got):\n%s", diff)
	}
	w := legacyWalletOf(t, demo.CompanyZTEST, id)
	if len(w.AssetBalances) != 2 || w.AssetBalances[1].Currency != "USDC" || w.AssetBalances[1].AvailableBalance != "0" {
		t.Errorf("endpoint 14 balances %+v, want XLM then a zero USDC entry", w.AssetBalances)
	}
	msg := wantError(t, activate(t, demo.CompanyZTEST, maker, id, "usdc-xlm"), http.StatusConflict, "ER-104")
	t.Logf("again: %s", msg)
	// The second trustline needs 2 XLM; the wallet holds 1.5.
	msg = wantError(t, activate(t, demo.CompanyZTEST, maker, id, "eurc-xlm"), http.StatusConflict, "ER-409")
	for _, part := range []string{"required 2 XLM", "available 1.5 XLM"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q does not say %q", msg, part)
		}
	}
}

func TestTrustlineReserveBoundaries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, currencyID, balance, asset string
		wantStatus                       int
		wantParts                        []string
	}{
		{"first trustline one stroop short", "xlm-xlm", "1.4999999", "eurc-xlm", http.StatusConflict, []string{"required 1.5 XLM", "available 1.4999999 XLM"}},
		{"first trustline exactly enough", "xlm-xlm", "1.5", "eurc-xlm", http.StatusOK, nil},
		// A usdc-xlm wallet holds its own trustline (one subentry) and no XLM.
		{"token wallet without XLM", "usdc-xlm", "10", "eurc-xlm", http.StatusConflict, []string{"required 2 XLM", "available 0 XLM"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := activate(t, demo.CompanyZTEST, maker, stellarWallet(t, tt.currencyID, tt.balance), tt.asset)
			if tt.wantStatus == http.StatusOK {
				var got map[string]any
				wantOK(t, r, &got)
				return
			}
			msg := wantError(t, r, tt.wantStatus, "ER-409")
			for _, part := range tt.wantParts {
				if !strings.Contains(msg, part) {
					t.Errorf("message %q does not say %q", msg, part)
				}
			}
		})
	}
}

func TestTrustlineRefusals(t *testing.T) {
	t.Parallel()
	xlm := stellarWallet(t, "xlm-xlm", "250")
	tests := []struct {
		name               string
		companyID, role    string
		walletID, currency string
		status             int
		code               string
	}{
		{"unknown wallet", demo.CompanyZTEST, maker, "ZTEST-NOBENF-NOSUCHWLT", "usdc-xlm", http.StatusNotFound, "ER-102"},
		{"another company's wallet", demo.CompanyZACME, maker, xlm, "usdc-xlm", http.StatusNotFound, "ER-102"},
		{"bitcoin wallet", demo.CompanyZTEST, maker, "ZTEST-NOBENF-DEMO000001", "usdc-xlm", http.StatusBadRequest, "ER-111"},
		{"ethereum asset", demo.CompanyZTEST, maker, xlm, "usdc-eth", http.StatusBadRequest, "ER-111"},
		{"unsupported asset", demo.CompanyZTEST, maker, xlm, "doge-xlm", http.StatusBadRequest, "ER-111"},
		{"native XLM", demo.CompanyZTEST, maker, xlm, "xlm-xlm", http.StatusBadRequest, "ER-108"},
		{"pending wallet", demo.CompanyZTEST, maker, demo.PendingWalletID, "usdc-xlm", http.StatusBadRequest, "ER-111"}, // an ETH proposal
		{"viewer", demo.CompanyZTEST, viewer, xlm, "usdc-xlm", http.StatusForbidden, "ER-403"},
		{"checker", demo.CompanyZTEST, checker, xlm, "usdc-xlm", http.StatusForbidden, "ER-403"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantError(t, activate(t, tt.companyID, tt.role, tt.walletID, tt.currency), tt.status, tt.code)
		})
	}
	if w := legacyWalletOf(t, demo.CompanyZTEST, xlm); len(w.AssetBalances) != 1 {
		t.Errorf("refused activations changed the wallet: %+v", w.AssetBalances)
	}
}

// TestTrustlineRace: 20 concurrent activations of one trustline; exactly one succeeds, the
// others answer 409 and the wallet holds the asset once.
func TestTrustlineRace(t *testing.T) {
	t.Parallel()
	id := stellarWallet(t, "xlm-xlm", "250")
	statuses := make([]int, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = activate(t, demo.CompanyZTEST, maker, id, "eurc-xlm").status })
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if diff := cmp.Diff(map[int]int{http.StatusOK: 1, http.StatusConflict: 19}, counts); diff != "" {
		t.Errorf("statuses of 20 racing activations (-want +got):\n%s", diff)
	}
	if w := legacyWalletOf(t, demo.CompanyZTEST, id); len(w.AssetBalances) != 2 {
		t.Errorf("wallet balances %+v, want XLM and EURC once", w.AssetBalances)
	}
}
