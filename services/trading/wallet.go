// Package trading is the domain of trading wallets: wallets held at trading venues, their
// balances valued in fiat, and the vault (deposit) addresses generated for them.
package trading

import (
	"regexp"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/internal/page"
)

// Wallet statuses.
const (
	StatusActive      = "ACTIVE"
	StatusDeactivated = "DEACTIVATED"
)

// Statuses lists the allowed values of the statuses filter.
func Statuses() []string { return []string{StatusActive, StatusDeactivated} }

// Balance is one currency's balances, each a canonical decimal string in the currency's
// main unit.
type Balance struct {
	Currency   string
	Available  string
	Ledger     string
	PendingOut string
	PendingIn  string
	FeeBuffer  string
	// SubClients maps a sub-client reference to its available balance.
	SubClients map[string]string
}

// ZeroBalance is the balance of a new wallet in currency.
func ZeroBalance(currency string) Balance { return BalanceOf(currency, "0", "0", "0", "0") }

// Wallet is a trading wallet of a company at a trading venue.
type Wallet struct {
	ID        string // <COMPANY>-TW-<10>
	VenueID   string
	Name      string
	Status    string
	CompanyID string
	Currency  string
	Balances  []Balance
	// CustomProperties is a JSON object, stored and returned exactly as given.
	CustomProperties string
	CreatedBy        string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Version          int64
	// RequestID is the service request that created the wallet; DeactivatedBy the one that
	// deactivated it. They make a repeated execution recognisable as a repeat.
	RequestID     string
	DeactivatedBy string
}

// NewWalletID returns a fresh wallet id of the company.
func NewWalletID(companyID string) string { return companyID + "-TW-" + ids.Random(10) }

var walletIDSuffix = regexp.MustCompile(`^-TW-[A-Z0-9]{10}$`)

// IsWalletIDOf reports whether id is shaped as a wallet id of companyID.
func IsWalletIDOf(companyID, id string) bool {
	return len(id) > len(companyID) && id[:len(companyID)] == companyID && walletIDSuffix.MatchString(id[len(companyID):])
}

// CheckActive refuses a wallet that is not active: 409 ER-113.
func (w Wallet) CheckActive() error {
	if w.Status == StatusActive {
		return nil
	}
	return apperr.Precondition(apperr.CodeDeactivated, "walletId", "wallet %s is %s", w.ID, w.Status)
}

// WalletFilter is a validated search of endpoint 2: values OR-ed within a field, fields
// AND-ed, exact matches; CompanyID (the caller's company) is always applied.
type WalletFilter struct {
	CompanyID string
	// OperatedVenues widens the scope to every wallet held at these venues, of any client:
	// the venues the caller's company operates.
	OperatedVenues []string
	IDs            []string
	VenueIDs       []string
	Names          []string
	Statuses       []string
	CompanyIDs     []string
	Currencies     []string // the wallet's currency
	CreatedBy      []string
	Page           page.Page
}

// AddressFilter is a validated search of endpoint 7, scoped like WalletFilter.
type AddressFilter struct {
	CompanyID  string
	Addresses  []string
	WalletIDs  []string
	Currencies []string // currency code of the address (USDC matches usdc-eth and usdc-xlm)
	Page       page.Page
}
