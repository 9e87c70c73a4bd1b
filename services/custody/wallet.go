// Package custody is the domain of custody wallets: the wallet and its balances, the payloads
// of the wallet services of the catalog (0x0013-001 create, 0x0013-002 rename, 0x0013-003
// deactivate), the rules a wallet must satisfy to be changed, the approval of v2 wallet
// proposals (endpoint 4), Stellar trustlines (endpoint 13) and ledger fee estimates
// (endpoint 12).
package custody

import (
	"fmt"
	"regexp"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/internal/ledger"
)

// Wallet statuses.
const (
	StatusActive      = "ACTIVE"
	StatusDeactivated = "DEACTIVATED"
	// StatusPendingAuth is a proposed v2 wallet waiting for a CHECKER (endpoint 4).
	StatusPendingAuth = "PENDING_AUTH"
	// StatusRejected is a proposed v2 wallet a CHECKER rejected; it stays listed, not valid.
	StatusRejected = "REJECTED_BY_AUTHORISER"
)

// NoBeneficiary is the owner segment of the id of a wallet without a walletOwnerId.
const NoBeneficiary = "NOBENF"

// idSuffixLen is the length of the random part of a wallet id.
const idSuffixLen = 10

// Wallet is a custody wallet of a company.
type Wallet struct {
	ID                      string
	Name                    string
	CompanyID               string
	OwnerID                 string // walletOwnerId (a beneficiary id); empty for NOBENF wallets
	CreatedBy               string // e-mail of the maker
	Status                  string
	Valid                   bool
	RegisteredComplianceKey bool
	Blockchain              string // ledger code (BTC, ETH, XLM, XRP)
	CurrencyID              string // the wallet currency, e.g. btc-btc
	AssetBalances           []AssetBalance
	CreatedAt               time.Time
	UpdatedAt               time.Time
	Version                 int64
	// Subentries counts the Stellar account's subentries (its trustlines); each raises the
	// account's minimum balance by 0.5 XLM. Zero on other ledgers.
	Subentries int
	// Intent is the single-use approval intent of a proposed v2 wallet; nil for wallets
	// created through the service desk.
	Intent *Intent
	// LastRequestID is the service request that created or last changed the wallet; a
	// repeated Execute of that request recognises its own change by it.
	LastRequestID string
}

// Opening is what a new wallet is made of.
type Opening struct {
	ID         string
	Name       string
	CompanyID  string
	OwnerID    string
	CreatedBy  string
	CurrencyID string // the wallet currency; its ledger is the wallet's blockchain
	RequestID  string // the service request that creates it, if any
	At         time.Time
	Balance    Amounts // in the wallet currency, main unit; zero when empty
}

// Open returns a new ACTIVE, valid wallet at version 1 holding its balance in its currency. A
// wallet opened in a non-native Stellar asset holds its trustline: one subentry.
func Open(o Opening) (Wallet, error) {
	cur, ok := ledger.ByID(o.CurrencyID)
	if !ok {
		return Wallet{}, apperr.Invalid(apperr.CodeCurrency, "currencyId", "currencyId %q is not a supported currency", o.CurrencyID)
	}
	balance, err := NewAssetBalance(cur, o.Balance)
	if err != nil {
		return Wallet{}, fmt.Errorf("open wallet %s: %w", o.ID, err)
	}
	return Wallet{
		ID: o.ID, Name: o.Name, CompanyID: o.CompanyID, OwnerID: o.OwnerID, CreatedBy: o.CreatedBy,
		Status: StatusActive, Valid: true, Blockchain: cur.Ledger, CurrencyID: cur.CurrencyID,
		AssetBalances: []AssetBalance{balance}, CreatedAt: o.At, UpdatedAt: o.At, Version: 1, LastRequestID: o.RequestID,
		Subentries: trustlines(cur),
	}, nil
}

func trustlines(cur ledger.Currency) int {
	if cur.Ledger == ledger.XLM && !cur.Native {
		return 1
	}
	return 0
}

// NewWalletID returns a fresh wallet id: <COMPANY>-NOBENF-<10> or <COMPANY>-<owner>-<10>.
func NewWalletID(companyID, ownerID string) string {
	return fmt.Sprintf("%s-%s-%s", companyID, ownerSegment(ownerID), ids.Random(idSuffixLen))
}

func ownerSegment(ownerID string) string {
	if ownerID == "" {
		return NoBeneficiary
	}
	return ownerID
}

var suffixPattern = regexp.MustCompile(`^[A-Z0-9]{10}$`)

// CheckReservedID reports whether id is a wallet id NewWalletID could have made for the
// company and owner: Execute accepts only such ids from the service desk.
func CheckReservedID(id, companyID, ownerID string) error {
	prefix := companyID + "-" + ownerSegment(ownerID) + "-"
	if len(id) != len(prefix)+idSuffixLen || id[:len(prefix)] != prefix || !suffixPattern.MatchString(id[len(prefix):]) {
		return apperr.Invalid(apperr.CodeFormat, "entityIds", "entity id %q is not a wallet id reserved for %s", id, prefix+"<10>")
	}
	return nil
}

// CheckChangeable reports whether a wallet may be renamed or deactivated now: it must be
// ACTIVE. A deactivated wallet answers ER-113, a wallet awaiting approval ER-409.
func CheckChangeable(w Wallet) error {
	switch w.Status {
	case StatusActive:
		return nil
	case StatusDeactivated:
		return apperr.Precondition(apperr.CodeDeactivated, "walletId", "wallet %s is deactivated", w.ID)
	}
	return apperr.Precondition(apperr.CodeConflict, "walletId", "wallet %s is %s and cannot be changed", w.ID, w.Status)
}
