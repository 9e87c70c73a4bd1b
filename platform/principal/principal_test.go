package principal_test

import (
	"slices"
	"testing"

	"github.com/zcustody/suite/platform/principal"
)

// TestVenuesIgnoreEmptyIDs: an empty venue id names no venue, so a company whose record
// holds one operates nothing through it.
func TestVenuesIgnoreEmptyIDs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"a client", nil, []string{}},
		{"only an empty id", []string{""}, []string{}},
		{"an empty id among real ones", []string{"BYBIT", "", "DERIBIT"}, []string{"BYBIT", "DERIBIT"}},
	} {
		p := principal.Principal{Kind: principal.KindCompany, CompanyID: "ZX", VenueIDs: tt.ids}
		if got := p.Venues(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Venues() = %q, want %q", tt.name, got, tt.want)
		}
		if p.OperatesVenue("") {
			t.Errorf("%s: operates the empty venue", tt.name)
		}
	}
	p := principal.Principal{VenueIDs: []string{"BYBIT"}}
	if !p.OperatesVenue("BYBIT") || p.OperatesVenue("DERIBIT") || p.OperatesVenue("bybit") {
		t.Errorf("BYBIT's operator: BYBIT %v, DERIBIT %v, bybit %v; want only BYBIT", p.OperatesVenue("BYBIT"), p.OperatesVenue("DERIBIT"), p.OperatesVenue("bybit"))
	}
}
