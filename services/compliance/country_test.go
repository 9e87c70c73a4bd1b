package compliance_test

import (
	"testing"

	"github.com/zcustody/suite/services/compliance"
)

func TestIsCountry(t *testing.T) {
	t.Parallel()
	if n := len(compliance.Countries()); n != 249 {
		t.Errorf("%d country codes, want the 249 of ISO 3166-1", n)
	}
	for _, code := range compliance.Countries() {
		if !compliance.IsCountry(code) {
			t.Errorf("IsCountry(%q) = false for a listed code", code)
		}
	}
	for _, code := range []string{"GB", "CH", "US", "SG", "AX", "ZW"} {
		if !compliance.IsCountry(code) {
			t.Errorf("IsCountry(%q) = false, want true", code)
		}
	}
	for _, code := range []string{"", "G", "gb", "Gb", "GBR", "UK", "EU", "XK", "ZZ", "AA", "D ", " D", "DA", "E A"} {
		if compliance.IsCountry(code) {
			t.Errorf("IsCountry(%q) = true, want false", code)
		}
	}
}
