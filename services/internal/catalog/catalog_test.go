package catalog_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/internal/catalog"
)

// TestRegistry states the contract's service ids and their owners here, apart from the
// registry: changing an id, moving a service to another owner, or adding one without
// changing this table fails.
func TestRegistry(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"0x0003-001": "trading", "0x0003-002": "trading", "0x0009-001": "trading",
		"0x0003-003": "interchange", "0x0003-004": "interchange", "0x0007-007": "interchange", "0x0007-008": "interchange",
		"0x0007-004": "compliance", "0x0007-005": "compliance", "0x0007-006": "compliance",
		"0x0013-001": "custody", "0x0013-002": "custody", "0x0013-003": "custody", "0x0014-007": "custody",
		"0x0001-001": "servicedesk",
	}
	got := map[string]string{}
	for _, e := range catalog.Entries() {
		if _, twice := got[e.ID]; twice {
			t.Errorf("%s is registered twice", e.ID)
		}
		got[e.ID] = e.Owner
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("registry owners (-want +got):\n%s", diff)
	}
}

func TestEntries(t *testing.T) {
	t.Parallel()
	entries := catalog.Entries()
	if !slices.IsSortedFunc(entries, func(a, b catalog.Entry) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("Entries() is not ordered by id")
	}
	for _, e := range entries {
		if prefix, _, _ := strings.Cut(e.ID, "-"); prefix != fmt.Sprintf("0x%04X", e.ProductID) {
			t.Errorf("%s: product id %d is not its prefix", e.ID, e.ProductID)
		}
		if !slices.Contains(catalog.Products(), e.Product) || !slices.Contains(catalog.RequestTypes(), e.RequestType) ||
			!slices.Contains(append(catalog.Owners(), catalog.Servicedesk), e.Owner) || e.Name == "" {
			t.Errorf("%+v: unknown product, request type or owner, or no name", e)
		}
		if got, ok := catalog.Lookup(e.ID); !ok || got != e {
			t.Errorf("Lookup(%s) = %+v, %v", e.ID, got, ok)
		}
	}
	if _, ok := catalog.Lookup("0x0013-999"); ok {
		t.Error("Lookup of an unregistered id succeeded")
	}
	entries[0].Owner = "changed"
	if catalog.Entries()[0].Owner == "changed" {
		t.Error("changing one Entries() result changed the registry")
	}
}

func TestOwnedBy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give string
		want []string
	}{
		{give: "trading", want: []string{"0x0003-001", "0x0003-002", "0x0009-001"}},
		{give: "interchange", want: []string{"0x0003-003", "0x0003-004", "0x0007-007", "0x0007-008"}},
		{give: "compliance", want: []string{"0x0007-004", "0x0007-005", "0x0007-006"}},
		{give: "custody", want: []string{"0x0013-001", "0x0013-002", "0x0013-003", "0x0014-007"}},
		{give: "servicedesk", want: []string{"0x0001-001"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, catalog.OwnedBy(tt.give)); diff != "" {
			t.Errorf("OwnedBy(%s) (-want +got):\n%s", tt.give, diff)
		}
	}
}
