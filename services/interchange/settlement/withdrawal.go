package settlement

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Withdrawal statuses. A decision is taken once: PENDING_CONFIRMATION → ACCEPTED | DECLINED.
const (
	WithdrawalPending  = "PENDING_CONFIRMATION"
	WithdrawalAccepted = "ACCEPTED"
	WithdrawalDeclined = "DECLINED"
)

// Decisions of endpoint 11.
const (
	DecisionAccept  = "ACCEPT"
	DecisionDecline = "DECLINE"
)

// Withdrawal is a withdrawal from a company's trading wallet to an external address,
// awaiting (or after) the company's confirmation.
type Withdrawal struct {
	TransferID         string
	CompanyID          string
	WalletID           string
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

// sameRequest reports whether w and o describe the same withdrawal.
func (w Withdrawal) sameRequest(o Withdrawal) bool {
	return w.CompanyID == o.CompanyID && w.WalletID == o.WalletID && w.Currency == o.Currency && w.Amount == o.Amount &&
		w.DestinationAddress == o.DestinationAddress
}

// decisionOf is the decision that led to a status ("" while pending).
func decisionOf(status string) string {
	switch status {
	case WithdrawalAccepted:
		return DecisionAccept
	case WithdrawalDeclined:
		return DecisionDecline
	}
	return ""
}

var (
	companyPattern      = regexp.MustCompile(`^[A-Z0-9_-]+$`)
	tradingWalletSuffix = regexp.MustCompile(`^-TW-[A-Z0-9]{10}$`)
)

// ParseWithdrawal validates CreateWithdrawal: a transfer id, the company and one of its
// trading wallet ids (<COMPANY>-TW-<10>), a supported currency, a positive canonical amount
// no finer than the currency's base unit, and a destination address valid on one of the
// currency's ledgers.
func ParseWithdrawal(req *interchangev1.CreateWithdrawalRequest) (Withdrawal, error) {
	w := Withdrawal{TransferID: req.GetTransferId(), CompanyID: req.GetCompanyId(), WalletID: req.GetWalletId(),
		Currency: req.GetCurrency(), Amount: req.GetAmount(), DestinationAddress: req.GetDestinationAddress()}
	if err := checkID("transferId", w.TransferID, requestIDPattern); err != nil {
		return Withdrawal{}, err
	}
	if err := checkID("companyId", w.CompanyID, companyPattern); err != nil {
		return Withdrawal{}, err
	}
	if w.WalletID == "" {
		return Withdrawal{}, apperr.Missing("walletId")
	}
	if len(w.WalletID) <= len(w.CompanyID) || w.WalletID[:len(w.CompanyID)] != w.CompanyID || !tradingWalletSuffix.MatchString(w.WalletID[len(w.CompanyID):]) {
		return Withdrawal{}, apperr.Invalid(apperr.CodeFormat, "walletId", "walletId %q is not a trading wallet id of %s (%s-TW-<10>)", w.WalletID, w.CompanyID, w.CompanyID)
	}
	if w.Currency == "" {
		return Withdrawal{}, apperr.Missing("currency")
	}
	curs := currenciesOf(w.Currency)
	if len(curs) == 0 {
		return Withdrawal{}, apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", w.Currency)
	}
	places := int32(0)
	for _, c := range curs {
		places = max(places, c.Decimals)
	}
	if _, err := parseAmount("amount", w.Amount, places, false); err != nil {
		return Withdrawal{}, err
	}
	return w, checkDestination(w.DestinationAddress, curs)
}

func checkDestination(address string, curs []ledger.Currency) error {
	if address == "" {
		return apperr.Missing("destinationAddress")
	}
	if len(address) > MaxAddressLength {
		return apperr.Invalid(apperr.CodeLength, "destinationAddress", "destinationAddress must be at most %d characters", MaxAddressLength)
	}
	if slices.ContainsFunc(curs, func(c ledger.Currency) bool { return ledger.Validate(c.Ledger, address) == nil }) {
		return nil
	}
	return apperr.Invalid(apperr.CodeFormat, "destinationAddress", "destinationAddress is not a valid %s address", curs[0].Code)
}

func currenciesOf(code string) []ledger.Currency {
	var out []ledger.Currency
	for _, c := range ledger.Currencies() {
		if c.Code == code {
			out = append(out, c)
		}
	}
	return out
}

// parseDecision validates endpoint 11's body.
func parseDecision(req *interchangev1.ConfirmWithdrawalRequest) (transferID, decision, reason string, err error) {
	transferID, decision, reason = req.GetTransferId(), req.GetWithdrawalConfirmation(), req.GetReason()
	switch {
	case transferID == "":
		return "", "", "", apperr.Missing("transferId")
	case decision == "":
		return "", "", "", apperr.Missing("withdrawalConfirmation")
	case decision != DecisionAccept && decision != DecisionDecline:
		return "", "", "", apperr.Invalid(apperr.CodeFormat, "withdrawalConfirmation",
			"withdrawalConfirmation must be %s or %s, got %q", DecisionAccept, DecisionDecline, decision)
	case decision == DecisionDecline && reason == "":
		return "", "", "", apperr.Missing("reason")
	case len(reason) > MaxReasonLength:
		return "", "", "", apperr.Invalid(apperr.CodeLength, "reason", "reason must be at most %d characters", MaxReasonLength)
	}
	return transferID, decision, reason, nil
}

// decided is the 409 of a different decision on a decided transfer.
func decided(w Withdrawal) error {
	return apperr.Conflict(apperr.CodeConflict, "%s", fmt.Sprintf("withdrawal %s is already %s", w.TransferID, w.Status))
}
