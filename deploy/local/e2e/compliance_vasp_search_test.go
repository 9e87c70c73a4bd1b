package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/services/compliance"
)

const vaspSearchPath = "/v3/api/compliance/vasps/search"

// vaspItem is an item of the VASP search.
type vaspItem struct {
	VaspID           string `json:"vaspId"`
	VaspName         string `json:"vaspName"`
	TravelRuleMethod string `json:"travelRuleMethod"`
	VaspCountry      string `json:"vaspCountry"`
	Valid            bool   `json:"valid"`
	UpdatedAt        string `json:"updatedAt"`
}

type vaspPage struct {
	Total int        `json:"total"`
	Items []vaspItem `json:"items"`
}

// searchVASPs sends the search as companyID's caller of role and decodes the answer strictly:
// exactly the documented fields.
func searchVASPs(t *testing.T, companyID, role string, body any) vaspPage {
	t.Helper()
	r := do(t, newClient(companyID, role), http.MethodPost, vaspSearchPath, mustJSON(t, body))
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	var got vaspPage
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	if got.Items == nil {
		t.Fatalf("answer %s has no items array", r.body)
	}
	return got
}

func vaspIDs(p vaspPage) []string {
	ids := []string{}
	for _, v := range p.Items {
		ids = append(ids, v.VaspID)
	}
	return ids
}

func TestVASPSearchVisibility(t *testing.T) {
	t.Parallel()
	withTestVASPs(t)
	tests := []struct {
		company, role string
		want, hidden  []string
	}{
		{demo.CompanyZTEST, viewer, []string{"VASP-001", "VASP-002", "VASP-004", "E2E-PAGE-1", "E2E-SHARED"}, []string{"VASP-003", "E2E-OFF", "E2E-HIDDEN"}},
		{demo.CompanyZTEST, company, []string{"VASP-001", "VASP-002", "VASP-004", "E2E-SHARED"}, []string{"VASP-003", "E2E-HIDDEN"}},
		{demo.CompanyZACME, maker, []string{"VASP-001", "VASP-003", "VASP-004", "E2E-OFF", "E2E-SHARED"}, []string{"VASP-002", "E2E-PAGE-1", "E2E-HIDDEN"}},
	}
	for _, tt := range tests {
		caller := tt.role
		if caller == company {
			caller = "company-level"
		}
		t.Run(tt.company+" "+caller, func(t *testing.T) {
			t.Parallel()
			got := searchVASPs(t, tt.company, tt.role, map[string]any{"paginationLimit": 1024})
			ids := vaspIDs(got)
			for _, id := range tt.want {
				if !slices.Contains(ids, id) {
					t.Errorf("%s missing from %v", id, ids)
				}
			}
			for _, id := range tt.hidden {
				if slices.Contains(ids, id) {
					t.Errorf("%s is restricted to other companies but listed", id)
				}
			}
			if got.Total != len(ids) || !slices.IsSorted(ids) {
				t.Errorf("total %d for %d items %v, want all items sorted by id", got.Total, len(ids), ids)
			}
			// Asking for another company's VASP by id finds nothing, as for an unknown id.
			if other := searchVASPs(t, tt.company, tt.role, map[string]any{"ids": tt.hidden}); other.Total != 0 {
				t.Errorf("search by hidden ids: %+v, want nothing", other)
			}
		})
	}
	t.Run("record of a demo VASP", func(t *testing.T) {
		got := searchVASPs(t, demo.CompanyZTEST, company, map[string]any{"ids": []string{"VASP-004"}})
		// VASP-004 is switched off by the operator, and ZTEST never switches it (only refused).
		want := vaspPage{Total: 1, Items: []vaspItem{{VaspID: "VASP-004", VaspName: "Dormant Exchange", TravelRuleMethod: "MANUAL", VaspCountry: "US"}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("search (-want +got):\n%s", diff)
		}
	})
}

func TestVASPSearchPages(t *testing.T) {
	t.Parallel()
	withTestVASPs(t)
	all := []string{"E2E-PAGE-1", "E2E-PAGE-2", "E2E-PAGE-3", "E2E-PAGE-4", "E2E-PAGE-5"}
	tests := []struct {
		name string
		give map[string]any
		want []string
	}{
		{"default limit", map[string]any{}, all},
		{"first page", map[string]any{"paginationLimit": 2}, all[:2]},
		{"second page", map[string]any{"paginationLimit": 2, "paginationOffset": 2}, all[2:4]},
		{"last partial page", map[string]any{"paginationLimit": 2, "paginationOffset": 4}, all[4:]},
		{"offset at the end", map[string]any{"paginationOffset": 5}, []string{}},
		{"offset far past the end", map[string]any{"paginationOffset": 1000}, []string{}},
		{"limit 1", map[string]any{"paginationLimit": 1}, all[:1]},
		{"limit 1024", map[string]any{"paginationLimit": 1024}, all},
		{"sort by id", map[string]any{"sort": map[string]string{"by": "id"}}, all},
		{"descending", map[string]any{"paginationLimit": 2, "sort": map[string]string{"by": "id", "order": "DESC"}}, []string{"E2E-PAGE-5", "E2E-PAGE-4"}},
		{"descending, second page", map[string]any{"paginationLimit": 2, "paginationOffset": 2, "sort": map[string]string{"order": "DESC"}}, []string{"E2E-PAGE-3", "E2E-PAGE-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.give["ids"] = all
			got := searchVASPs(t, demo.CompanyZTEST, maker, tt.give)
			if diff := cmp.Diff(tt.want, vaspIDs(got)); diff != "" || got.Total != len(all) {
				t.Errorf("ids (-want +got):\n%s total %d, want %d", diff, got.Total, len(all))
			}
		})
	}
}

func TestVASPSearchFilters(t *testing.T) {
	t.Parallel()
	withTestVASPs(t)
	tests := []struct {
		name string
		give map[string]any
		want []string
	}{
		{"ids or-ed", map[string]any{"ids": []string{"E2E-PAGE-3", "E2E-PAGE-1", "E2E-NONE"}}, []string{"E2E-PAGE-1", "E2E-PAGE-3"}},
		{"names exact", map[string]any{"names": []string{"E2E Page 2", "e2e page 4", "E2E Page"}}, []string{"E2E-PAGE-2"}},
		{"methods and ids and-ed", map[string]any{"ids": []string{"E2E-PAGE-1", "E2E-PAGE-2", "E2E-PAGE-4"}, "travelRuleMethods": []string{"MANUAL", "ZODIA"}}, []string{"E2E-PAGE-2", "E2E-PAGE-4"}},
		{"names and methods and-ed", map[string]any{"names": []string{"E2E Page 1", "E2E Page 2"}, "travelRuleMethods": []string{"TRUST"}}, []string{"E2E-PAGE-1"}},
		{"empty filters are no constraint", map[string]any{"ids": []string{"E2E-PAGE-5"}, "names": []string{}, "travelRuleMethods": []string{}}, []string{"E2E-PAGE-5"}},
		{"unhosted", map[string]any{"travelRuleMethods": []string{"UNHOSTED"}, "ids": []string{"E2E-SHARED", "E2E-PAGE-1"}}, []string{"E2E-SHARED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := searchVASPs(t, demo.CompanyZTEST, viewer, tt.give)
			if diff := cmp.Diff(tt.want, vaspIDs(got)); diff != "" || got.Total != len(tt.want) {
				t.Errorf("ids (-want +got):\n%s total %d", diff, got.Total)
			}
		})
	}
}

func TestVASPSearchRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		body      string
		wantCode  int
		wantER    string
		wantField string
	}{
		{"unknown travel-rule method", `{"travelRuleMethods":["TRUST","EMAIL"]}`, 400, "ER-108", "travelRuleMethods"},
		{"limit 0", `{"paginationLimit":0}`, 400, "ER-103", "paginationLimit"},
		{"limit 1025", `{"paginationLimit":1025}`, 400, "ER-103", "paginationLimit"},
		{"negative offset", `{"paginationOffset":-1}`, 400, "ER-103", "paginationOffset"},
		{"sort by name", `{"sort":{"by":"vaspName"}}`, 400, "ER-108", "sort.by"},
		{"sort order", `{"sort":{"by":"id","order":"UP"}}`, 400, "ER-108", "sort.order"},
		{"unknown body field", `{"vaspIds":["VASP-001"]}`, 400, "ER-108", "vaspIds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, vaspSearchPath, []byte(tt.body)), tt.wantCode, tt.wantER)
			if !bytes.Contains([]byte(msg), []byte(tt.wantField)) {
				t.Errorf("message %q does not name %s", msg, tt.wantField)
			}
		})
	}
}

// TestVASPSearchReflectsActivation: valid follows the company's switch (and the operator's),
// updatedAt is the time of the company's last change, and every change, but no repeat, is
// recorded in the activation audit.
func TestVASPSearchReflectsActivation(t *testing.T) {
	t.Parallel()
	withTestVASPs(t)
	// A VASP of this run alone, so that a repeated run (-count) starts from no choice.
	id := "E2E-ACT-" + strings.ToUpper(uuid.NewString()[:8])
	st := complianceStore(t)
	if err := st.PutVASP(t.Context(), compliance.VASP{ID: id, Name: "E2E Activation", TravelRuleMethod: compliance.TravelRuleZodia,
		Country: "DE", Active: true, RestrictedCompanies: []string{demo.CompanyZACME}}); err != nil {
		t.Fatal(err)
	}
	zacme := newClient(demo.CompanyZACME, company)
	find := func() vaspItem {
		t.Helper()
		got := searchVASPs(t, demo.CompanyZACME, viewer, map[string]any{"ids": []string{id, "E2E-OFF"}})
		if got.Total != 2 || got.Items[0].VaspID != id || got.Items[1].Valid {
			t.Fatalf("search: %+v, want %s and the operator-off E2E-OFF (never valid)", got, id)
		}
		return got.Items[0]
	}
	if before := find(); !before.Valid || before.UpdatedAt != "" {
		t.Fatalf("before any change: %+v, want valid by default and no updatedAt", before)
	}
	off := setVASP(t, zacme, id, false)
	if got := find(); got.Valid || got.UpdatedAt != off.UpdatedAt {
		t.Errorf("after deactivation: %+v, want not valid, updatedAt %s", got, off.UpdatedAt)
	}
	time.Sleep(5 * time.Millisecond) // timestamps have millisecond precision
	if again := setVASP(t, newClient(demo.CompanyZACME, maker), id, false); again.UpdatedAt != off.UpdatedAt {
		t.Errorf("a repeated deactivation moved updatedAt: %s, was %s", again.UpdatedAt, off.UpdatedAt)
	}
	on := setVASP(t, newClient(demo.CompanyZACME, checker), id, true)
	if got := find(); !got.Valid || got.UpdatedAt != on.UpdatedAt || updatedAt(t, on).Before(updatedAt(t, off)) {
		t.Errorf("after reactivation: %+v, want valid, updatedAt %s", got, on.UpdatedAt)
	}
	if ztest := searchVASPs(t, demo.CompanyZTEST, company, map[string]any{"ids": []string{id}}); ztest.Total != 0 {
		t.Errorf("ZTEST sees ZACME's VASP: %+v", ztest)
	}
	history, err := st.ActivationHistory(t.Context(), demo.CompanyZACME, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range history {
		got = append(got, c.By+" "+map[bool]string{true: "on", false: "off"}[c.Active]+" "+c.At.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	want := []string{demo.CompanyZACME + " off " + off.UpdatedAt, demo.UserEmail("zacme", checker) + " on " + on.UpdatedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("activation audit (-want +got):\n%s", diff)
	}
}
