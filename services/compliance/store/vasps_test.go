package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/compliance/store"
	"github.com/zcustody/suite/services/internal/page"
)

// registry stores five VASPs: V1 and V4 for everyone (V4 switched off by the operator), V2
// only for ZT, V3 only for OTHER, V5 for ZT and OTHER.
func registry(t *testing.T) *store.Store {
	t.Helper()
	st := newStore(t)
	for _, v := range []compliance.VASP{
		{ID: "V1", Name: "One", TravelRuleMethod: compliance.TravelRuleTrust, Country: "GB", Active: true},
		{ID: "V2", Name: "Two", TravelRuleMethod: compliance.TravelRuleManual, Country: "CH", Active: true, RestrictedCompanies: []string{"ZT"}},
		{ID: "V3", Name: "Three", TravelRuleMethod: compliance.TravelRuleZodia, Country: "SG", Active: true, RestrictedCompanies: []string{"OTHER"}},
		{ID: "V4", Name: "Four", TravelRuleMethod: compliance.TravelRuleManual, Country: "US"},
		{ID: "V5", Name: "Five", TravelRuleMethod: compliance.TravelRuleUnhosted, Active: true, RestrictedCompanies: []string{"OTHER", "ZT"}},
	} {
		if err := st.PutVASP(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestSearchVASPs(t *testing.T) {
	t.Parallel()
	st := registry(t)
	first := page.Page{Limit: 10}
	tests := []struct {
		name      string
		give      compliance.VASPFilter
		wantIDs   []string
		wantTotal int64
	}{
		{"visible to ZT", compliance.VASPFilter{CompanyID: "ZT", Page: first}, []string{"V1", "V2", "V4", "V5"}, 4},
		{"visible to OTHER", compliance.VASPFilter{CompanyID: "OTHER", Page: first}, []string{"V1", "V3", "V4", "V5"}, 4},
		{"a company of no list sees the open ones", compliance.VASPFilter{CompanyID: "NEW", Page: first}, []string{"V1", "V4"}, 2},
		{"ids or-ed, restricted ones hidden", compliance.VASPFilter{CompanyID: "ZT", IDs: []string{"V3", "V2", "V1"}, Page: first}, []string{"V1", "V2"}, 2},
		{"names exact", compliance.VASPFilter{CompanyID: "ZT", Names: []string{"Two", "one", "Three"}, Page: first}, []string{"V2"}, 1},
		{"methods", compliance.VASPFilter{CompanyID: "ZT", TravelRuleMethods: []string{compliance.TravelRuleManual}, Page: first}, []string{"V2", "V4"}, 2},
		{"filters and-ed", compliance.VASPFilter{CompanyID: "ZT", IDs: []string{"V1", "V2"}, TravelRuleMethods: []string{compliance.TravelRuleManual}, Page: first}, []string{"V2"}, 1},
		{"page", compliance.VASPFilter{CompanyID: "ZT", Page: page.Page{Limit: 2, Offset: 1}}, []string{"V2", "V4"}, 4},
		{"descending", compliance.VASPFilter{CompanyID: "ZT", Page: page.Page{Limit: 3, Desc: true}}, []string{"V5", "V4", "V2"}, 4},
		{"last partial page", compliance.VASPFilter{CompanyID: "ZT", Page: page.Page{Limit: 3, Offset: 3}}, []string{"V5"}, 4},
		{"full last page", compliance.VASPFilter{CompanyID: "ZT", Page: page.Page{Limit: 2, Offset: 2}}, []string{"V4", "V5"}, 4},
		{"offset past the end", compliance.VASPFilter{CompanyID: "ZT", Page: page.Page{Limit: 10, Offset: 4}}, []string{}, 4},
		{"no match", compliance.VASPFilter{CompanyID: "ZT", IDs: []string{"V9"}, Page: first}, []string{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, total, err := st.SearchVASPs(context.Background(), tt.give)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, v := range got {
				ids = append(ids, v.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" || total != tt.wantTotal {
				t.Errorf("ids (-want +got):\n%s total %d, want %d", diff, total, tt.wantTotal)
			}
		})
	}
}

func TestSearchVASPsReturnsTheRecord(t *testing.T) {
	t.Parallel()
	st := registry(t)
	got, _, err := st.SearchVASPs(context.Background(), compliance.VASPFilter{CompanyID: "ZT", IDs: []string{"V2"}, Page: page.Page{Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []compliance.VASP{{ID: "V2", Name: "Two", TravelRuleMethod: compliance.TravelRuleManual, Country: "CH", Active: true, RestrictedCompanies: []string{"ZT"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SearchVASPs() (-want +got):\n%s", diff)
	}
}

func TestActivations(t *testing.T) {
	t.Parallel()
	st := registry(t)
	ctx := context.Background()
	off, err := st.SetActivation(ctx, "ZT", "V1", false, "m@zt")
	if err != nil {
		t.Fatal(err)
	}
	on, err := st.SetActivation(ctx, "ZT", "V2", true, "ZT")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetActivation(ctx, "OTHER", "V4", false, "o"); err != nil {
		t.Fatal(err)
	}
	got, err := st.Activations(ctx, "ZT", []string{"V1", "V2", "V4", "V9"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]compliance.Activation{"V1": off, "V2": on}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Activations() (-want +got):\n%s", diff)
	}
	if none, err := st.Activations(ctx, "ZT", nil); err != nil || len(none) != 0 {
		t.Errorf("Activations(no ids) = %v, %v; want empty", none, err)
	}
}
