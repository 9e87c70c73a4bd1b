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

// transitions is the state machine of DESIGN.md §7.
var transitions = map[string][]string{
	StatusReceived:      {StatusInitiated, StatusRejected},
	StatusInitiated:     {StatusAwaitingFunds, StatusPayIn, StatusFailed},
	StatusAwaitingFunds: {StatusPayIn, StatusFailed},
	StatusPayIn:         {StatusPayOut, StatusFailed},
	StatusPayOut:        {StatusComplete, StatusFailed},
}

// Allowed reports whether a settlement may move from one status to the other.
func Allowed(from, to string) bool { return slices.Contains(transitions[from], to) }

// Directions of an obligation.
const (
	// DirectionIn is a receivable: the client's trading wallet pays the venue (in PAY_IN).
	DirectionIn = "IN"
	// DirectionOut is a payable: the venue pays the client's trading wallet (in PAY_OUT).
	DirectionOut = "OUT"
)

// Obligation is one amount that moves when the settlement runs: between the client's
// trading wallet WalletID and the venue's settlement wallet in Currency.
type Obligation struct {
	Key       string // leg<n> for a gross leg, net-<CURRENCY> for a net settlement
	WalletID  string
	Currency  string
	Amount    string // positive canonical decimal
	Direction string
}

// Leg is one gross settlement as submitted.
type Leg struct {
	WalletID      string
	Currency      string
	Ledger        string
	Amount        string
	ExternalID    string
	ExecutionDate string
}

// Net is one net settlement as submitted; Amount is signed (see ParseInstruction).
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

// Pending is a transition claimed and not finished yet: its owner holds it until
// LeaseUntil; after that a retry of the same transition resumes it.
type Pending struct {
	From, To, Reason string
	LeaseUntil       time.Time
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
	Obligations      []Obligation
	BodyHash         string // SHA-256 of the canonical request: what makes a repeat recognisable
	Status           string
	Version          int64
	Pending          *Pending
	// OpenHolds names the phase (PAY_IN or PAY_OUT) whose holds may be open: set when the
	// phase starts, cleared when it completes or when FAILED releases them.
	OpenHolds string
	Reason    string
	History   []Step
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Obligations of one direction.
func (s Settlement) obligations(direction string) []Obligation {
	var out []Obligation
	for _, o := range s.Obligations {
		if o.Direction == direction {
			out = append(out, o)
		}
	}
	return out
}
