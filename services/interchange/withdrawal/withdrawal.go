// Package withdrawal is the withdrawal aggregate of interchange: a withdrawal from a
// company's trading wallet waits in PENDING_CONFIRMATION for one decision (endpoint 11),
// and the decision's money step moves through trading's journal exactly once. It is plain
// Go: the store and the ledger are interfaces (Store, Funds) that app wires.
package withdrawal

import (
	"fmt"
	"slices"
	"time"
)

// Withdrawal statuses. A decision is taken once: PENDING_CONFIRMATION → ACCEPTED | DECLINED.
const (
	StatusPending  = "PENDING_CONFIRMATION"
	StatusAccepted = "ACCEPTED"
	StatusDeclined = "DECLINED"
)

// Decisions of endpoint 11.
const (
	DecisionAccept  = "ACCEPT"
	DecisionDecline = "DECLINE"
)

// MaxReasonLength bounds a decline's reason.
const MaxReasonLength = 512

// transitions is the state machine: a pending withdrawal is decided once.
var transitions = map[string][]string{
	StatusPending: {StatusAccepted, StatusDeclined},
}

// Allowed reports whether a withdrawal may move from one status to the other.
func Allowed(from, to string) bool { return slices.Contains(transitions[from], to) }

// Withdrawal is a withdrawal from a company's trading wallet to an external address,
// awaiting (or after) its confirmation.
type Withdrawal struct {
	TransferID string
	CompanyID  string
	WalletID   string
	// VenueID is the trading venue that holds the wallet: its operator decides the
	// withdrawal (endpoint 11).
	VenueID            string
	Currency           string
	Amount             string // positive canonical decimal
	DestinationAddress string
	Status             string
	Reason             string // why it was declined
	Version            int64
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DecidedAt          time.Time
	// HoldAttempt numbers the holds an ACCEPT places (wd:<transferId>:hold:<n>): a hold
	// refused for lack of funds keeps its id refused, so the next ACCEPT takes the next
	// number; a decision freezes it. 0 on withdrawals stored before it was kept: 1.
	HoldAttempt int
	// CompletedAt is when the money step of the decision was done (zero until then, and on
	// withdrawals stored before it was recorded): the recovery sweeper completes the rest.
	CompletedAt time.Time
}

// SameRequest reports whether w and o describe the same withdrawal.
func (w Withdrawal) SameRequest(o Withdrawal) bool {
	return w.CompanyID == o.CompanyID && w.WalletID == o.WalletID && w.Currency == o.Currency && w.Amount == o.Amount &&
		w.DestinationAddress == o.DestinationAddress
}

// statusOf is the status a decision leads to.
func statusOf(decision string) string {
	if decision == DecisionAccept {
		return StatusAccepted
	}
	return StatusDeclined
}

// DecisionOf is the decision that led to a status ("" while pending).
func DecisionOf(status string) string {
	switch status {
	case StatusAccepted:
		return DecisionAccept
	case StatusDeclined:
		return DecisionDecline
	}
	return ""
}

// Attempt is w's current hold attempt (1 for withdrawals stored before attempts).
func (w Withdrawal) Attempt() int { return max(w.HoldAttempt, 1) }

// HoldID is the journal entry that holds w's amount at attempt n.
func HoldID(w Withdrawal, n int) string { return fmt.Sprintf("wd:%s:hold:%d", w.TransferID, n) }
