package servicedesk_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/servicedesk"
)

// TestTransitions states DESIGN.md §7's request lifecycle here, apart from the production
// table: every status against every other, allowed (1) or not (0).
func TestTransitions(t *testing.T) {
	t.Parallel()
	statuses := []string{"PENDING CONFIRMATION", "PENDING AUTHORISATION", "AUTHORISED", "COMPLETED", "FAILED", "REJECTED",
		"CANCELLED", "EXPIRED"}
	want := [8][8]int{
		//                 PCONF PAUTH AUTH COMPL FAIL REJ CANC EXP
		/* PENDING CONF */ {0, 1, 1, 0, 0, 0, 1, 1},
		/* PENDING AUTH */ {0, 1, 1, 0, 0, 1, 1, 1}, // to itself: an approval short of the quorum
		/* AUTHORISED   */ {0, 0, 0, 1, 1, 0, 0, 0},
		/* COMPLETED    */ {0, 0, 0, 0, 0, 0, 0, 0},
		/* FAILED       */ {0, 0, 0, 0, 0, 0, 0, 0},
		/* REJECTED     */ {0, 0, 0, 0, 0, 0, 0, 0},
		/* CANCELLED    */ {0, 0, 0, 0, 0, 0, 0, 0},
		/* EXPIRED      */ {0, 0, 0, 0, 0, 0, 0, 0},
	}
	if diff := cmp.Diff(statuses, servicedesk.Statuses); diff != "" {
		t.Fatalf("Statuses (-want +got):\n%s", diff)
	}
	wantMoves, gotMoves := map[string]bool{}, map[string]bool{}
	for i, from := range statuses {
		for j, to := range statuses {
			move := from + " → " + to
			wantMoves[move] = want[i][j] == 1
			gotMoves[move] = servicedesk.Allowed(from, to)
		}
	}
	if diff := cmp.Diff(wantMoves, gotMoves); diff != "" {
		t.Errorf("Allowed (-want +got):\n%s", diff)
	}
}

// TestTransitionFollowsTheTable: a transition is taken only from one of its sources, and only
// where the state machine allows the move.
func TestTransitionFollowsTheTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give servicedesk.Transition
		from string
		want bool
	}{
		{"expire a pending request", servicedesk.Transition{From: []string{"PENDING AUTHORISATION"}, To: "EXPIRED"}, "PENDING AUTHORISATION", true},
		{"status not among the sources", servicedesk.Transition{From: []string{"PENDING AUTHORISATION"}, To: "EXPIRED"}, "PENDING CONFIRMATION", false},
		{"source listed, move not in the table", servicedesk.Transition{From: []string{"COMPLETED"}, To: "FAILED"}, "COMPLETED", false},
		{"reject before confirmation", servicedesk.Transition{From: []string{"PENDING CONFIRMATION"}, To: "REJECTED"}, "PENDING CONFIRMATION", false},
	}
	for _, tt := range tests {
		if got := tt.give.Allowed(tt.from); got != tt.want {
			t.Errorf("%s: Allowed(%s) = %v, want %v", tt.name, tt.from, got, tt.want)
		}
	}
}

// TestSubjectOf: the wallet and currency a policy rule matches are read from the payload
// however the catalog's templates write them.
func TestSubjectOf(t *testing.T) {
	t.Parallel()
	withdrawal, _ := servicedesk.Lookup(servicedesk.ServiceTradingWithdrawal)
	change, _ := servicedesk.Lookup(servicedesk.ServicePolicyChange)
	tests := []struct {
		name    string
		svc     servicedesk.Service
		payload string
		want    string
	}{
		{"a sender object", withdrawal, `{"sender":{"type":"WALLETID","value":"ZT-TW-1"},"amount":"1"}`, "0x0003-004 ZT-TW-1 "},
		{"a sender string", withdrawal, `{"sender":"ZT-TW-1"}`, "0x0003-004 ZT-TW-1 "},
		{"a wallet id in a list, a currency", withdrawal, `{"walletId":["ZT-TW-2"],"currency":"BTC"}`, "0x0003-004 ZT-TW-2 BTC"},
		{"two wallets name none", withdrawal, `{"walletId":["ZT-TW-2","ZT-TW-3"]}`, "0x0003-004  "},
		{"a policy change", change, `{"rules":[]}`, "policy.change  "},
	}
	for _, tt := range tests {
		s := servicedesk.SubjectOf(tt.svc, tt.payload)
		if got := s.Operation + " " + s.WalletID + " " + s.Currency; got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
