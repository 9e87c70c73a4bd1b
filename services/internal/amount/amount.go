// Package amount parses the suite's decimal amounts: canonical decimal strings, exact.
package amount

import (
	"errors"
	"regexp"

	"github.com/shopspring/decimal"
)

// MaxDigits bounds the digits of an amount (integer and fraction together).
const MaxDigits = 38

// canonicalPattern: no sign, no exponent, no leading zeros, no trailing fractional zeros.
var canonicalPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)

// Errors of Parse.
var (
	ErrNotCanonical = errors.New("amount must be a canonical decimal such as 12.5 (no sign, exponent, leading or trailing zeros)")
	ErrTooLong      = errors.New("amount has too many digits")
	ErrNotPositive  = errors.New("amount must be greater than zero")
)

// Parse reads a canonical non-negative decimal string exactly.
func Parse(s string) (decimal.Decimal, error) {
	if len(s) > MaxDigits+1 {
		return decimal.Decimal{}, ErrTooLong
	}
	if !canonicalPattern.MatchString(s) {
		return decimal.Decimal{}, ErrNotCanonical
	}
	return decimal.RequireFromString(s), nil
}

// ParsePositive is Parse for amounts that must be greater than zero.
func ParsePositive(s string) (decimal.Decimal, error) {
	d, err := Parse(s)
	if err != nil {
		return d, err
	}
	if !d.IsPositive() {
		return d, ErrNotPositive
	}
	return d, nil
}

// Format writes d canonically: the inverse of Parse.
func Format(d decimal.Decimal) string { return d.String() }
