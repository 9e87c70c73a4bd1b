package custody

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/zcustody/suite/platform/apperr"
	exact "github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Fee entry statuses (endpoint 12).
const (
	FeeStatusSuccess = "SUCCESS"
	FeeStatusError   = "ERROR"
)

// Limits of a fee estimate.
const (
	MaxFeeValues = 10          // values per tier
	MaxFeeSkew   = time.Minute // how far in the future an observation may be
)

// FeeModel says how fees are priced on a ledger: the entry's `type`, its `weight` (the unit
// of the values) and the finest fraction of that unit.
type FeeModel struct {
	Type     string
	Weight   string
	Decimals int32
}

// feeModels: fees are paid in the ledger's native asset, so a token's values use the unit of
// its ledger (usdc-eth in Gwei, usdc-xlm in stroops).
var feeModels = map[string]FeeModel{
	ledger.BTC: {Type: "UTXO", Weight: "sat/vB", Decimals: 3},     // 0.001 sat/vB = 1 sat/kvB
	ledger.ETH: {Type: "GAS", Weight: "Gwei", Decimals: 9},        // gas price; 1e-9 Gwei = 1 wei
	ledger.XLM: {Type: "BASE_FEE", Weight: "stroop", Decimals: 0}, // per operation
	ledger.XRP: {Type: "BASE_FEE", Weight: "drop", Decimals: 0},   // per transaction
}

// FeeModelOf returns the fee model of a currency's ledger.
func FeeModelOf(cur ledger.Currency) FeeModel { return feeModels[cur.Ledger] }

// FeeEstimate is the fee estimate of one currency: 1..10 positive values per tier in its fee
// unit, canonical decimal strings, high ≥ medium ≥ low.
type FeeEstimate struct {
	CurrencyID string
	High       []string
	Medium     []string
	Low        []string
	ObservedAt time.Time
}

// CheckFeeEstimate validates e (field names it in messages, e.g. estimates[0]), observed no
// later than now + MaxFeeSkew, and returns it with its currency id as the table spells it.
func CheckFeeEstimate(field string, e FeeEstimate, now time.Time) (FeeEstimate, error) {
	cur, ok := ledger.ByID(e.CurrencyID)
	if !ok {
		return FeeEstimate{}, apperr.Invalid(apperr.CodeCurrency, field+".currencyId", "currencyId %q is not a supported currency", e.CurrencyID)
	}
	if e.ObservedAt.After(now.Add(MaxFeeSkew)) {
		return FeeEstimate{}, apperr.Invalid(apperr.CodeFormat, field+".observedAt", "observedAt %s is in the future", e.ObservedAt.UTC().Format(time.RFC3339))
	}
	model := FeeModelOf(cur)
	names := [3]string{"high", "medium", "low"}
	var canon [3][]string
	var values [3][]decimal.Decimal
	for i, give := range [3][]string{e.High, e.Medium, e.Low} {
		var err error
		if canon[i], values[i], err = feeValues(field+"."+names[i], give, model); err != nil {
			return FeeEstimate{}, err
		}
	}
	for i := 1; i < len(names); i++ {
		if minOf(values[i-1]).LessThan(maxOf(values[i])) {
			return FeeEstimate{}, apperr.Invalid(apperr.CodeFormat, field+"."+names[i],
				"every %s value must be at most every %s value (high ≥ medium ≥ low)", names[i], names[i-1])
		}
	}
	return FeeEstimate{CurrencyID: cur.CurrencyID, High: canon[0], Medium: canon[1], Low: canon[2], ObservedAt: e.ObservedAt}, nil
}

// feeValues checks one tier: 1..10 positive canonical decimals (no sign, exponent, leading or
// trailing zeros) no finer than the fee unit allows.
func feeValues(field string, values []string, model FeeModel) ([]string, []decimal.Decimal, error) {
	if len(values) == 0 {
		return nil, nil, apperr.Invalid(apperr.CodeEmptyList, field, "%s must hold at least one value", field)
	}
	if len(values) > MaxFeeValues {
		return nil, nil, apperr.Invalid(apperr.CodeLength, field, "%s holds %d values, at most %d", field, len(values), MaxFeeValues)
	}
	canon := make([]string, len(values))
	ds := make([]decimal.Decimal, len(values))
	for i, v := range values {
		d, err := exact.ParsePositive(v)
		if err != nil {
			return nil, nil, apperr.Invalid(apperr.CodeFormat, field, "%s[%d] %q: %v", field, i, v, err)
		}
		if !d.Shift(model.Decimals).IsInteger() {
			return nil, nil, apperr.Invalid(apperr.CodeFormat, field, "%s[%d] %q has more than %d decimals of %s", field, i, v, model.Decimals, model.Weight)
		}
		canon[i], ds[i] = v, d
	}
	return canon, ds, nil
}

func minOf(ds []decimal.Decimal) decimal.Decimal { return decimal.Min(ds[0], ds[1:]...) }
func maxOf(ds []decimal.Decimal) decimal.Decimal { return decimal.Max(ds[0], ds[1:]...) }

// FeeError is the error object of a fee entry without usable values.
type FeeError struct {
	Code    string
	Message string
}

// FeeEntry is one currency's entry of endpoint 12.
type FeeEntry struct {
	CurrencyID string
	Status     string
	High       []string
	Medium     []string
	Low        []string
	Type       string
	Weight     string
	Error      *FeeError
}

// FeeEntries returns one entry per supported currency, by currency id: the stored estimate
// if it was observed within maxAge of now, otherwise an ER-252 error in place of values.
func FeeEntries(estimates []FeeEstimate, now time.Time, maxAge time.Duration) []FeeEntry {
	byID := make(map[string]FeeEstimate, len(estimates))
	for _, e := range estimates {
		byID[e.CurrencyID] = e
	}
	currencies := ledger.Currencies()
	slices.SortFunc(currencies, func(a, b ledger.Currency) int { return strings.Compare(a.CurrencyID, b.CurrencyID) })
	out := make([]FeeEntry, 0, len(currencies))
	for _, cur := range currencies {
		model := FeeModelOf(cur)
		entry := FeeEntry{CurrencyID: cur.CurrencyID, Type: model.Type, Weight: model.Weight}
		e, ok := byID[cur.CurrencyID]
		if !ok || now.Sub(e.ObservedAt) > maxAge {
			entry.Status, entry.Error = FeeStatusError, &FeeError{Code: apperr.CodeFeeUnavailable, Message: feeUnavailable(cur.CurrencyID)}
		} else {
			entry.Status, entry.High, entry.Medium, entry.Low = FeeStatusSuccess, e.High, e.Medium, e.Low
		}
		out = append(out, entry)
	}
	return out
}

func feeUnavailable(currencyID string) string {
	return fmt.Sprintf("The fee estimate for %s is currently unavailable. Please contact customer support.", currencyID)
}
