package trading

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/zcustody/suite/services/canonical"
	"github.com/zcustody/suite/services/internal/ledger"
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
// whose key signs them. Its postal address is left to configuration (not yet wired).
func DefaultCustodian() Party {
	return Party{ID: "CUSTODIAN", Name: "Custody Suite Operator", Address: PostalAddress{Country: "GB"}}
}

// IntegrityDetails proves that the platform generated an address.
type IntegrityDetails struct {
	Signature         string // base64 Ed25519 signature over SignedRecord
	OperatorPublicKey string // base64 of the raw 32-byte Ed25519 public key
}

// VaultAddress is a deposit address generated for one currency of a trading wallet.
type VaultAddress struct {
	Address     string
	Ledger      string
	WalletID    string
	CompanyID   string
	CurrencyID  string // e.g. usdc-eth
	Currency    string // currency code, e.g. USDC
	WalletOwner Party
	Custodian   Party
	Integrity   IntegrityDetails
	CreatedAt   time.Time
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
// {address, ledger, walletId, currencyId, walletOwner, custodian}, parties as
// {id, name, address{address1, address2, city, country, zipCode}}. A client rebuilds it from
// the JSON record it received by dropping integrityDetails and canonicalising the rest.
func (a VaultAddress) SignedRecord() ([]byte, error) {
	return canonical.Marshal(signedRecord{Address: a.Address, Ledger: a.Ledger, WalletID: a.WalletID,
		CurrencyID: a.CurrencyID, WalletOwner: a.WalletOwner, Custodian: a.Custodian})
}

// Sign sets the integrity details of a with the operator key.
func (a *VaultAddress) Sign(key ed25519.PrivateKey) error {
	msg, err := a.SignedRecord()
	if err != nil {
		return err
	}
	pub, ok := key.Public().(ed25519.PublicKey)
	if !ok {
		return errors.New("sign address: not an Ed25519 key")
	}
	a.Integrity = IntegrityDetails{Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)),
		OperatorPublicKey: base64.StdEncoding.EncodeToString(pub)}
	return nil
}

// NewVaultAddresses generates and signs one address per currency of the wallet: every
// supported currency whose code is the wallet's (USDC gets one on ETH and one on XLM).
func NewVaultAddresses(w Wallet, owner, custodian Party, key ed25519.PrivateKey, now time.Time) ([]VaultAddress, error) {
	var out []VaultAddress
	for _, c := range ledger.Currencies() {
		if c.Code != w.Currency {
			continue
		}
		addr, err := ledger.Generate(c.Ledger)
		if err != nil {
			return nil, err
		}
		a := VaultAddress{Address: addr, Ledger: c.Ledger, WalletID: w.ID, CompanyID: w.CompanyID, CurrencyID: c.CurrencyID,
			Currency: c.Code, WalletOwner: owner, Custodian: custodian, CreatedAt: now}
		if err := a.Sign(key); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("vault addresses of %s: unsupported currency %q", w.ID, w.Currency)
	}
	return out, nil
}
