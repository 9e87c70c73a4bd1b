// Package settlement is the settlement aggregate of interchange (DESIGN.md §7, §8): a
// venue's instruction, its legs and nets, the shares netting derives from them, the state
// machine its transitions follow, and the service that carries a transition out through
// trading's journal. It is plain Go: the store, the ledger and the trading wallets are
// interfaces (Store, Funds, Wallets) that app wires to their real implementations.
package settlement

import (
	"slices"
	"time"
)

// Settlement statuses (the contract's enum).
const (
	StatusReceived      = "SETTLEMENT_RECEIVED"
	StatusInitiated     = "SETTLEMENT_INITIATED"
	StatusAwaitingFunds = "SETTLEMENT_AWAITING_FUNDS"
	StatusPayIn         = "SETTLEMENT_PAY_IN"
	StatusPayOut        = "SETTLEMENT_PAY_OUT"
	StatusComplete      = "SETTLEMENT_COMPLETE"
	StatusRejected      = "SETTLEMENT_REJECTED"
	StatusFailed        = "SETTLEMENT_FAILED"
)

// Statuses lists every settlement status.
func Statuses() []string {
	return []string{StatusReceived, StatusInitiated, StatusAwaitingFunds, StatusPayIn, StatusPayOut, StatusComplete,
		StatusRejected, StatusFailed}
}

// transitions is the state machine of DESIGN.md §7: from each status, where it may go.
var transitions = map[string][]string{
	StatusReceived:      {StatusInitiated, StatusRejected},
	StatusInitiated:     {StatusAwaitingFunds, StatusPayIn, StatusFailed},
	StatusAwaitingFunds: {StatusPayIn, StatusFailed},
	StatusPayIn:         {StatusPayOut, StatusFailed},
	StatusPayOut:        {StatusComplete, StatusFailed},
}

// Allowed reports whether a settlement may move from one status to the other.
func Allowed(from, to string) bool { return slices.Contains(transitions[from], to) }

// Leg is one settlement as submitted; Amount is signed, seen from the wallet (positive: it
// pays the venue).
type Leg struct {
	WalletID      string
	Currency      string
	Ledger        string
	Amount        string
	ExternalID    string
	ExecutionDate string
	// CompanyID is the client that holds the wallet, as read when the instruction was
	// stored (empty on settlements stored before it was kept): each client sees its own legs.
	CompanyID string
}

// Net is one net settlement as submitted; Amount is signed like the legs it nets.
type Net struct {
	Currency string
	Ledger   string
	Amount   string
}

// Address is one receivable address of the header.
type Address struct {
	Address        string
	Ledger         string
	DestinationTag int64
	Memo           string
}

// Pending is a transition claimed and not finished yet: its runner (Token) holds it until
// LeaseUntil and renews the lease while it works; once the lease ran out, a retry of the
// same transition or the sweeper resumes it, from where it stopped.
type Pending struct {
	From, To, Reason string
	LeaseUntil       time.Time
	Token            string
}

// Step is one finished transition, kept in the settlement's history.
type Step struct {
	From, To, Reason string
	At               time.Time
}

// Settlement is a settlement instruction and where it stands.
type Settlement struct {
	TrackingID       string
	RequestID        string // the venue's settlementRequestId, unique per company
	CompanyID        string
	VenueID          string
	HeaderStatus     string
	HeaderErrors     string
	RequestDateTime  string
	InstructionCount int32
	Addresses        []Address
	Legs             []Leg
	Nets             []Net
	// Shares are who pays into and who is paid out of the settlement (netting.go).
	Shares   []Share
	BodyHash string // SHA-256 of the canonical request: what makes a repeat recognisable
	Status   string
	Version  int64
	Pending  *Pending
	// PayInAttempt numbers the PAY_IN hold entries: a hold refused for lack of funds keeps
	// its id refused, so the next attempt after AWAITING_FUNDS takes the next number.
	// PayInHold is the hold that PAY_IN placed (empty until then).
	PayInAttempt int
	PayInHold    string
	// ReverseAttempt numbers the entries that reverse a paid-out settlement on FAILED (one
	// refused because a payee no longer holds its share stays refused).
	ReverseAttempt int
	Reason         string
	History        []Step
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// EventSeq is the settlement's event sequence as read with Version: the store numbers
	// the events of the next change after it (each change is guarded, so the two move
	// together).
	EventSeq int64
}
