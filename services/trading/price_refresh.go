package trading

import (
	"strconv"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/amount"
)

// PriceInput is one entry of SetPrices as the caller sends it.
type PriceInput struct {
	Currency string
	USD      string
}

// MaxPrices bounds the entries of one SetPrices call.
const MaxPrices = 100

// ParsePrices validates a price refresh: 1..MaxPrices entries, each a supported currency
// code named once and a positive plain decimal (at most 18 digits on each side).
func ParsePrices(in []PriceInput, at time.Time) ([]Price, error) {
	if len(in) == 0 {
		return nil, apperr.Invalid(apperr.CodeEmptyList, "prices", "prices must hold at least one price")
	}
	if len(in) > MaxPrices {
		return nil, apperr.Invalid(apperr.CodeLength, "prices", "prices holds more than %d entries", MaxPrices)
	}
	seen := map[string]bool{}
	out := make([]Price, 0, len(in))
	for i, p := range in {
		field := func(name string) string { return "prices[" + strconv.Itoa(i) + "]." + name }
		if p.Currency == "" {
			return nil, apperr.Missing(field("currency"))
		}
		if _, ok := CurrencyDecimals(p.Currency); !ok {
			return nil, apperr.Invalid(apperr.CodeCurrency, field("currency"), "%s %q is not a supported currency", field("currency"), p.Currency)
		}
		if seen[p.Currency] {
			return nil, apperr.Invalid(apperr.CodeFormat, field("currency"), "%s %q is named twice", field("currency"), p.Currency)
		}
		seen[p.Currency] = true
		if p.USD == "" {
			return nil, apperr.Missing(field("usd"))
		}
		d, err := amount.ParsePrice(p.USD)
		if err != nil || d.Sign() <= 0 {
			return nil, apperr.Invalid(apperr.CodeFormat, field("usd"), "%s must be a positive decimal such as \"65000.50\", got %q", field("usd"), p.USD)
		}
		out = append(out, Price{Currency: p.Currency, Price: p.USD, FiatCurrency: FiatUSD, UpdatedAt: at})
	}
	return out, nil
}
