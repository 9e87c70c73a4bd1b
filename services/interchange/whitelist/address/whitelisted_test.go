package address_test

import (
	"errors"
	"testing"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
)

// TestTransitions states a whitelisted address's state machine apart from the production
// table: created ACTIVE, deactivated once, never active again.
func TestTransitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		want     bool
	}{
		{"ACTIVE", "DEACTIVATED", true},
		{"DEACTIVATED", "ACTIVE", false},
		{"DEACTIVATED", "DEACTIVATED", false},
		{"ACTIVE", "ACTIVE", false},
		{"", "ACTIVE", false},
	}
	for _, tt := range tests {
		if got := address.Allowed(tt.from, tt.to); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	w := address.Whitelisted{Address: "addr", Status: address.StatusDeactivated}
	var ae *apperr.Error
	if err := w.CheckMove(address.StatusDeactivated); !errors.As(err, &ae) || ae.Code != apperr.CodeDeactivated || ae.Field != "address" {
		t.Errorf("CheckMove of a deactivated address = %v, want ER-113 on address", err)
	}
	w.Status = address.StatusActive
	if err := w.CheckMove(address.StatusDeactivated); err != nil {
		t.Errorf("CheckMove of an active address = %v", err)
	}
}
