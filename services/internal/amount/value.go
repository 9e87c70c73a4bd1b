package amount

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/shopspring/decimal"
)

// Amount is an exact signed decimal amount of money: the one value type every balance,
// posting and settlement amount of the suite goes through. Its zero value is 0. It is
// stored and sent as its canonical string (String), never as a float, never as Decimal128.
type Amount struct{ d decimal.Decimal }

// Zero is the amount 0.
var Zero = Amount{}

// Errors of the readers.
var (
	ErrTooFine   = errors.New("amount has more decimals than the currency's base unit")
	ErrNegative  = errors.New("amount must not be negative")
	ErrNotStored = errors.New("stored amount is not a decimal")
)

// signedPattern is a canonical signed decimal: an optional '-', no '+', no exponent, no
// leading zeros, no trailing fractional zeros, and no "-0".
var signedPattern = regexp.MustCompile(`^(-?[1-9][0-9]*(\.[0-9]*[1-9])?|-?0\.[0-9]*[1-9]|0)$`)

// ParseSigned reads a canonical signed decimal ("-1.5", "0", "2") no finer than places
// decimals.
func ParseSigned(s string, places int32) (Amount, error) {
	if len(s) > MaxDigits+2 {
		return Zero, ErrTooLong
	}
	if !signedPattern.MatchString(s) {
		return Zero, ErrNotCanonical
	}
	return fine(decimal.RequireFromString(s), places)
}

// ParseAmount reads a canonical non-negative decimal no finer than places decimals.
func ParseAmount(s string, places int32) (Amount, error) {
	d, err := Parse(s)
	if err != nil {
		return Zero, err
	}
	return fine(d, places)
}

// ParsePositiveAmount is ParseAmount for amounts that must be greater than zero.
func ParsePositiveAmount(s string, places int32) (Amount, error) {
	a, err := ParseAmount(s, places)
	if err == nil && a.Sign() <= 0 {
		return Zero, ErrNotPositive
	}
	return a, err
}

func fine(d decimal.Decimal, places int32) (Amount, error) {
	if -d.Exponent() > places && !d.Equal(d.Truncate(places)) {
		return Zero, ErrTooFine
	}
	return Amount{d: d}, nil
}

// FromStored reads an amount the suite stored itself (any decimal text; "" is zero). Its
// error means a corrupted document, never bad input.
func FromStored(s string) (Amount, error) {
	if s == "" {
		return Zero, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Zero, fmt.Errorf("%w: %q", ErrNotStored, s)
	}
	return Amount{d: d}, nil
}

// MustStored is FromStored for constants and amounts already checked.
func MustStored(s string) Amount {
	a, err := FromStored(s)
	if err != nil {
		panic(err)
	}
	return a
}

// FromDecimal wraps an exact decimal.
func FromDecimal(d decimal.Decimal) Amount { return Amount{d: d} }

// Decimal returns the exact decimal.
func (a Amount) Decimal() decimal.Decimal { return a.d }

// String is the canonical text: "1.5", "-0.25", "0".
func (a Amount) String() string { return a.d.String() }

// Add returns a + b.
func (a Amount) Add(b Amount) Amount { return Amount{d: a.d.Add(b.d)} }

// Sub returns a − b.
func (a Amount) Sub(b Amount) Amount { return Amount{d: a.d.Sub(b.d)} }

// Neg returns −a.
func (a Amount) Neg() Amount { return Amount{d: a.d.Neg()} }

// Abs returns |a|.
func (a Amount) Abs() Amount { return Amount{d: a.d.Abs()} }

// Mul returns a × b.
func (a Amount) Mul(b Amount) Amount { return Amount{d: a.d.Mul(b.d)} }

// Sign is -1, 0 or 1.
func (a Amount) Sign() int { return a.d.Sign() }

// IsZero reports whether a is 0.
func (a Amount) IsZero() bool { return a.d.IsZero() }

// Cmp compares a and b: -1, 0 or 1.
func (a Amount) Cmp(b Amount) int { return a.d.Cmp(b.d) }

// Equal reports whether a and b are the same amount (1.50 equals 1.5).
func (a Amount) Equal(b Amount) bool { return a.d.Equal(b.d) }

// Places is the number of decimals a is written with.
func (a Amount) Places() int32 { return max(0, -a.d.Exponent()) }

// pricePattern is a plain non-negative decimal whose trailing zeros are kept: they set the
// precision a price shows values with ("65000.00").
var pricePattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$`)

// ErrNotPlain is a price that is not a plain decimal.
var ErrNotPlain = errors.New("price must be a plain decimal such as 65000.50 (no sign or exponent, at most 18 digits each side)")

// ParsePrice reads a non-negative price, trailing zeros allowed (they are its display
// precision, kept by the caller as text).
func ParsePrice(s string) (Amount, error) {
	if !pricePattern.MatchString(s) {
		return Zero, ErrNotPlain
	}
	return Amount{d: decimal.RequireFromString(s)}, nil
}
