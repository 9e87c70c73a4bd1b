package address

import (
	"crypto/ed25519"
	"regexp"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/genaddr"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/page"
)

// Party is the owner or the custodian of a generated address (named here for callers outside
// services, which cannot import services/internal).
type Party = genaddr.Party

// Settlement is the deposit address of one currency of a company's settlement wallet at a
// venue (WalletID <COMPANY>-ISW-<VENUE>). A company has at most one per venue and currency id.
type Settlement struct {
	genaddr.Record
	CompanyID string
	VenueID   string
	Currency  string // currency code, e.g. USDC
	CreatedAt time.Time
}

var venuePattern = regexp.MustCompile(`^[A-Z0-9_-]{1,24}$`)

// SettlementWalletID is the id of a company's settlement wallet at a venue.
func SettlementWalletID(companyID, venueID string) string { return companyID + "-ISW-" + venueID }

// NewSettlement generates and signs the address of currencyID in the owner's settlement
// wallet at venueID. owner.ID is the company.
func NewSettlement(owner Party, venueID, currencyID string, key ed25519.PrivateKey, now time.Time) (Settlement, error) {
	if owner.ID == "" {
		return Settlement{}, apperr.Missing("companyId")
	}
	if !venuePattern.MatchString(venueID) {
		return Settlement{}, apperr.Invalid(apperr.CodeFormat, "venueId", "venueId must be 1 to 24 of A-Z, 0-9, '_' and '-'")
	}
	c, ok := ledger.ByID(currencyID)
	if !ok {
		return Settlement{}, apperr.Invalid(apperr.CodeCurrency, "currencyId", "unsupported currency id %q", currencyID)
	}
	addr, err := ledger.Generate(c.Ledger)
	if err != nil {
		return Settlement{}, err
	}
	a := Settlement{Record: genaddr.Record{Address: addr, Ledger: c.Ledger, WalletID: SettlementWalletID(owner.ID, venueID),
		CurrencyID: c.CurrencyID, WalletOwner: owner, Custodian: genaddr.DefaultCustodian()},
		CompanyID: owner.ID, VenueID: venueID, Currency: c.Code, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	err = a.Sign(key)
	return a, err
}

// SettlementFilter is a validated search of endpoint 8: exact matches, values OR-ed within a
// field, fields AND-ed; CompanyID (the caller's company) is always applied.
type SettlementFilter struct {
	CompanyID  string
	Addresses  []string
	Currencies []string // currency code (USDC matches usdc-eth and usdc-xlm)
	Page       page.Page
}
