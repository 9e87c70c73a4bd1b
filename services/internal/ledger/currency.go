// Package ledger knows the blockchains and currencies the suite supports: their ledger code,
// currency id, base unit and decimals. Address formats live in address.go.
package ledger

import "slices"

// Ledger codes (the contract's `ledger` / `blockchain`).
const (
	BTC = "BTC"
	ETH = "ETH"
	XLM = "XLM"
	XRP = "XRP"
)

// Currency is one supported asset on one ledger.
type Currency struct {
	Code       string // e.g. BTC, USDC
	CurrencyID string // e.g. btc-btc, usdc-eth (<asset>-<ledger>, lower case)
	Ledger     string // ledger code
	Decimals   int32  // digits of the base unit
	Unit       string // base unit name, e.g. SATOSHI
	Native     bool   // the ledger's own asset (pays fees and reserves)
}

var currencies = []Currency{
	{Code: "BTC", CurrencyID: "btc-btc", Ledger: BTC, Decimals: 8, Unit: "SATOSHI", Native: true},
	{Code: "ETH", CurrencyID: "eth-eth", Ledger: ETH, Decimals: 18, Unit: "WEI", Native: true},
	{Code: "USDC", CurrencyID: "usdc-eth", Ledger: ETH, Decimals: 6, Unit: "USDC_BASE"},
	{Code: "XLM", CurrencyID: "xlm-xlm", Ledger: XLM, Decimals: 7, Unit: "STROOP", Native: true},
	{Code: "USDC", CurrencyID: "usdc-xlm", Ledger: XLM, Decimals: 7, Unit: "STROOP"},
	{Code: "EURC", CurrencyID: "eurc-xlm", Ledger: XLM, Decimals: 7, Unit: "STROOP"},
	{Code: "XRP", CurrencyID: "xrp-xrp", Ledger: XRP, Decimals: 6, Unit: "DROP", Native: true},
}

// Currencies returns every supported currency.
func Currencies() []Currency { return slices.Clone(currencies) }

// ByID returns the currency with currencyID (e.g. "btc-btc").
func ByID(currencyID string) (Currency, bool) {
	i := slices.IndexFunc(currencies, func(c Currency) bool { return c.CurrencyID == currencyID })
	if i < 0 {
		return Currency{}, false
	}
	return currencies[i], true
}

// NativeOf returns the native currency of a ledger code (BTC, ETH, XLM, XRP).
func NativeOf(ledgerCode string) (Currency, bool) {
	i := slices.IndexFunc(currencies, func(c Currency) bool { return c.Ledger == ledgerCode && c.Native })
	if i < 0 {
		return Currency{}, false
	}
	return currencies[i], true
}

// Ledgers returns the supported ledger codes.
func Ledgers() []string { return []string{BTC, ETH, XLM, XRP} }
