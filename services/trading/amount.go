package trading

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
)

// FiatUSD is the fiat currency of every price: fiatValue and usdValue are both US dollars.
const FiatUSD = "USD"

// Price is the fiat price of one unit of a currency.
type Price struct {
	Currency string // currency code, e.g. BTC
	// Price is a decimal string; its number of decimals is the precision fiat values are
	// shown with (at least).
	Price        string
	FiatCurrency string // always USD
	UpdatedAt    time.Time
}

// Validate checks a price before it is stored.
func (p Price) Validate() error {
	if p.Currency == "" {
		return apperr.Missing("currency")
	}
	if p.FiatCurrency != FiatUSD {
		return apperr.Invalid(apperr.CodeCurrency, "fiatCurrency", "prices are kept in %s, got %q", FiatUSD, p.FiatCurrency)
	}
	if _, err := amount.ParsePrice(p.Price); err != nil {
		return apperr.Invalid(apperr.CodeFormat, "price", "price must be a non-negative decimal, got %q", p.Price)
	}
	return nil
}

// Prices maps a currency code to its price.
type Prices map[string]Price

// Amount is the contract's Amount: the amount in its currency and its value in fiat.
type Amount struct {
	Amount       string
	Unit         string
	FiatValue    string
	FiatCurrency string
	USDValue     string
}

// Value values amount (a canonical decimal string) of currency. The fiat value is exact:
// amount × price, never rounded, shown with at least the price's decimals ("1.23456789" BTC
// at "65000.00" → "80246.91285"; "2" at "65000.00" → "130000.00"). A currency without a
// price, or an amount that is not a decimal, is valued "0".
func (p Prices) Value(amount, currency string) Amount {
	return p.Valuer(currency)(amount)
}

// Valuer values amounts of currency as Value does, parsing the price once: a balance has
// five amounts, a page of wallets tens of them.
func (p Prices) Valuer(currency string) func(amount string) Amount {
	price, priced := p[currency]
	var unit decimal.Decimal
	var places int32
	var zero string
	if priced {
		var err error
		unit, err = decimal.NewFromString(price.Price)
		priced = err == nil
		places = -unit.Exponent()
		zero = format(decimal.Zero, places)
	}
	return func(amount string) Amount {
		out := Amount{Amount: amount, Unit: currency, FiatValue: "0", FiatCurrency: FiatUSD, USDValue: "0"}
		if !priced {
			return out
		}
		fiat := zero // most amounts of a balance are zero
		if amount != "0" {
			a, err := decimal.NewFromString(amount)
			if err != nil {
				return out
			}
			fiat = format(a.Mul(unit), places)
		}
		out.FiatValue, out.USDValue = fiat, fiat
		return out
	}
}

// format renders d exactly, with at least minPlaces decimals.
func format(d decimal.Decimal, minPlaces int32) string {
	s := d.String()
	places := int32(0)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		places = int32(len(s) - i - 1)
	}
	if places >= minPlaces {
		return s
	}
	// Pad with zeros: the same text as d.StringFixed(minPlaces), which would print d again.
	var b strings.Builder
	b.Grow(len(s) + 1 + int(minPlaces-places))
	b.WriteString(s)
	if places == 0 {
		b.WriteByte('.')
	}
	for range minPlaces - places {
		b.WriteByte('0')
	}
	return b.String()
}
