package servicedesk_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/servicedesk"
)

func TestParseProductID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    int32
		wantErr bool
	}{
		{give: "0x0013", want: 19},
		{give: "0x13", want: 19},
		{give: "19", want: 19},
		{give: "0X0013", want: 19},
		{give: "0x0007", want: 7},
		{give: "0x0000", want: 0},
		{give: "0x00ff", want: 255},
		{give: "", wantErr: true},
		{give: "0x", wantErr: true},
		{give: "abc", wantErr: true},
		{give: "-1", wantErr: true},
		{give: "0x-13", wantErr: true},
		{give: "0xZZ", wantErr: true},
		{give: "0x0013-001", wantErr: true},
		{give: " 19", wantErr: true},
		{give: "0x100000000", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := servicedesk.ParseProductID(tt.give)
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParseProductID(%q) = %d, want an error", tt.give, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseProductID(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
			}
		})
	}
}

func TestProductHex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give int32
		want string
	}{
		{give: 19, want: "0x0013"},
		{give: 3, want: "0x0003"},
		{give: 0x0014, want: "0x0014"},
		{give: 255, want: "0x00FF"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			got := servicedesk.ProductHex(tt.give)
			if got != tt.want {
				t.Errorf("ProductHex(%d) = %q, want %q", tt.give, got, tt.want)
			}
			if back, err := servicedesk.ParseProductID(got); err != nil || back != tt.give {
				t.Errorf("ParseProductID(ProductHex(%d)) = %d, %v; want the id back", tt.give, back, err)
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	catalog := servicedesk.Catalog()
	if len(catalog) != 15 {
		t.Fatalf("Catalog() has %d services, want the contract's 12, the trading wallet withdrawal, the ledger reversal and the policy change", len(catalog))
	}
	owners := []string{"servicedesk", "trading", "interchange", "custody", "compliance"}
	ids := map[string]bool{}
	for _, s := range catalog {
		if ids[s.ID] {
			t.Errorf("id %s appears twice", s.ID)
		}
		ids[s.ID] = true
	}
	for _, s := range catalog {
		t.Run(s.ID, func(t *testing.T) {
			t.Parallel()
			prefix, _, ok := strings.Cut(s.ID, "-")
			if !ok || prefix != servicedesk.ProductHex(s.ProductID) {
				t.Errorf("id %s does not start with ProductHex(%d) = %s", s.ID, s.ProductID, servicedesk.ProductHex(s.ProductID))
			}
			if !slices.Contains(servicedesk.Products, s.Product) {
				t.Errorf("product %q is not one of %v", s.Product, servicedesk.Products)
			}
			if !slices.Contains(servicedesk.RequestTypes, s.RequestType) {
				t.Errorf("request type %q is not one of %v", s.RequestType, servicedesk.RequestTypes)
			}
			if !slices.Contains(owners, s.Owner) {
				t.Errorf("owner %q is not one of %v", s.Owner, owners)
			}
			if s.Name == "" || s.Description == "" || s.Expiry <= 0 {
				t.Errorf("service %+v lacks a name, description or expiry", s)
			}
			var tmpl map[string][]string
			if err := json.Unmarshal([]byte(s.Template), &tmpl); err != nil || len(tmpl) == 0 {
				t.Errorf("template %s is not a non-empty JSON object of string arrays: %v", s.Template, err)
			}
			for k, v := range tmpl {
				if len(v) == 0 {
					t.Errorf("template key %s has no values", k)
				}
			}
		})
	}
}

// TestCatalogMatchesTheRegistry: the catalog holds exactly the registered services, with
// the registry's product, name, request type and owner.
func TestCatalogMatchesTheRegistry(t *testing.T) {
	t.Parallel()
	var want, got []catalog.Entry
	want = catalog.Entries()
	for _, s := range servicedesk.Catalog() {
		got = append(got, catalog.Entry{ID: s.ID, Product: s.Product, ProductID: s.ProductID, Name: s.Name, RequestType: s.RequestType, Owner: s.Owner})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Catalog() against the registry (-want +got):\n%s", diff)
	}
	if svc, ok := servicedesk.Lookup("0x0003-003"); !ok || !svc.VenueOnly {
		t.Errorf("Lookup(0x0003-003) = %+v, %v; want the venue-only settlement instruction", svc, ok)
	}
}

func TestCatalogChecker(t *testing.T) {
	t.Parallel()
	for _, s := range servicedesk.Catalog() {
		want := s.ID != "0x0007-004" // beneficiary creation: the maker's confirmation completes it
		if s.NeedsChecker != want {
			t.Errorf("%s NeedsChecker = %v, want %v", s.ID, s.NeedsChecker, want)
		}
	}
}

func TestCatalogIsACopy(t *testing.T) {
	t.Parallel()
	a := servicedesk.Catalog()
	a[0].ID = "changed"
	if b := servicedesk.Catalog(); b[0].ID == "changed" {
		t.Error("changing one Catalog() result changed the next one")
	}
}
