package settlement_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/interchange/settlement"
)

// TestTransitions states DESIGN.md §7's state machine here, apart from the production
// table: every status of the contract against every other, allowed (1) or not (0). Adding
// or removing a transition, or a status, in production without changing this table fails.
func TestTransitions(t *testing.T) {
	t.Parallel()
	statuses := []string{
		"SETTLEMENT_RECEIVED", "SETTLEMENT_INITIATED", "SETTLEMENT_AWAITING_FUNDS", "SETTLEMENT_PAY_IN",
		"SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE", "SETTLEMENT_REJECTED", "SETTLEMENT_FAILED",
	}
	// Rows: from, columns: to, both in the order of statuses.
	want := [8][8]int{
		//                RECEIVED INITIATED AWAITING PAY_IN PAY_OUT COMPLETE REJECTED FAILED
		/* RECEIVED  */ {0, 1, 0, 0, 0, 0, 1, 0},
		/* INITIATED */ {0, 0, 1, 1, 0, 0, 0, 1},
		/* AWAITING  */ {0, 0, 0, 1, 0, 0, 0, 1},
		/* PAY_IN    */ {0, 0, 0, 0, 1, 0, 0, 1},
		/* PAY_OUT   */ {0, 0, 0, 0, 0, 1, 0, 1},
		/* COMPLETE  */ {0, 0, 0, 0, 0, 0, 0, 0},
		/* REJECTED  */ {0, 0, 0, 0, 0, 0, 0, 0},
		/* FAILED    */ {0, 0, 0, 0, 0, 0, 0, 0},
	}
	if diff := cmp.Diff(statuses, settlement.Statuses()); diff != "" {
		t.Fatalf("Statuses() (-want +got):\n%s", diff)
	}
	wantMoves, gotMoves := map[string]bool{}, map[string]bool{}
	for i, from := range statuses {
		for j, to := range statuses {
			move := from + " → " + to
			wantMoves[move] = want[i][j] == 1
			gotMoves[move] = settlement.Allowed(from, to)
		}
	}
	if diff := cmp.Diff(wantMoves, gotMoves); diff != "" {
		t.Errorf("Allowed (-want +got):\n%s", diff)
	}
	for _, s := range statuses {
		for _, other := range []string{"", "SETTLEMENT_UNKNOWN", "settlement_initiated"} {
			if settlement.Allowed(s, other) || settlement.Allowed(other, s) {
				t.Errorf("Allowed between %s and the unknown status %q", s, other)
			}
		}
	}
}
