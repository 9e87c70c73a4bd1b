package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
)

// TestWhitelistedAddressesFilters runs on ZACME's addresses: VASP-001 and VASP-003 stay
// active for ZACME whatever the other tests do (see vasp_test.go). Five fresh addresses are
// whitelisted in order, the BTC one is then deactivated; every query names them (addresses
// filter) or a fragment only they hold, so the demo data and other tests do not show.
func TestWhitelistedAddressesFilters(t *testing.T) {
	t.Parallel()
	eth1, eth2 := wlETH(t), wlFresh(t, "ETH")
	btc, xlm, xrp := wlFresh(t, "BTC"), wlFresh(t, "XLM"), wlFresh(t, "XRP")
	mine := []string{eth1, xlm, eth2, btc, xrp}
	for _, p := range []map[string]any{
		wlPayload(eth1, "ETH", "VASP-001", "INCOMING"),
		wlPayload(xlm, "XLM", "VASP-003", "OUTGOING"),
		wlPayload(eth2, "ETH", "VASP-003", "OUTGOING", "INCOMING"),
		wlPayload(btc, "BTC", "VASP-001"),
		wlPayload(xrp, "XRP", "VASP-003", "INCOMING"),
	} {
		wlWhitelist(t, demo.CompanyZACME, p)
	}
	wlDeactivate(t, demo.CompanyZACME, strings.ToUpper(btc), "BTC") // bech32 is case-insensitive

	all := listWhitelisted(t, demo.CompanyZACME, map[string]any{"addresses": mine})
	if diff := cmp.Diff(mine, wlAddresses(all.Items)); diff != "" || all.Total != 5 {
		t.Fatalf("total %d, want 5; oldest first (-want +got):\n%s", all.Total, diff)
	}
	wantPurposes := [][]string{{"INCOMING"}, {"OUTGOING"}, {"INCOMING", "OUTGOING"}, {"INCOMING", "OUTGOING"}, {"INCOMING"}}
	for i, it := range all.Items {
		if diff := cmp.Diff(wantPurposes[i], it.AddressPurpose); diff != "" {
			t.Errorf("addressPurpose of %s (-want +got):\n%s", it.Address, diff)
		}
	}
	if all.Items[3].Status != "DEACTIVATED" || all.Items[3].BlockchainID != "btc-btc" || all.Items[1].BlockchainID != "xlm-xlm" {
		t.Errorf("items = %+v", all.Items)
	}

	tests := []struct {
		name      string
		body      map[string]any
		want      []string
		wantTotal int
	}{
		{"addresses are exact", map[string]any{"addresses": []string{eth1, strings.ToLower(xlm), strings.ToUpper(xrp)}}, []string{eth1}, 1},
		{"blockchains", map[string]any{"addresses": mine, "blockchains": []string{"ETH", "XRP"}}, []string{eth1, eth2, xrp}, 3},
		{"blockchainIds", map[string]any{"addresses": mine, "blockchainIds": []string{"xlm-xlm", "btc-btc"}}, []string{xlm, btc}, 2},
		{"statuses ACTIVE", map[string]any{"addresses": mine, "statuses": []string{"ACTIVE"}}, []string{eth1, xlm, eth2, xrp}, 4},
		{"statuses DEACTIVATED", map[string]any{"addresses": mine, "statuses": []string{"DEACTIVATED"}}, []string{btc}, 1},
		{"statuses both", map[string]any{"addresses": mine, "statuses": []string{"ACTIVE", "DEACTIVATED"}}, mine, 5},
		{"addressFragment, any case", map[string]any{"addressFragment": strings.ToUpper(eth2[5:25])}, []string{eth2}, 1},
		{"addressFragment of an XLM address", map[string]any{"addressFragment": strings.ToLower(xlm[10:30])}, []string{xlm}, 1},
		{"addressFragment is no pattern", map[string]any{"addresses": mine, "addressFragment": "0x.*"}, []string{}, 0},
		{"filters combine with AND", map[string]any{"addresses": mine, "blockchains": []string{"ETH", "BTC"}, "statuses": []string{"ACTIVE"}, "addressFragment": "0X"}, []string{eth1, eth2}, 2},
		{"empty filters are no constraint", map[string]any{"addresses": mine, "blockchains": []string{}, "statuses": []string{}, "addressFragment": ""}, mine, 5},
		{"limit 2", map[string]any{"addresses": mine, "paginationLimit": 2}, mine[:2], 5},
		{"limit 2, offset 2", map[string]any{"addresses": mine, "paginationLimit": 2, "paginationOffset": 2}, mine[2:4], 5},
		{"limit 2, offset 4", map[string]any{"addresses": mine, "paginationLimit": 2, "paginationOffset": 4}, mine[4:], 5},
		{"offset at the end", map[string]any{"addresses": mine, "paginationOffset": 5}, []string{}, 5},
		{"offset far past the end", map[string]any{"addresses": mine, "paginationOffset": 2147483647}, []string{}, 5},
		{"limit 1 (the minimum)", map[string]any{"addresses": mine, "paginationLimit": 1, "paginationOffset": 0}, mine[:1], 5},
		{"limit 1024 (the maximum)", map[string]any{"addresses": mine, "paginationLimit": 1024}, mine, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := listWhitelisted(t, demo.CompanyZACME, tt.body)
			if diff := cmp.Diff(tt.want, wlAddresses(got.Items)); diff != "" || got.Total != tt.wantTotal {
				t.Errorf("total %d, want %d; addresses (-want +got):\n%s", got.Total, tt.wantTotal, diff)
			}
		})
	}
	t.Run("another company sees none of them", func(t *testing.T) {
		t.Parallel()
		if got := listWhitelisted(t, demo.CompanyZTEST, map[string]any{"addresses": mine}); got.Total != 0 || len(got.Items) != 0 {
			t.Errorf("ZTEST sees ZACME's addresses: %+v", got)
		}
	})
}

// TestWhitelistedAddressesDefaultLimit: without paginationLimit a page holds at most 10.
func TestWhitelistedAddressesDefaultLimit(t *testing.T) {
	t.Parallel()
	got := listWhitelisted(t, demo.CompanyZACME, map[string]any{})
	if len(got.Items) > 10 || got.Total < len(got.Items) {
		t.Errorf("%d items, total %d; want at most 10 items", len(got.Items), got.Total)
	}
	demoXRP := listWhitelisted(t, demo.CompanyZACME, map[string]any{"addresses": []string{"rG6KU9oECoWxTLhS2HBz2vfySE1sRi5wPu"}})
	if demoXRP.Total != 1 || demoXRP.Items[0].CreatedAt != "2026-01-20T11:45:30.250Z" {
		t.Errorf("the demo XRP address = %+v, want it with createdAt 2026-01-20T11:45:30.250Z", demoXRP)
	}
}

// TestWhitelistedAddressesRefused: the limits of paginationLimit and paginationOffset, the
// allowed filter values, and fields outside the contract's body.
func TestWhitelistedAddressesRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		wantCode string
		mention  string
	}{
		{"limit 0", `{"paginationLimit":0}`, "ER-103", "paginationLimit"},
		{"limit -1", `{"paginationLimit":-1}`, "ER-103", "paginationLimit"},
		{"limit 1025", `{"paginationLimit":1025}`, "ER-103", "paginationLimit"},
		{"offset -1", `{"paginationOffset":-1}`, "ER-103", "paginationOffset"},
		{"status lower case", `{"statuses":["active"]}`, "ER-108", "statuses"},
		{"status unknown", `{"statuses":["ACTIVE","PENDING"]}`, "ER-108", "statuses"},
		{"blockchain lower case", `{"blockchains":["eth"]}`, "ER-108", "blockchains"},
		{"blockchainId not <chain>-<chain>", `{"blockchainIds":["ETH"]}`, "ER-108", "blockchainIds"},
		{"addressFragment too long", `{"addressFragment":"` + strings.Repeat("a", 129) + `"}`, "ER-103", "addressFragment"},
		{"field outside the body", `{"sort":{"by":"id"}}`, "ER-108", "sort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, whitelistedPath, []byte(tt.body))
			if msg := wantError(t, r, http.StatusBadRequest, tt.wantCode); !strings.Contains(msg, tt.mention) {
				t.Errorf("message %q does not name %s", msg, tt.mention)
			}
		})
	}
}
