package custody

import (
	"strings"

	"github.com/zcustody/suite/platform/apperr"
	money "github.com/zcustody/suite/services/internal/amount" // this package has an amount func
	"github.com/zcustody/suite/services/internal/ledger"
)

// Transfers from trading (issue 18): a withdrawal from a client's trading wallet to one of its
// own custody wallets is two journal entries linked by one transfer id, each through an
// in-transit account of its own journal. Custody's is TransitTrading, a system account of
// custody's journal (unconstrained, created on first use): each credit of a custody wallet
// debits it, so its debits posted are everything that came in from trading.
const (
	TransitTrading = "transit:trading"
	// MaxTransferIDLength bounds a transfer id, so that its entry id and business key stay
	// within the journal's bounds.
	MaxTransferIDLength = 128
	// CreditCode is the journal code of a transfer's credit.
	CreditCode = "withdrawal.credit"
)

// WorldPrefix names the system accounts of the world outside custody (world:deposits pays
// deposits in, world:withdrawals receives withdrawals).
const WorldPrefix = "world:"

// IsSystemAccount reports whether name is a system account of custody's journal (the world
// outside, TransitTrading) rather than a wallet.
func IsSystemAccount(name string) bool {
	return strings.HasPrefix(name, WorldPrefix) || name == TransitTrading
}

// CreditEntryID is the journal entry that credits a custody wallet with transfer id's amount.
func CreditEntryID(transferID string) string { return "wd:" + transferID + ":credit" }

// Credit is a checked transfer into a custody wallet: the wallet's asset it credits and the
// amount, exact.
type Credit struct {
	WalletID string
	Currency ledger.Currency
	Amount   money.Amount
}

// CheckTransferTarget checks that a transfer of amount in currency (a code, as trading names
// it: BTC, USDC…) may credit w: w is ACTIVE (ER-113 deactivated, ER-409 awaiting or refused
// approval), carries an asset of that code (ER-111 on currency) and the amount is a positive
// canonical decimal no finer than the asset's base unit (ER-108 on amount).
func CheckTransferTarget(w Wallet, currency, amt string) (Credit, error) {
	if err := CheckChangeable(w); err != nil {
		return Credit{}, err
	}
	return creditOf(w, currency, amt)
}

// CheckTransferCredit checks a credit of w as CheckTransferTarget does, but for the status: a
// wallet deactivated since the transfer was checked is credited all the same (a transfer
// already approved must land). A wallet that was never ACTIVE (awaiting or refused approval)
// can have passed no check: ER-409.
func CheckTransferCredit(w Wallet, currency, amt string) (Credit, error) {
	if w.Status != StatusActive && w.Status != StatusDeactivated {
		return Credit{}, apperr.Precondition(apperr.CodeConflict, "walletId", "wallet %s is %s and cannot be credited", w.ID, w.Status)
	}
	return creditOf(w, currency, amt)
}

// creditOf finds w's asset of currency code and reads the amount at its precision.
func creditOf(w Wallet, currency, amt string) (Credit, error) {
	cur, ok := w.assetOfCode(currency)
	if !ok {
		return Credit{}, apperr.Invalid(apperr.CodeCurrency, "currency", "wallet %s does not hold %q", w.ID, currency)
	}
	a, err := money.ParsePositiveAmount(amt, cur.Decimals)
	if err != nil {
		return Credit{}, apperr.Invalid(apperr.CodeFormat, "amount", "amount: %s (got %q)", err.Error(), amt)
	}
	return Credit{WalletID: w.ID, Currency: cur, Amount: a}, nil
}

// assetOfCode returns the currency of w's asset whose code is code. A wallet holds assets of
// one ledger, where a code names one currency.
func (w Wallet) assetOfCode(code string) (ledger.Currency, bool) {
	for _, b := range w.AssetBalances {
		if cur, ok := ledger.ByID(b.CurrencyID); ok && cur.Code == code {
			return cur, true
		}
	}
	return ledger.Currency{}, false
}
