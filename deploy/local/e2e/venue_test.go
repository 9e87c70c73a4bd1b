package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
)

// TestVenueOperatorReadsWalletsAtItsVenue: signed as a venue operator, endpoint 2 lists every
// client's trading wallets held at that venue with their balances, and nothing held at
// another venue; clients still see only their own.
func TestVenueOperatorReadsWalletsAtItsVenue(t *testing.T) {
	t.Parallel()
	demoWallets := map[string]bool{"ZTEST-TW-DEMO000001": true, "ZTEST-TW-DEMO000002": true, "ZACME-TW-DEMO000001": true}
	tests := []struct {
		company, role string
		body          map[string]any
		want          []string
	}{
		{demo.CompanyZBYBIT, viewer, map[string]any{}, []string{"ZACME-TW-DEMO000001", "ZTEST-TW-DEMO000001"}},
		{demo.CompanyZDERIBIT, viewer, map[string]any{}, []string{"ZTEST-TW-DEMO000002"}},
		{demo.CompanyZBYBIT, viewer, map[string]any{"ids": []string{"ZTEST-TW-DEMO000002"}}, nil},
		{demo.CompanyZACME, viewer, map[string]any{}, []string{"ZACME-TW-DEMO000001"}},
		{demo.CompanyZACME, viewer, map[string]any{"ids": []string{"ZTEST-TW-DEMO000001"}}, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %v", tt.company, tt.role, tt.body), func(t *testing.T) {
			t.Parallel()
			body := map[string]any{"paginationLimit": 1024}
			for k, v := range tt.body {
				body[k] = v
			}
			var got struct {
				Items []struct {
					ID       string `json:"id"`
					Balances []struct {
						Ledger struct {
							Amount string `json:"amount"`
						} `json:"ledgerBalance"`
					} `json:"balances"`
				} `json:"items"`
			}
			wantOK(t, do(t, newClient(tt.company, tt.role), http.MethodPost, "/v3/api/trading/wallets", mustJSON(t, body)), &got)
			var ids []string
			for _, w := range got.Items {
				if !demoWallets[w.ID] {
					continue // wallets other tests create
				}
				ids = append(ids, w.ID)
				if len(w.Balances) == 0 || w.Balances[0].Ledger.Amount == "" {
					t.Errorf("%s shows no balance: %+v", w.ID, w)
				}
			}
			slices.Sort(ids)
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("demo wallets seen (-want +got):\n%s", diff)
			}
		})
	}
}
