// Package withdrawal is the withdrawal aggregate of interchange: a withdrawal from a
// company's trading wallet holds its amount when it is created, waits in
// PENDING_CONFIRMATION for one decision of the wallet's venue (endpoint 11), and the
// decision's money step moves through trading's journal (and, for a withdrawal to a custody
// wallet, custody's) exactly once. It is plain Go: the store and the ledgers are interfaces
// (Store, Funds) that app wires.
package withdrawal

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/trading"
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

// MaxHoldAttempts bounds the holds ACCEPTs may try on a withdrawal stored without its hold
// (each refused one is a journal entry): past it an ACCEPT is 409, and the withdrawal can
// still be declined or expire.
const MaxHoldAttempts = 50

// MaxReasonLength bounds a decline's reason.
const MaxReasonLength = 512

// ReasonInsufficient is the reason recorded on a withdrawal declined at its creation because
// its wallet did not hold the amount.
const ReasonInsufficient = "insufficient funds in the trading wallet"

// transitions is the state machine: a pending withdrawal is decided once.
var transitions = map[string][]string{
	StatusPending: {StatusAccepted, StatusDeclined},
}

// Allowed reports whether a withdrawal may move from one status to the other.
func Allowed(from, to string) bool { return slices.Contains(transitions[from], to) }

// Withdrawal is a withdrawal from a company's trading wallet to an external address (one the
// settlement engine names) or to one of the company's custody wallets (one its users request
// through the service desk), awaiting (or after) its confirmation.
type Withdrawal struct {
	TransferID string
	CompanyID  string
	WalletID   string
	// VenueID is the trading venue that holds the wallet: its operator decides the
	// withdrawal (endpoint 11).
	VenueID            string
	Currency           string
	Amount             string // positive canonical decimal
	DestinationAddress string // an external address; empty for a withdrawal to custody
	// DestinationWalletID is the company's custody wallet credited (empty for an external
	// address): the amount passes through the in-transit accounts of trading and custody.
	DestinationWalletID string
	// RequestID is the service request that asked for the withdrawal (empty for the engine's).
	RequestID string
	Status    string
	Reason    string // why it was declined
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	DecidedAt time.Time
	// HoldAttempt numbers the holds placed for w (wd:<transferId>:hold:<n>): the first at
	// creation; on a withdrawal stored without it (before holds were placed at creation) an
	// ACCEPT places it, and one refused for lack of funds keeps its id refused, so the next
	// ACCEPT takes the next number; a decision freezes it. 0 on older withdrawals: 1.
	HoldAttempt int
	// CompletedAt is when the money step of the decision was done (zero until then, and on
	// withdrawals stored before it was recorded): the recovery sweeper completes the rest.
	CompletedAt time.Time
	// EventSeq is the withdrawal's event sequence as read with Version: the store numbers
	// the events of the next change after it (each change is guarded by the version).
	EventSeq int64
	// NetworkFeeLimit is the most the network fee of a withdrawal to an external address may
	// be (a canonical decimal; "" when it holds none): held on the wallet with the amount.
	NetworkFeeLimit string
	// NetworkFee is the fee charged on ACCEPT (NetworkFeeOf): the post charges the amount
	// plus it and releases the rest of the limit in the same entry. "" until accepted, and
	// on withdrawals that hold no fee.
	NetworkFee string
}

// SameRequest reports whether w and o describe the same withdrawal.
func (w Withdrawal) SameRequest(o Withdrawal) bool {
	return w.CompanyID == o.CompanyID && w.WalletID == o.WalletID && w.Currency == o.Currency && w.Amount == o.Amount &&
		w.DestinationAddress == o.DestinationAddress && w.DestinationWalletID == o.DestinationWalletID &&
		w.NetworkFeeLimit == o.NetworkFeeLimit
}

// HoldsFee reports whether w holds a network fee limit on top of its amount.
func (w Withdrawal) HoldsFee() bool { return w.NetworkFeeLimit != "" }

// Held is what w's hold reserves on its wallet: the amount, plus the fee limit.
func (w Withdrawal) Held() amount.Amount {
	held := amount.MustStored(w.Amount)
	if w.HoldsFee() {
		held = held.Add(amount.MustStored(w.NetworkFeeLimit))
	}
	return held
}

// ToCustody reports whether w credits a custody wallet (rather than leaving for an address).
func (w Withdrawal) ToCustody() bool { return w.DestinationWalletID != "" }

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

// NetworkFeeOf is the network fee an ACCEPT of w charges when the venue names fee: "" for a
// withdrawal holding no fee limit (naming one is 400); the limit when fee is empty; else
// fee, canonical and no finer than the currency, at most the limit (400 on networkFee).
func NetworkFeeOf(w Withdrawal, fee string) (string, error) {
	switch {
	case !w.HoldsFee() && fee == "":
		return "", nil
	case !w.HoldsFee():
		return "", apperr.Invalid(apperr.CodeFormat, "networkFee", "withdrawal %s holds no network fee: accept it without networkFee", w.TransferID)
	case fee == "":
		return w.NetworkFeeLimit, nil
	}
	places, _ := trading.CurrencyDecimals(w.Currency)
	a, err := amount.ParseAmount(fee, places)
	switch {
	case errors.Is(err, amount.ErrTooFine):
		return "", apperr.Invalid(apperr.CodeFormat, "networkFee", "networkFee has more than %d decimals", places)
	case err != nil:
		return "", apperr.Invalid(apperr.CodeFormat, "networkFee", "networkFee must be a canonical decimal of 0 or more such as \"0.0001\", got %q", fee)
	case a.Cmp(amount.MustStored(w.NetworkFeeLimit)) > 0:
		return "", apperr.Invalid(apperr.CodeFormat, "networkFee", "networkFee %s is more than the networkFeeLimit %s %s held with withdrawal %s", fee, w.NetworkFeeLimit, w.Currency, w.TransferID)
	}
	return a.String(), nil
}

// Attempt is w's current hold attempt (1 for withdrawals stored before attempts).
func (w Withdrawal) Attempt() int { return max(w.HoldAttempt, 1) }

// HoldID is the journal entry that holds w's amount at attempt n.
func HoldID(w Withdrawal, n int) string { return fmt.Sprintf("wd:%s:hold:%d", w.TransferID, n) }

// CreditID is the entry of custody's journal that credits w's custody wallet.
func CreditID(w Withdrawal) string { return "wd:" + w.TransferID + ":credit" }
