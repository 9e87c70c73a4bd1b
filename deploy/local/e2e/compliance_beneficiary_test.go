package e2e_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
)

// Catalog services of the beneficiaries.
const (
	createBeneficiary     = "0x0007-004"
	updateBeneficiary     = "0x0007-005"
	deactivateBeneficiary = "0x0007-006"
)

var zacmeBeneficiaryID = regexp.MustCompile(`^BNF-ZACME-[A-Z0-9]{10}$`)

func beneficiaryAddress(line1, city, country string) map[string]any {
	return map[string]any{"line1": line1, "city": city, "country": country}
}

// beneficiaryPayload is a 0x0007-004 payload as the reference guide shows it.
func beneficiaryPayload(name string) map[string]any {
	return map[string]any{"entityType": "CORPORATE", "beneficiaryName": name,
		"registeredAddress": beneficiaryAddress("1 Main Street", "Berlin", "DE"),
		"operatingAddress":  beneficiaryAddress("Bahnhofstrasse 1", "Zürich", "CH")}
}

// newBeneficiary creates a ZACME beneficiary through the service desk: the maker's signed
// confirmation completes it, no checker needed. It returns the beneficiary id.
func newBeneficiary(t *testing.T, name string) string {
	t.Helper()
	got := create(t, demo.CompanyZACME, maker, createBody(t, createBeneficiary, beneficiaryPayload(name)))
	if len(got.PluginDetail.EntityID) != 1 || !zacmeBeneficiaryID.MatchString(got.PluginDetail.EntityID[0]) {
		t.Fatalf("entityId %v, want one BNF-ZACME-<10>", got.PluginDetail.EntityID)
	}
	wantStatus(t, act(t, demo.CompanyZACME, maker, got.RequestID, "", ""), "COMPLETED")
	return got.PluginDetail.EntityID[0]
}

// makerChecker creates a request as ZACME's maker, confirms it and has the checker approve.
func makerChecker(t *testing.T, serviceID string, payload map[string]any) (createAnswer, response) {
	t.Helper()
	got := create(t, demo.CompanyZACME, maker, createBody(t, serviceID, payload))
	wantStatus(t, act(t, demo.CompanyZACME, maker, got.RequestID, "", ""), "PENDING AUTHORISATION")
	return got, act(t, demo.CompanyZACME, checker, got.RequestID, "Approve", "")
}

func wantBeneficiary(t *testing.T, id, name string, active bool) {
	t.Helper()
	got, err := checkBeneficiary(t, demo.CompanyZACME, id)
	if err != nil {
		t.Fatalf("CheckBeneficiary(%s): %v", id, err)
	}
	if got.GetBeneficiaryId() != id || got.GetBeneficiaryName() != name || got.GetActive() != active {
		t.Errorf("CheckBeneficiary(%s) = %v, want name %q active %v", id, got, name, active)
	}
}

func TestBeneficiaryCreateNeedsNoChecker(t *testing.T) {
	t.Parallel()
	name := "Supplier " + uuid.NewString()[:8]
	got := create(t, demo.CompanyZACME, maker, createBody(t, createBeneficiary, beneficiaryPayload(name)))
	id := got.PluginDetail.EntityID[0]
	wantDetails := []map[string]any{{"beneficiaryId": id, "entityType": "CORPORATE", "beneficiaryName": name, "legalName": name,
		"registeredAddress": beneficiaryAddress("1 Main Street", "Berlin", "DE"), "operatingAddress": beneficiaryAddress("Bahnhofstrasse 1", "Zürich", "CH")}}
	if diff := cmp.Diff(wantDetails, got.PluginDetail.Details); diff != "" || !zacmeBeneficiaryID.MatchString(id) {
		t.Errorf("entity %q, details (-want +got):\n%s", id, diff)
	}
	if s := requestStatus(t, demo.CompanyZACME, got.RequestID); s != "PENDING CONFIRMATION" {
		t.Fatalf("status %q after create, want PENDING CONFIRMATION", s)
	}
	if _, err := checkBeneficiary(t, demo.CompanyZACME, id); status.Code(err) != codes.NotFound {
		t.Errorf("before confirmation the beneficiary exists: %v", err)
	}
	wantStatus(t, act(t, demo.CompanyZACME, maker, got.RequestID, "", ""), "COMPLETED")
	wantBeneficiary(t, id, name, true)
	if item := search(t, demo.CompanyZACME, viewer, map[string]any{"requestIds": []string{got.RequestID}}); item.Total != 1 || item.Items[0].EntityID != id {
		t.Errorf("search: %+v, want the request with entityId %s", item, id)
	}
	if _, err := checkBeneficiary(t, demo.CompanyZTEST, id); status.Code(err) != codes.NotFound {
		t.Errorf("ZTEST asking for ZACME's beneficiary: %v, want NotFound", err)
	}
}

// TestBeneficiaryUpdateAndDeactivate: both need maker and checker; a deactivated beneficiary
// can be neither updated nor deactivated again (ER-113), and an update authorised before the
// deactivation fails when it is executed after it.
func TestBeneficiaryUpdateAndDeactivate(t *testing.T) {
	t.Parallel()
	name := "Partner " + uuid.NewString()[:8]
	id := newBeneficiary(t, name)
	renamed := name + " Holding"
	created, approved := makerChecker(t, updateBeneficiary, map[string]any{"beneficiaryId": id, "beneficiaryName": renamed,
		"registeredAddress": beneficiaryAddress("2 Rue X", "Paris", "FR")})
	wantStatus(t, approved, "COMPLETED")
	if d := created.PluginDetail.Details; len(d) != 1 || d[0]["legalName"] != renamed || d[0]["status"] != "ACTIVE" {
		t.Errorf("update details %v, want the renamed, active beneficiary", d)
	}
	wantBeneficiary(t, id, renamed, true)
	// Authorised later than the deactivation below, validated while still active.
	late := create(t, demo.CompanyZACME, maker, createBody(t, updateBeneficiary, map[string]any{"beneficiaryId": id, "beneficiaryName": "Too Late"}))
	wantStatus(t, act(t, demo.CompanyZACME, maker, late.RequestID, "", ""), "PENDING AUTHORISATION")
	_, approved = makerChecker(t, deactivateBeneficiary, map[string]any{"beneficiaryId": []string{id}})
	wantStatus(t, approved, "COMPLETED")
	wantBeneficiary(t, id, renamed, false)
	wantStatus(t, act(t, demo.CompanyZACME, checker, late.RequestID, "Approve", ""), "FAILED")
	wantBeneficiary(t, id, renamed, false)
	for _, tt := range []struct{ service, name string }{{updateBeneficiary, "update"}, {deactivateBeneficiary, "deactivate"}} {
		payload := map[string]any{"beneficiaryId": id}
		if tt.service == updateBeneficiary {
			payload["beneficiaryName"] = "Again"
		}
		r := do(t, newClient(demo.CompanyZACME, maker), http.MethodPost, createPath, createBody(t, tt.service, payload))
		if msg := wantError(t, r, http.StatusConflict, "ER-113"); !strings.Contains(msg, id) {
			t.Errorf("%s of a deactivated beneficiary: message %q does not name %s", tt.name, msg, id)
		}
	}
}

func TestBeneficiaryRequestsRefused(t *testing.T) {
	t.Parallel()
	name := "Refusals " + uuid.NewString()[:8]
	id := newBeneficiary(t, name)
	valid := beneficiaryPayload("Valid Name")
	change := func(key string, value any) map[string]any {
		p := map[string]any{}
		for k, v := range valid {
			p[k] = v
		}
		if value == nil {
			delete(p, key)
			return p
		}
		p[key] = value
		return p
	}
	tests := []struct {
		name       string
		company    string
		service    string
		payload    map[string]any
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"missing entityType", demo.CompanyZACME, createBeneficiary, change("entityType", nil), 400, "ER-101", "entityType"},
		{"unknown entityType", demo.CompanyZACME, createBeneficiary, change("entityType", "TRUST"), 400, "ER-108", "entityType"},
		{"missing name", demo.CompanyZACME, createBeneficiary, change("beneficiaryName", nil), 400, "ER-101", "beneficiaryName"},
		{"name too long", demo.CompanyZACME, createBeneficiary, change("beneficiaryName", strings.Repeat("n", 129)), 400, "ER-103", "beneficiaryName"},
		{"blank name", demo.CompanyZACME, createBeneficiary, change("beneficiaryName", "   "), 400, "ER-107", "beneficiaryName"},
		{"missing registered address", demo.CompanyZACME, createBeneficiary, change("registeredAddress", nil), 400, "ER-101", "registeredAddress"},
		{"missing city", demo.CompanyZACME, createBeneficiary, change("registeredAddress", map[string]any{"line1": "1 Main Street", "country": "DE"}), 400, "ER-101", "registeredAddress.city"},
		{"country not ISO", demo.CompanyZACME, createBeneficiary, change("registeredAddress", beneficiaryAddress("1 Main Street", "London", "UK")), 400, "ER-108", "registeredAddress.country"},
		{"country alpha-3", demo.CompanyZACME, createBeneficiary, change("operatingAddress", beneficiaryAddress("1 Main Street", "Berlin", "DEU")), 400, "ER-108", "operatingAddress.country"},
		{"unknown address field", demo.CompanyZACME, createBeneficiary, change("operatingAddress", map[string]any{"line1": "l", "city": "c", "country": "DE", "zipCode": "1"}), 400, "ER-108", "operatingAddress.zipCode"},
		{"address not an object", demo.CompanyZACME, createBeneficiary, change("registeredAddress", "1 Main Street, Berlin"), 400, "ER-108", "registeredAddress"},
		{"field outside the template", demo.CompanyZACME, createBeneficiary, change("legalName", "Other"), 400, "ER-108", "legalName"},
		{"update unknown beneficiary", demo.CompanyZACME, updateBeneficiary, map[string]any{"beneficiaryId": "BNF-ZACME-UNKNOWN000", "beneficiaryName": "X"}, 404, "ER-102", "BNF-ZACME-UNKNOWN000"},
		{"update with nothing to change", demo.CompanyZACME, updateBeneficiary, map[string]any{"beneficiaryId": id}, 400, "ER-112", "beneficiaryName"},
		{"update another company's", demo.CompanyZTEST, updateBeneficiary, map[string]any{"beneficiaryId": id, "beneficiaryName": "X"}, 404, "ER-102", id},
		{"deactivate another company's", demo.CompanyZTEST, deactivateBeneficiary, map[string]any{"beneficiaryId": id}, 404, "ER-102", id},
		{"deactivate without id", demo.CompanyZACME, deactivateBeneficiary, map[string]any{}, 400, "ER-101", "beneficiaryId"},
	}
	e2e := uuid.NewString() // one endToEndId: none of the refused creates may store a request
	t.Run("refusals", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				body := mustJSON(t, map[string]any{"serviceId": tt.service, "payload": tt.payload, "endToEndId": e2e})
				msg := wantError(t, do(t, newClient(tt.company, maker), http.MethodPost, createPath, body), tt.wantStatus, tt.wantCode)
				if !strings.Contains(msg, tt.wantField) {
					t.Errorf("message %q does not name %s", msg, tt.wantField)
				}
			})
		}
	})
	for _, c := range []string{demo.CompanyZACME, demo.CompanyZTEST} {
		if got := search(t, c, maker, map[string]any{"endToEndIds": []string{e2e}}); got.Total != 0 {
			t.Errorf("refused creates left %d requests of %s behind", got.Total, c)
		}
	}
	wantBeneficiary(t, id, name, true) // the refused changes left it as it was
}

// TestWalletOwnerIsTheCompanysBeneficiary: a custody wallet names as its owner
// (walletOwnerId, which its id embeds) an active beneficiary of the requesting company only:
// another company's, a made-up id (404 ER-102) and a deactivated one (409 ER-113) are refused
// when the request is made.
func TestWalletOwnerIsTheCompanysBeneficiary(t *testing.T) {
	t.Parallel()
	got := create(t, demo.CompanyZTEST, maker, createBody(t, createBeneficiary, beneficiaryPayload("Dormant "+uuid.NewString()[:8])))
	wantStatus(t, act(t, demo.CompanyZTEST, maker, got.RequestID, "", ""), "COMPLETED")
	dormant := got.PluginDetail.EntityID[0]
	deactivate := create(t, demo.CompanyZTEST, maker, createBody(t, deactivateBeneficiary, map[string]any{"beneficiaryId": []string{dormant}}))
	wantStatus(t, authorise(t, deactivate.RequestID), "COMPLETED")

	wallet := func(owner string) []byte {
		return createBody(t, "0x0013-001", map[string]any{"name": []string{"Owned wallet"}, "currency": []string{"BTC"},
			"currencyId": []string{"btc-btc"}, "walletOwnerId": []string{owner}})
	}
	for _, tt := range []struct {
		name, owner string
		status      int
		code        string
	}{
		{"another company's beneficiary", demo.BeneficiaryZACME, http.StatusNotFound, "ER-102"},
		{"a made-up beneficiary", "BNF-ZTEST-NOSUCH0000", http.StatusNotFound, "ER-102"},
		{"a deactivated beneficiary", dormant, http.StatusConflict, "ER-113"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, wallet(tt.owner)), tt.status, tt.code)
			if !strings.Contains(msg, tt.owner) && !strings.Contains(msg, "walletOwnerId") {
				t.Errorf("message %q names neither the field nor %s", msg, tt.owner)
			}
		})
	}
	own := create(t, demo.CompanyZTEST, maker, wallet(demo.BeneficiaryZTEST))
	if ids := own.PluginDetail.EntityID; len(ids) != 1 || !strings.HasPrefix(ids[0], demo.CompanyZTEST+"-"+demo.BeneficiaryZTEST+"-") {
		t.Errorf("a wallet of the company's own beneficiary reserved %v", ids)
	}
}
