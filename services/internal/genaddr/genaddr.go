// Package genaddr is the generated address record that trading's vault addresses and
// interchange's settlement wallet addresses share: its parties, the operator's integrity
// signature over it and its API form (commonv1.GeneratedAddress).
package genaddr

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zcustody/suite/platform/canonical"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
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

// Record is a generated address as the API shows it.
type Record struct {
	Address     string
	Ledger      string
	WalletID    string
	CurrencyID  string // e.g. usdc-eth
	WalletOwner Party
	Custodian   Party
	Integrity   IntegrityDetails
}

// ErrSignature is returned by Verify and VerifyJSON when the signature is not the operator
// key's over the record.
var ErrSignature = errors.New("generated address: integrity signature does not verify")

// signedRecord is what the integrity signature covers: the record without integrityDetails,
// under the contract's JSON names.
type signedRecord struct {
	Address     string `json:"address"`
	Ledger      string `json:"ledger"`
	WalletID    string `json:"walletId"`
	CurrencyID  string `json:"currencyId"`
	WalletOwner Party  `json:"walletOwner"`
	Custodian   Party  `json:"custodian"`
}

// SignedRecord returns the bytes the integrity signature covers: the canonical JSON
// (platform/canonical: keys sorted, no whitespace, empty fields left out) of
// {address, ledger, walletId, currencyId, walletOwner, custodian}, parties as
// {id, name, address{address1, address2, city, country, zipCode}}. A client rebuilds it from
// the JSON record it received by dropping integrityDetails and canonicalising the rest.
func (r Record) SignedRecord() ([]byte, error) {
	return canonical.Marshal(signedRecord{Address: r.Address, Ledger: r.Ledger, WalletID: r.WalletID,
		CurrencyID: r.CurrencyID, WalletOwner: r.WalletOwner, Custodian: r.Custodian})
}

// Sign sets the integrity details of r with the operator key.
func (r *Record) Sign(key ed25519.PrivateKey) error {
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("sign generated address: no Ed25519 operator key")
	}
	msg, err := r.SignedRecord()
	if err != nil {
		return err
	}
	pub := key.Public().(ed25519.PublicKey)
	r.Integrity = IntegrityDetails{Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)),
		OperatorPublicKey: base64.StdEncoding.EncodeToString(pub)}
	return nil
}

// Verify checks that r's signature is that of the key r's integrity details name; whether
// that key is the operator's is the caller's to check.
func (r Record) Verify() error {
	msg, err := r.SignedRecord()
	if err != nil {
		return err
	}
	return verify(msg, r.Integrity.OperatorPublicKey, r.Integrity.Signature)
}

// VerifyJSON checks a record the way a client does, from its decoded JSON object alone: drop
// integrityDetails, canonicalise the rest and verify with the key integrityDetails names.
func VerifyJSON(record map[string]any) error {
	integrity, _ := record["integrityDetails"].(map[string]any)
	pub, _ := integrity["operatorPublicKey"].(string)
	sig, _ := integrity["signature"].(string)
	rest := make(map[string]any, len(record))
	for k, v := range record {
		if k != "integrityDetails" {
			rest[k] = v
		}
	}
	raw, err := json.Marshal(rest)
	if err != nil {
		return fmt.Errorf("generated address: %w", err)
	}
	msg, err := canonical.FromJSON(raw)
	if err != nil {
		return err
	}
	return verify(msg, pub, sig)
}

func verify(msg []byte, pubB64, sigB64 string) error {
	pub, err := base64.StdEncoding.DecodeString(pubB64)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("generated address: operatorPublicKey %q is not a base64 Ed25519 key", pubB64)
	}
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil {
		return fmt.Errorf("generated address: signature is not base64: %w", err)
	}
	if !ed25519.Verify(pub, msg, sig) {
		return ErrSignature
	}
	return nil
}

// ToProto returns r in its API form.
func (r Record) ToProto() *commonv1.GeneratedAddress {
	return &commonv1.GeneratedAddress{Address: r.Address, Ledger: r.Ledger, WalletId: r.WalletID, CurrencyId: r.CurrencyID,
		WalletOwner: partyProto(r.WalletOwner), Custodian: partyProto(r.Custodian),
		IntegrityDetails: &commonv1.IntegrityDetails{Signature: r.Integrity.Signature, OperatorPublicKey: r.Integrity.OperatorPublicKey}}
}

func partyProto(p Party) *commonv1.Party {
	a := p.Address
	return &commonv1.Party{Id: p.ID, Name: p.Name, Address: &commonv1.PostalAddress{Address1: a.Address1, Address2: a.Address2,
		City: a.City, Country: a.Country, ZipCode: a.ZipCode}}
}
