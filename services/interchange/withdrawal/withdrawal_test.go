package withdrawal_test

import (
	"testing"

	"github.com/zcustody/suite/services/interchange/withdrawal"
)

// TestTransitions states the withdrawal state machine on its own, as the contract reads: a
// pending withdrawal is accepted or declined once, and a decided one never moves again.
func TestTransitions(t *testing.T) {
	t.Parallel()
	states := []string{"PENDING_CONFIRMATION", "ACCEPTED", "DECLINED"}
	allowed := map[[2]string]bool{
		{"PENDING_CONFIRMATION", "ACCEPTED"}: true,
		{"PENDING_CONFIRMATION", "DECLINED"}: true,
	}
	for _, from := range append(states, "", "pending_confirmation", "COMPLETED") {
		for _, to := range append(states, "", "COMPLETED") {
			if got, want := withdrawal.Allowed(from, to), allowed[[2]string{from, to}]; got != want {
				t.Errorf("Allowed(%q, %q) = %v, want %v", from, to, got, want)
			}
		}
	}
}
