package trading

import (
	"strings"
	"time"
)

// Venue settlement wallets hold a trading venue's side of settlements: one wallet per venue
// and currency, id `<venueId>-ISW-<currency>` (e.g. BYBIT-ISW-BTC), owned by the venue's
// company `VENUE-<venueId>`. Settlement movements go between a client's trading wallet and
// the venue's settlement wallet, so money is conserved across both.
const (
	venueWalletInfix   = "-ISW-"
	venueCompanyPrefix = "VENUE-"
	// VenueWalletCreator is the createdBy of venue settlement wallets.
	VenueWalletCreator = "SYS_SettlementFundManager"
)

// VenueCompanyID is the company that owns a venue's settlement wallets.
func VenueCompanyID(venueID string) string { return venueCompanyPrefix + venueID }

// VenueWalletID is the id of a venue's settlement wallet in currency.
func VenueWalletID(venueID, currency string) string { return venueID + venueWalletInfix + currency }

// NewVenueWallet returns the empty settlement wallet of a venue in currency, created at.
func NewVenueWallet(venueID, currency string, at time.Time) Wallet {
	at = at.UTC().Truncate(time.Millisecond)
	return Wallet{ID: VenueWalletID(venueID, currency), VenueID: venueID, Name: venueID + " settlement " + currency,
		Status: StatusActive, CompanyID: VenueCompanyID(venueID), Currency: currency,
		Balances: []Balance{ZeroBalance(currency)}, CustomProperties: `{}`, CreatedBy: VenueWalletCreator,
		CreatedAt: at, UpdatedAt: at, Version: 1}
}

// VenueWalletFor returns the venue settlement wallet that (companyID, walletID, currency)
// names, if they name one consistently: the id's venue owns it and the id's currency is the
// movement's. Such a wallet is created on its first movement.
func VenueWalletFor(companyID, walletID, currency string, at time.Time) (Wallet, bool) {
	i := strings.LastIndex(walletID, venueWalletInfix)
	if i <= 0 {
		return Wallet{}, false
	}
	venue, cur := walletID[:i], walletID[i+len(venueWalletInfix):]
	if !venuePattern.MatchString(venue) || len(venue) > MaxVenueLength || cur != currency || companyID != VenueCompanyID(venue) {
		return Wallet{}, false
	}
	if _, ok := CurrencyDecimals(cur); !ok {
		return Wallet{}, false
	}
	return NewVenueWallet(venue, cur, at), true
}
