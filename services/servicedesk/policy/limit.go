package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
)

// Limit scopes.
const (
	ScopeWallet  = "WALLET"  // each wallet has its own allowance
	ScopeCompany = "COMPANY" // the company's wallets share one allowance
)

// Bounds of a policy's limits.
const (
	MaxLimits   = 32
	MinWindow   = time.Minute
	MaxWindow   = 31 * 24 * time.Hour
	LimitPlaces = 18
)

// Limit bounds how much may leave a company's wallets in one currency: at most
// MaxPerTransaction per withdrawal, and at most Amount within any rolling Window. It applies
// to withdrawals out of trading wallets (the only money-out flow with limits so far): their
// hold reserves the amount on a limit account of trading's journal (docs/decisions.md,
// "Limits").
type Limit struct {
	Name string
	// Scope: WALLET (each wallet, of Wallets or of all the company's) or COMPANY (all its
	// wallets together).
	Scope   string
	Wallets []string
	// Currency is a currency code: the limit applies to withdrawals in it; or USD: it applies
	// to withdrawals in every currency, valued at trading's prices (LimitUSD).
	Currency string
	// MaxPerTransaction is the most one withdrawal may move ("" none).
	MaxPerTransaction string
	// Amount is the most that may leave within Window ("" none: Window is then unused).
	Amount string
	Window time.Duration
}

// LimitUSD is the currency of a limit valued in US dollars.
const LimitUSD = "USD"

// Applies reports whether l bounds a withdrawal of currency out of walletID.
func (l Limit) Applies(walletID, currency string) bool {
	if l.Currency != currency && l.Currency != LimitUSD {
		return false
	}
	return l.Scope == ScopeCompany || len(l.Wallets) == 0 || slices.Contains(l.Wallets, walletID)
}

// validateLimits refuses limits a company could not mean, naming the limit and the field
// (limits[i].field).
func validateLimits(limits []Limit, k Known) error {
	if len(limits) > MaxLimits {
		return apperr.Invalid(apperr.CodeLength, "limits", "a policy has at most %d limits, got %d", MaxLimits, len(limits))
	}
	names := map[string]bool{}
	for i, l := range limits {
		field := func(f string) string { return fmt.Sprintf("limits[%d].%s", i, f) }
		switch {
		case l.Name == "":
			return apperr.Invalid(apperr.CodeMissing, field("name"), "Missing mandatory field: %s", field("name"))
		case len(l.Name) > MaxNameLength || !namePattern.MatchString(l.Name):
			return apperr.Invalid(apperr.CodeFormat, field("name"), "%s must be 1 to %d letters, digits, spaces, dots, dashes or underscores", field("name"), MaxNameLength)
		case names[l.Name]:
			return apperr.Invalid(apperr.CodeFormat, field("name"), "limit name %q is used twice", l.Name)
		case l.Scope != ScopeWallet && l.Scope != ScopeCompany:
			return apperr.Invalid(apperr.CodeFormat, field("scope"), "limit %q: scope must be %s or %s, got %q", l.Name, ScopeWallet, ScopeCompany, l.Scope)
		case l.Scope == ScopeCompany && len(l.Wallets) > 0:
			return apperr.Invalid(apperr.CodeFormat, field("wallets"), "limit %q: a %s limit names no wallets", l.Name, ScopeCompany)
		case l.Currency == "":
			return apperr.Invalid(apperr.CodeMissing, field("currency"), "Missing mandatory field: %s (limit %q)", field("currency"), l.Name)
		case k.Currencies != nil && l.Currency != LimitUSD && !slices.Contains(k.Currencies, l.Currency):
			return apperr.Invalid(apperr.CodeFormat, field("currency"), "limit %q: currency %q is not known", l.Name, l.Currency)
		case l.MaxPerTransaction == "" && l.Amount == "":
			return apperr.Invalid(apperr.CodeMissing, field("amount"), "limit %q sets neither maxPerTransaction nor amount", l.Name)
		}
		names[l.Name] = true
		if err := checkValues(field("wallets"), l.Name, l.Wallets, nil); err != nil {
			return err
		}
		for j, w := range l.Wallets {
			if k.Wallet != nil && !k.Wallet(w) {
				return apperr.Invalid(apperr.CodeFormat, field(fmt.Sprintf("wallets[%d]", j)), "limit %q: wallets[%d] %q is not a wallet id of the company", l.Name, j, w)
			}
		}
		for _, a := range []struct{ name, value string }{{"maxPerTransaction", l.MaxPerTransaction}, {"amount", l.Amount}} {
			if a.value == "" {
				continue
			}
			places := int32(LimitPlaces)
			if l.Currency == LimitUSD {
				places = 2
			}
			if v, err := amount.ParseAmount(a.value, places); err != nil || v.Sign() <= 0 {
				return apperr.Invalid(apperr.CodeFormat, field(a.name), "limit %q: %s must be a positive canonical decimal such as \"10.5\", got %q", l.Name, a.name, a.value)
			}
		}
		if l.Amount != "" && (l.Window < MinWindow || l.Window > MaxWindow) {
			return apperr.Invalid(apperr.CodeLength, field("window"), "limit %q: window must be between %s and %s, got %s", l.Name, MinWindow, MaxWindow, l.Window)
		}
	}
	return nil
}
