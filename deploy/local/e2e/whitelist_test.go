package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
)

// TestWhitelistLifecycle whitelists an address for ZTEST under VASP-001 and deactivates it,
// each through the service desk (maker creates and confirms, checker approves).
//
// It does not run in parallel, on purpose: TestVASPCompaniesAreIndependent (vasp_test.go)
// switches ZTEST's VASP-001 off for a moment, and ZTEST has no other VASP that stays active
// while the parallel tests run (VASP-002 belongs to TestVASPActivation). A test without
// t.Parallel() finishes before any parallel test starts.
func TestWhitelistLifecycle(t *testing.T) {
	addr := wlETH(t)
	only := map[string]any{"addresses": []string{addr}}
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0007-007", wlPayload(addr, "ETH", "VASP-001")))
	if len(got.PluginDetail.EntityID) != 1 || uuid.Validate(got.PluginDetail.EntityID[0]) != nil {
		t.Fatalf("pluginDetail.entityId = %v, want one UUID", got.PluginDetail.EntityID)
	}
	if d := got.PluginDetail.Details; len(d) != 1 || d[0]["managingVasp"] != "Global Exchange Ltd" || d[0]["cryptoAddress"] != addr {
		t.Errorf("pluginDetail.details = %v, want the address and its VASP's name", d)
	}
	if before := listWhitelisted(t, demo.CompanyZTEST, only); before.Total != 0 {
		t.Fatalf("whitelisted before approval: %+v", before)
	}
	wlComplete(t, demo.CompanyZTEST, got.RequestID)

	after := listWhitelisted(t, demo.CompanyZTEST, only)
	want := whitelistedPage{Total: 1, Items: []whitelistedItem{{Address: addr, AddressPurpose: []string{"INCOMING", "OUTGOING"},
		Status: "ACTIVE", Blockchain: "ETH", BlockchainID: "eth-eth"}}}
	if len(after.Items) == 1 {
		want.Items[0].CreatedAt = after.Items[0].CreatedAt
	}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Fatalf("endpoint 9 after approval (-want +got):\n%s", diff)
	}
	if theirs := listWhitelisted(t, demo.CompanyZACME, only); theirs.Total != 0 || len(theirs.Items) != 0 {
		t.Errorf("ZACME sees ZTEST's address: %+v", theirs)
	}

	t.Run("the same address again is refused", func(t *testing.T) {
		upper := "0x" + strings.ToUpper(addr[2:]) // the same ETH address
		r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, createBody(t, "0x0007-007", wlPayload(upper, "ETH", "VASP-001")))
		if msg := wantError(t, r, http.StatusConflict, "ER-104"); !strings.Contains(msg, "already whitelisted") {
			t.Errorf("message %q does not say the address is already whitelisted", msg)
		}
	})
	t.Run("another company cannot deactivate it", func(t *testing.T) {
		body := createBody(t, "0x0007-008", map[string]any{"address": []string{addr}, "blockchain": []string{"ETH"}})
		wantError(t, do(t, newClient(demo.CompanyZACME, maker), http.MethodPost, createPath, body), http.StatusNotFound, "ER-102")
	})

	wlDeactivate(t, demo.CompanyZTEST, addr, "ETH")
	deactivated := listWhitelisted(t, demo.CompanyZTEST, only)
	if deactivated.Total != 1 || deactivated.Items[0].Status != "DEACTIVATED" || deactivated.Items[0].CreatedAt != want.Items[0].CreatedAt {
		t.Fatalf("endpoint 9 after deactivation = %+v, want the address DEACTIVATED with its createdAt", deactivated)
	}
	t.Run("deactivating it again is refused", func(t *testing.T) {
		body := createBody(t, "0x0007-008", map[string]any{"address": []string{addr}, "blockchain": []string{"ETH"}})
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, body), http.StatusNotFound, "ER-102")
	})
	t.Run("once deactivated it can be whitelisted again", func(t *testing.T) {
		create(t, demo.CompanyZTEST, maker, createBody(t, "0x0007-007", wlPayload(addr, "ETH", "VASP-001")))
	})
}

// TestWhitelistCreateRefused: every refusal of 0x0007-007 and 0x0007-008 at create, with its
// HTTP status and code, and a message naming the field or the id. Payload errors come before
// any compliance call; the compliance refusals use VASPs whose state no test changes
// (VASP-004 is operator-deactivated, VASP-003 is restricted to ZACME and kept active there).
func TestWhitelistCreateRefused(t *testing.T) {
	t.Parallel()
	eth := wlETH(t)
	with := func(change map[string]any, drop ...string) map[string]any {
		p := wlPayload(eth, "ETH", "VASP-001")
		for k, v := range change {
			p[k] = v
		}
		for _, k := range drop {
			delete(p, k)
		}
		return p
	}
	tests := []struct {
		name       string
		company    string
		service    string
		payload    map[string]any
		wantStatus int
		wantCode   string
		mention    string
	}{
		{"address missing", demo.CompanyZTEST, "0x0007-007", with(nil, "address"), 400, "ER-101", "address"},
		{"address blank", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"address": []string{" "}}), 400, "ER-107", "address"},
		{"address too long", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"address": strings.Repeat("a", 129)}), 400, "ER-103", "address"},
		{"ETH checksum", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"address": "0x0FadE45Fd36B03250AE57750c0D06243a65aCdE9"}), 400, "ER-108", "address"},
		{"BTC address on ETH", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"address": wlSpareBTC}), 400, "ER-108", "address"},
		{"XLM address on XRP", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"address": wlSpareXLM, "blockchain": "XRP"}), 400, "ER-108", "address"},
		{"XRP checksum", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"address": wlSpareXRP[:33] + "L", "blockchain": "XRP"}), 400, "ER-108", "address"},
		{"blockchain missing", demo.CompanyZTEST, "0x0007-007", with(nil, "blockchain"), 400, "ER-101", "blockchain"},
		{"blockchain unsupported", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"blockchain": []string{"SOL"}}), 400, "ER-111", "blockchain"},
		{"purpose missing", demo.CompanyZTEST, "0x0007-007", with(nil, "addressPurpose"), 400, "ER-101", "addressPurpose"},
		// The service desk leaves empty values out of the payload (canonical form): an empty
		// list or string reaches the owner as a missing field.
		{"purpose empty", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"addressPurpose": []string{}}), 400, "ER-101", "addressPurpose"},
		{"purpose blank", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"addressPurpose": []string{" "}}), 400, "ER-107", "addressPurpose"},
		{"purpose a trailing comma", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"addressPurpose": []string{"INCOMING,"}}), 400, "ER-108", "addressPurpose"},
		{"purpose unknown", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"addressPurpose": []string{"INCOMING", "SIDEWAYS"}}), 400, "ER-108", "addressPurpose"},
		{"vaspId missing", demo.CompanyZTEST, "0x0007-007", with(nil, "vaspId"), 400, "ER-101", "vaspId"},
		{"vaspId empty", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"vaspId": ""}), 400, "ER-101", "vaspId"},
		{"vaspId blank", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"vaspId": []string{"  "}}), 400, "ER-107", "vaspId"},
		{"hostedAddress not a boolean", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"hostedAddress": "yes"}), 400, "ER-108", "hostedAddress"},
		{"notes too long", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"notes": strings.Repeat("n", 257)}), 400, "ER-103", "notes"},
		{"field outside the template", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"currency": "ETH"}), 400, "ER-108", "currency"},
		{"operator-deactivated VASP", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"vaspId": "VASP-004"}), 409, "ER-113", "VASP-004"},
		{"unknown VASP", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"vaspId": "VASP-999"}), 404, "ER-102", "VASP-999"},
		{"another company's VASP", demo.CompanyZTEST, "0x0007-007", with(map[string]any{"vaspId": "VASP-003"}), 404, "ER-102", "VASP-003"},
		{"unknown beneficiary", demo.CompanyZACME, "0x0007-007", with(map[string]any{"vaspId": "VASP-003", "beneficiaryId": "BNF-ZACME-NOSUCH0000"}), 404, "ER-102", "BNF-ZACME-NOSUCH0000"},
		{"another company's beneficiary", demo.CompanyZACME, "0x0007-007", with(map[string]any{"vaspId": "VASP-003", "beneficiaryId": "BNF-ZTEST-DEMO000001"}), 404, "ER-102", "BNF-ZTEST-DEMO000001"},
		{"deactivate: blockchain missing", demo.CompanyZTEST, "0x0007-008", map[string]any{"address": eth}, 400, "ER-101", "blockchain"},
		{"deactivate: address format", demo.CompanyZTEST, "0x0007-008", map[string]any{"address": eth, "blockchain": "XLM"}, 400, "ER-108", "address"},
		{"deactivate: never whitelisted", demo.CompanyZTEST, "0x0007-008", map[string]any{"address": eth, "blockchain": "ETH"}, 404, "ER-102", eth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(tt.company, maker), http.MethodPost, createPath, createBody(t, tt.service, tt.payload))
			if msg := wantError(t, r, tt.wantStatus, tt.wantCode); !strings.Contains(msg, tt.mention) {
				t.Errorf("message %q does not name %s", msg, tt.mention)
			}
		})
	}
}

// TestWhitelistEveryBlockchain: a valid address of each blockchain passes the create (the
// requests are left pending: nothing is whitelisted).
func TestWhitelistEveryBlockchain(t *testing.T) {
	t.Parallel()
	for chain, addr := range map[string]string{"BTC": strings.ToUpper(wlSpareBTC), "ETH": wlETH(t), "XLM": wlSpareXLM, "XRP": wlSpareXRP} {
		t.Run(chain, func(t *testing.T) {
			t.Parallel()
			got := create(t, demo.CompanyZACME, maker, createBody(t, "0x0007-007", wlPayload(addr, chain, "VASP-003", "INCOMING")))
			if d := got.PluginDetail.Details; len(d) != 1 || d[0]["blockchainId"] != strings.ToLower(chain)+"-"+strings.ToLower(chain) {
				t.Errorf("pluginDetail.details = %v", d)
			}
		})
	}
}

// TestWhitelistUnderBeneficiary: a beneficiary of the company (compliance's demo
// beneficiary of ZACME) is checked and named in the create's details.
func TestWhitelistUnderBeneficiary(t *testing.T) {
	t.Parallel()
	p := wlPayload(wlFresh(t, "XRP"), "XRP", "VASP-003")
	p["beneficiaryId"] = []string{"BNF-ZACME-DEMO000001"}
	got := create(t, demo.CompanyZACME, maker, createBody(t, "0x0007-007", p))
	d := got.PluginDetail.Details
	if len(d) != 1 || d[0]["beneficiaryId"] != "BNF-ZACME-DEMO000001" || d[0]["beneficiaryName"] != "Helvetia Metals AG" ||
		d[0]["managingVasp"] != "Acme Partner Brokerage" {
		t.Errorf("pluginDetail.details = %v, want the beneficiary and VASP named", d)
	}
}
