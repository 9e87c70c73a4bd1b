package address

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"regexp"
	"time"

	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/canonical"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/page"
)

// PostalAddress is a party's postal address.
type PostalAddress struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	ZipCode  string `json:"zipCode"`
}

// Party is the owner or the custodian of a generated address.
type Party struct {
	ID      string        `json:"id"`
	Name    string        `json:"name"`
	Address PostalAddress `json:"address"`
}

// DefaultCustodian is the custodian named on generated addresses: the platform's operator,
// whose key signs them (the same party trading names on vault addresses).
func DefaultCustodian() Party {
	return Party{ID: "CUSTODIAN", Name: "Custody Suite Operator", Address: PostalAddress{Country: "GB"}}
}

// IntegrityDetails proves that the platform generated an address.
type IntegrityDetails struct {
	Signature         string // base64 Ed25519 signature over SignedRecord
	OperatorPublicKey string // base64 of the raw 32-byte Ed25519 public key
}

// Settlement is the deposit address of one currency of a company's settlement wallet at a
// venue. A company has at most one per venue and currency id.
type Settlement struct {
	Address     string
	Ledger      string
	WalletID    string // <COMPANY>-ISW-<VENUE>
	CompanyID   string
	VenueID     string
	CurrencyID  string // e.g. usdc-eth
	Currency    string // currency code, e.g. USDC
	WalletOwner Party
	Custodian   Party
	Integrity   IntegrityDetails
	CreatedAt   time.Time
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
	a := Settlement{Address: addr, Ledger: c.Ledger, WalletID: SettlementWalletID(owner.ID, venueID), CompanyID: owner.ID,
		VenueID: venueID, CurrencyID: c.CurrencyID, Currency: c.Code, WalletOwner: owner, Custodian: DefaultCustodian(),
		CreatedAt: now.UTC().Truncate(time.Millisecond)}
	return a, a.sign(key)
}

// signedRecord is what the integrity signature covers: the generated address record of the
// contract without integrityDetails, under the contract's JSON names.
type signedRecord struct {
	Address     string `json:"address"`
	Ledger      string `json:"ledger"`
	WalletID    string `json:"walletId"`
	CurrencyID  string `json:"currencyId"`
	WalletOwner Party  `json:"walletOwner"`
	Custodian   Party  `json:"custodian"`
}

// SignedRecord returns the bytes the integrity signature covers: the canonical JSON
// (services/canonical: keys sorted, no whitespace, empty fields left out) of
// {address, ledger, walletId, currencyId, walletOwner, custodian}. A client rebuilds it from
// the JSON record it received by dropping integrityDetails and canonicalising the rest.
func (a Settlement) SignedRecord() ([]byte, error) {
	return canonical.Marshal(signedRecord{Address: a.Address, Ledger: a.Ledger, WalletID: a.WalletID,
		CurrencyID: a.CurrencyID, WalletOwner: a.WalletOwner, Custodian: a.Custodian})
}

func (a *Settlement) sign(key ed25519.PrivateKey) error {
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("sign settlement address: no Ed25519 operator key")
	}
	msg, err := a.SignedRecord()
	if err != nil {
		return err
	}
	pub := key.Public().(ed25519.PublicKey)
	a.Integrity = IntegrityDetails{Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)),
		OperatorPublicKey: base64.StdEncoding.EncodeToString(pub)}
	return nil
}

// SettlementFilter is a validated search of endpoint 8: exact matches, values OR-ed within a
// field, fields AND-ed; CompanyID (the caller's company) is always applied.
type SettlementFilter struct {
	CompanyID  string
	Addresses  []string
	Currencies []string // currency code (USDC matches usdc-eth and usdc-xlm)
	Page       page.Page
}
