// Package address is the domain of interchange's addresses: whitelisted addresses (endpoint
// 9, created and deactivated through the service desk's 0x0007-007 and 0x0007-008) and the
// generated addresses of venue settlement wallets (endpoint 8).
package address

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/page"
)

// Whitelisted address statuses.
const (
	StatusActive      = "ACTIVE"
	StatusDeactivated = "DEACTIVATED"
)

// transitions is a whitelisted address's state machine: it is created ACTIVE (0x0007-007)
// and deactivated once (0x0007-008); a deactivated address is never active again (whitelisting
// the same address again creates a new one).
var transitions = map[string][]string{
	StatusActive: {StatusDeactivated},
}

// Allowed reports whether a whitelisted address may move from one status to the other.
func Allowed(from, to string) bool { return slices.Contains(transitions[from], to) }

// Address purposes.
const (
	PurposeIncoming = "INCOMING"
	PurposeOutgoing = "OUTGOING"
)

// Statuses lists the allowed values of the statuses filter.
func Statuses() []string { return []string{StatusActive, StatusDeactivated} }

// Purposes lists the allowed address purposes, in the order they are stored.
func Purposes() []string { return []string{PurposeIncoming, PurposeOutgoing} }

// Whitelisted is an address a company whitelisted under a VASP (and optionally a
// beneficiary). Among a company's ACTIVE addresses, (blockchain, address) is unique.
type Whitelisted struct {
	ID              string // UUID, the "beneficiary address id" reserved at create
	CompanyID       string
	Address         string // as submitted
	Blockchain      string // ledger code: BTC, ETH, XLM, XRP
	Purposes        []string
	BeneficiaryID   string
	BeneficiaryName string
	Notes           string
	Hosted          bool
	VaspID          string
	VaspName        string
	Status          string
	CreatedBy       string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Version         int64
	// RequestID is the service request that whitelisted the address; DeactivatedBy the one
	// that deactivated it. They make a repeated execution recognisable as a repeat.
	RequestID     string
	DeactivatedBy string
	// EventSeq is the address's event sequence as read with Version: the store numbers the
	// events of the next change after it (each change is guarded by the version).
	EventSeq int64
}

// BlockchainID is the contract's `<chain>-<chain>` form of a ledger code: the currency id of
// the ledger's native asset (ETH → eth-eth).
func BlockchainID(blockchain string) string {
	if c, ok := ledger.NativeOf(blockchain); ok {
		return c.CurrencyID
	}
	return strings.ToLower(blockchain) + "-" + strings.ToLower(blockchain)
}

// BlockchainIDs lists the allowed values of the blockchainIds filter.
func BlockchainIDs() []string {
	var ids []string
	for _, l := range ledger.Ledgers() {
		ids = append(ids, BlockchainID(l))
	}
	return ids
}

// Normalize returns the form of an address that identifies it on its ledger: bech32 (BTC)
// and hexadecimal (ETH) addresses are case-insensitive, so they compare in lower case;
// StrKey (XLM) and base58 (XRP) addresses are case-sensitive and compare as they are.
func Normalize(blockchain, addr string) string {
	switch blockchain {
	case ledger.BTC, ledger.ETH:
		return strings.ToLower(addr)
	}
	return addr
}

// ActiveKey is what makes an ACTIVE address unique within its company:
// company, blockchain and normalised address.
func ActiveKey(companyID, blockchain, addr string) string {
	return companyID + "|" + blockchain + "|" + Normalize(blockchain, addr)
}

// Key is the unique key of w while it is ACTIVE.
func (w Whitelisted) Key() string { return ActiveKey(w.CompanyID, w.Blockchain, w.Address) }

// NewID returns a fresh whitelisted address id (a random UUID).
func NewID() string { return uuid.NewString() }

// IsID reports whether id is shaped as a whitelisted address id (a UUID in lower case).
func IsID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

// CheckMove refuses a change of status the state machine does not allow: 409 ER-113 (an
// address no longer active cannot be deactivated again).
func (w Whitelisted) CheckMove(to string) error {
	if Allowed(w.Status, to) {
		return nil
	}
	return apperr.Precondition(apperr.CodeDeactivated, "address", "whitelisted address %s is %s", w.Address, w.Status)
}

// AlreadyWhitelisted is the refusal of an address the company already holds ACTIVE on the
// blockchain: 409 ER-104. It is final (apperr.Exists): the service desk records a request
// refused with it as FAILED rather than retrying it.
func AlreadyWhitelisted(blockchain, addr string) error {
	return apperr.Exists("address", "address %s is already whitelisted on %s", addr, blockchain)
}

// Filter is a validated search of endpoint 9: values OR-ed within a field, fields AND-ed,
// exact matches except Fragment (a case-insensitive substring of the address); CompanyID
// (the caller's company) is always applied.
type Filter struct {
	CompanyID     string
	Addresses     []string
	Blockchains   []string
	BlockchainIDs []string
	Statuses      []string
	Fragment      string
	Page          page.Page
}

// MaxFragmentLength bounds addressFragment (the longest supported address is 56 characters).
const MaxFragmentLength = 128
