package trading

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zcustody/suite/services/internal/ledger"
)

// Bounds of the journal API.
const (
	MaxEntryIDLength = 200
	MaxLegsPerEntry  = 2048
)

// Accounts of trading's journal besides the wallets: one clearing account per settlement
// (clearing:<settlementTrackingId>, zero once the settlement is complete), the world
// outside (world:deposits pays deposits in, world:withdrawals receives withdrawals,
// world:network-fees the network fees withdrawals pay), and
// the in-transit account of withdrawals to custody wallets (transit:custody receives what
// leaves a trading wallet for custody; custody's own in-transit account pays it in there,
// so the two cancel out once every transfer has landed).
const (
	ClearingPrefix   = "clearing:"
	WorldPrefix      = "world:"
	WorldDeposits    = WorldPrefix + "deposits"
	WorldWithdrawals = WorldPrefix + "withdrawals"
	WorldNetworkFees = WorldPrefix + "network-fees"
	TransitPrefix    = "transit:"
	TransitCustody   = TransitPrefix + "custody"
	// LimitPrefix starts the limit accounts of the approval policies' limits: limit:grant
	// credits each limit account with its allowance, a withdrawal's reservation moves part of
	// it to limit:used by a hold that expires after the limit's window (LimitAccount).
	LimitPrefix = "limit:"
	LimitGrant  = LimitPrefix + "grant"
	LimitUsed   = LimitPrefix + "used"
)

var limitAccount = regexp.MustCompile(`^limit:[A-Z0-9_-]{1,64}:[A-Za-z0-9_*-]{1,128}:[A-Z0-9]{1,16}:[0-9]{1,10}$`)

// LimitAccount is the constrained account that holds the allowance of a limit of company's
// policy: per wallet (walletID) or for the whole company (walletID "*"), in currency, over a
// window of windowSeconds.
func LimitAccount(company, walletID, currency string, windowSeconds int64) string {
	return fmt.Sprintf("%s%s:%s:%s:%d", LimitPrefix, company, walletID, currency, windowSeconds)
}

// LimitUSD is the currency of limits valued in US dollars: only the limit holders (the limit
// accounts, limit:grant and limit:used) take legs in it, with LimitUSDPlaces decimals.
const (
	LimitUSD       = "USD"
	LimitUSDPlaces = 2
)

// IsLimitHolder reports whether name is a limit account or one of limit:grant, limit:used.
func IsLimitHolder(name string) bool {
	return name == LimitGrant || name == LimitUsed || IsLimitAccount(name)
}

// IsLimitAccount reports whether name is a limit account (LimitAccount).
func IsLimitAccount(name string) bool { return limitAccount.MatchString(name) }

var clearingID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// IsSystemAccount reports whether name is one of the journal's system accounts.
func IsSystemAccount(name string) bool {
	if name == WorldDeposits || name == WorldWithdrawals || name == WorldNetworkFees || name == TransitCustody ||
		name == LimitGrant || name == LimitUsed || IsLimitAccount(name) {
		return true
	}
	id, ok := strings.CutPrefix(name, ClearingPrefix)
	return ok && clearingID.MatchString(id)
}

// DepositEntryID is the journal entry of a deposit.
func DepositEntryID(depositID string) string { return "dep:" + depositID }

// BalanceOf derives the contract's balance of one currency from an account's amounts:
// available (spendable), ledger (settled), pendingOut (held), pendingIn (arriving). The fee
// buffer and sub-client balances have no accounts of their own yet: zero and none.
func BalanceOf(currency, available, ledger, pendingOut, pendingIn string) Balance {
	return Balance{Currency: currency, Available: available, Ledger: ledger, PendingOut: pendingOut, PendingIn: pendingIn,
		FeeBuffer: "0", SubClients: map[string]string{}}
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
