package journal

import (
	"errors"
	"fmt"
)

// Errors of the journal: refusals a caller answers with a 4xx, and ErrInvariant, which
// means a broken ledger and stops the operation.
var (
	ErrInvalidEntry        = errors.New("invalid journal entry")
	ErrUnbalanced          = errors.New("journal entry does not balance")
	ErrAccountNotFound     = errors.New("account does not exist")
	ErrInsufficient        = errors.New("insufficient available balance")
	ErrEntryExists         = errors.New("entry exists with different fields")
	ErrHoldNotFound        = errors.New("hold not found")
	ErrHoldAlreadyPosted   = errors.New("hold already posted")
	ErrHoldAlreadyVoided   = errors.New("hold already voided")
	ErrHoldExpired         = errors.New("hold expired")
	ErrTooManyConflicts    = errors.New("account updated concurrently too often")
	ErrInvariant           = errors.New("ledger invariant broken")
	errMarkersFull         = errors.New("marker list full")
	errPreviouslyCompleted = errors.New("completed")
	errAppliedElsewhere    = errors.New("applied, its marker pruned")
	errAppliedHere         = errors.New("applied on this holder")
	errBlockedElsewhere    = errors.New("compensating: blocked on another holder")
	errNothingHere         = errors.New("not applied on this holder")
)

// ExistsError is ErrEntryExists naming the first field that differs from the stored entry.
type ExistsError struct {
	ID, Field string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("entry %s exists with a different %s", e.ID, e.Field)
}

// Unwrap makes errors.Is(err, ErrEntryExists) hold.
func (e *ExistsError) Unwrap() error { return ErrEntryExists }

// InsufficientError is ErrInsufficient naming the account that lacks funds. A retry of the
// same entry id answers the same error: an id that failed stays failed.
type InsufficientError struct {
	Entry, Holder, Currency string
}

func (e *InsufficientError) Error() string {
	return fmt.Sprintf("entry %s: insufficient available %s on %s", e.Entry, e.Currency, e.Holder)
}

// Unwrap makes errors.Is(err, ErrInsufficient) hold.
func (e *InsufficientError) Unwrap() error { return ErrInsufficient }

// AccountError is ErrAccountNotFound naming the holder.
type AccountError struct{ Holder string }

func (e *AccountError) Error() string { return "account holder " + e.Holder + " does not exist" }

// Unwrap makes errors.Is(err, ErrAccountNotFound) hold.
func (e *AccountError) Unwrap() error { return ErrAccountNotFound }
