package trading

import (
	"fmt"
	"regexp"

	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Limits of a movement.
const (
	MaxMovementIDLength = 200
	MaxReasonLength     = 256
)

// signedDecimal is a canonical decimal string: no '+', no exponent, no leading zeros, no
// trailing fractional zeros ("1.5", "-0.25", "0"; not "1.50", "01", "-0", "1e3").
var signedDecimal = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)

// Movement is one balance change of one trading wallet (TradingLedgerService.ApplyMovement):
// signed deltas per balance kind, applied at most once per ID.
type Movement struct {
	ID         string
	CompanyID  string
	WalletID   string
	Currency   string
	Available  decimal.Decimal
	Ledger     decimal.Decimal
	PendingOut decimal.Decimal
	PendingIn  decimal.Decimal
	Reason     string
}

// MovementInput is a movement as the caller sends it: the deltas are decimal strings, an
// empty delta is zero.
type MovementInput struct {
	ID, CompanyID, WalletID, Currency        string
	Available, Ledger, PendingOut, PendingIn string
	Reason                                   string
}

// MovementResult is the balance after a movement and whether this call applied it.
type MovementResult struct {
	Applied bool
	Balance Balance
}

// ParseMovement validates in: ids present and bounded, a supported currency, canonical deltas
// no finer than the currency's base unit, and at least one non-zero delta.
func ParseMovement(in MovementInput) (Movement, error) {
	for _, f := range []struct{ name, value string }{
		{"movementId", in.ID}, {"companyId", in.CompanyID}, {"walletId", in.WalletID}, {"currency", in.Currency},
	} {
		if f.value == "" {
			return Movement{}, apperr.Missing(f.name)
		}
	}
	if len(in.ID) > MaxMovementIDLength {
		return Movement{}, apperr.Invalid(apperr.CodeLength, "movementId", "movementId must be at most %d characters", MaxMovementIDLength)
	}
	if len(in.Reason) > MaxReasonLength {
		return Movement{}, apperr.Invalid(apperr.CodeLength, "reason", "reason must be at most %d characters", MaxReasonLength)
	}
	places, ok := CurrencyDecimals(in.Currency)
	if !ok {
		return Movement{}, apperr.Invalid(apperr.CodeCurrency, "currency", "currency %q is not supported", in.Currency)
	}
	m := Movement{ID: in.ID, CompanyID: in.CompanyID, WalletID: in.WalletID, Currency: in.Currency, Reason: in.Reason}
	var err error
	for _, d := range []struct {
		field string
		value string
		dst   *decimal.Decimal
	}{
		{"availableDelta", in.Available, &m.Available}, {"ledgerDelta", in.Ledger, &m.Ledger},
		{"pendingOutDelta", in.PendingOut, &m.PendingOut}, {"pendingInDelta", in.PendingIn, &m.PendingIn},
	} {
		if *d.dst, err = parseDelta(d.field, d.value, places); err != nil {
			return Movement{}, err
		}
	}
	if m.Available.IsZero() && m.Ledger.IsZero() && m.PendingOut.IsZero() && m.PendingIn.IsZero() {
		return Movement{}, apperr.Invalid(apperr.CodeFormat, "availableDelta", "a movement must change at least one balance")
	}
	return m, nil
}

func parseDelta(field, s string, places int32) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil || !signedDecimal.MatchString(s) || s == "-0" {
		return decimal.Zero, apperr.Invalid(apperr.CodeFormat, field, "%s must be a canonical decimal such as \"-1.5\", got %q", field, s)
	}
	if -d.Exponent() > places {
		return decimal.Zero, apperr.Invalid(apperr.CodeFormat, field, "%s has more than %d decimals", field, places)
	}
	return d, nil
}

// CurrencyDecimals returns the finest number of decimals of a supported currency code (USDC:
// 7, the finer of its ledgers).
func CurrencyDecimals(code string) (int32, bool) {
	places, ok := int32(0), false
	for _, c := range ledger.Currencies() {
		if c.Code == code {
			places, ok = max(places, c.Decimals), true
		}
	}
	return places, ok
}

// Apply returns b changed by m. A balance that would become negative refuses the movement
// (FailedPrecondition, ER-409) and b stays as it was.
func (m Movement) Apply(b Balance) (Balance, error) {
	out := b
	for _, k := range []struct {
		name  string
		field string
		delta decimal.Decimal
		value *string
	}{
		{"available", "availableDelta", m.Available, &out.Available}, {"ledger", "ledgerDelta", m.Ledger, &out.Ledger},
		{"pendingOut", "pendingOutDelta", m.PendingOut, &out.PendingOut}, {"pendingIn", "pendingInDelta", m.PendingIn, &out.PendingIn},
	} {
		current, err := decimal.NewFromString(orZero(*k.value))
		if err != nil {
			return b, fmt.Errorf("%s balance of %s %s: %w", k.name, m.WalletID, m.Currency, err)
		}
		next := current.Add(k.delta)
		if next.IsNegative() {
			return b, &apperr.Error{Status: codes.FailedPrecondition, Code: apperr.CodeConflict, Field: k.field,
				Message: fmt.Sprintf("insufficient funds: the %s balance of %s in %s is %s, the movement needs %s",
					k.name, m.WalletID, m.Currency, current.String(), k.delta.Neg().String())}
		}
		*k.value = next.String()
	}
	return out, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
