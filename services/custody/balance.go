package custody

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/zcustody/suite/services/internal/ledger"
)

// AssetBalance is the balance of one currency held by a wallet, in the v2 shape: each amount
// in the main unit (BTC) and in the base unit (SATOSHI), as canonical decimal strings. The two
// forms of an amount always agree exactly: unit = main × 10^decimals.
type AssetBalance struct {
	Currency     string // currency code, e.g. BTC
	CurrencyID   string // e.g. btc-btc
	UnitCurrency string // base unit, e.g. SATOSHI

	AvailableUnitBalance  string
	LedgerUnitBalance     string
	PendingOutUnitBalance string
	PendingInUnitBalance  string
	AvailableBalance      string
	LedgerBalance         string
	PendingOutBalance     string
	PendingInBalance      string
}

// Amounts are the four balances of an asset in the main unit, as decimal strings; an empty
// string is zero.
type Amounts struct {
	Available  string
	Ledger     string
	PendingOut string
	PendingIn  string
}

// NewAssetBalance builds the balance of cur from main-unit amounts. An amount that is
// negative, not a decimal, or finer than the currency's base unit is refused.
func NewAssetBalance(cur ledger.Currency, a Amounts) (AssetBalance, error) {
	b := AssetBalance{Currency: cur.Code, CurrencyID: cur.CurrencyID, UnitCurrency: cur.Unit}
	pairs := []struct {
		name       string
		give       string
		main, unit *string
	}{
		{"available", a.Available, &b.AvailableBalance, &b.AvailableUnitBalance},
		{"ledger", a.Ledger, &b.LedgerBalance, &b.LedgerUnitBalance},
		{"pendingOut", a.PendingOut, &b.PendingOutBalance, &b.PendingOutUnitBalance},
		{"pendingIn", a.PendingIn, &b.PendingInBalance, &b.PendingInUnitBalance},
	}
	for _, p := range pairs {
		main, unit, err := amount(cur, p.give)
		if err != nil {
			return AssetBalance{}, fmt.Errorf("%s %s balance: %w", cur.CurrencyID, p.name, err)
		}
		*p.main, *p.unit = main, unit
	}
	return b, nil
}

// amount returns the canonical main-unit and base-unit strings of a main-unit amount.
func amount(cur ledger.Currency, s string) (main, unit string, err error) {
	if s == "" {
		s = "0"
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a decimal", s)
	}
	if d.Sign() < 0 {
		return "", "", fmt.Errorf("%q is negative", s)
	}
	u := d.Shift(cur.Decimals)
	if !u.IsInteger() {
		return "", "", fmt.Errorf("%q has more than %d decimals", s, cur.Decimals)
	}
	return d.String(), u.String(), nil
}

// Check verifies a balance read or about to be written: a supported currency, canonical
// non-negative amounts, and each base-unit amount equal to its main-unit amount.
func (b AssetBalance) Check() error {
	cur, ok := ledger.ByID(b.CurrencyID)
	if !ok || cur.Code != b.Currency || cur.Unit != b.UnitCurrency {
		return fmt.Errorf("balance of %s/%s/%s: unsupported currency", b.CurrencyID, b.Currency, b.UnitCurrency)
	}
	want, err := NewAssetBalance(cur, Amounts{Available: b.AvailableBalance, Ledger: b.LedgerBalance,
		PendingOut: b.PendingOutBalance, PendingIn: b.PendingInBalance})
	if err != nil {
		return err
	}
	if want != b {
		return fmt.Errorf("balance of %s: amounts are not canonical or base units disagree with main units", b.CurrencyID)
	}
	return nil
}
