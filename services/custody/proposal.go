package custody

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
)

// Intent is the single-use approval intent of a proposed v2 wallet: a CHECKER's signed
// Approve or Reject must name its id and echo its proposal signature.
type Intent struct {
	ID                string // UUID
	ProposalSignature string
	CreatedAt         time.Time
	// Decision is set once the intent is used; it is never used twice.
	Decision *Decision
}

// Decision records who used an intent, how and when.
type Decision struct {
	Type        string // ActionApprove or ActionReject
	AuthorID    string // the CHECKER's user id
	AuthorEmail string
	At          time.Time
}

// Proposal is a new v2 wallet a company user proposes (CustodyAdminService.ProposeLegacyWallet).
type Proposal struct {
	CompanyID  string
	CreatedBy  string // e-mail of the proposing user
	Name       string
	CurrencyID string
	At         time.Time
}

// Propose returns the proposed wallet: PENDING_AUTH, not valid, empty, with a fresh intent.
func Propose(p Proposal) (Wallet, error) {
	if err := checkProposal(p); err != nil {
		return Wallet{}, err
	}
	w, err := Open(Opening{ID: NewWalletID(p.CompanyID, ""), Name: p.Name, CompanyID: p.CompanyID,
		CreatedBy: p.CreatedBy, CurrencyID: p.CurrencyID, At: p.At.UTC().Truncate(time.Millisecond)})
	if err != nil {
		return Wallet{}, err
	}
	return Pending(w, uuid.NewString())
}

// Pending turns w into a wallet waiting for approval under intent intentID (demo data uses a
// fixed one).
func Pending(w Wallet, intentID string) (Wallet, error) {
	w.Status, w.Valid = StatusPendingAuth, false
	w.Intent = &Intent{ID: intentID, CreatedAt: w.CreatedAt}
	sig, err := ProposalSignature(w)
	if err != nil {
		return Wallet{}, err
	}
	w.Intent.ProposalSignature = sig
	return w, nil
}

// companyPattern: company identifiers are 1..12 upper-case letters and digits (walletCompany).
var companyPattern = regexp.MustCompile(`^[A-Z0-9]{1,12}$`)

func checkProposal(p Proposal) error {
	switch {
	case strings.TrimSpace(p.CompanyID) == "":
		return apperr.Missing("companyId")
	case !companyPattern.MatchString(p.CompanyID):
		return apperr.Invalid(apperr.CodeFormat, "companyId", "companyId must be 1 to 12 upper-case letters and digits")
	case strings.TrimSpace(p.CreatedBy) == "":
		return apperr.Missing("createdBy")
	case !strings.Contains(p.CreatedBy, "@"):
		return apperr.Invalid(apperr.CodeFormat, "createdBy", "createdBy must be the e-mail of the proposing user")
	case p.CurrencyID == "":
		return apperr.Missing("currencyId")
	}
	return CheckName("walletName", p.Name)
}

// ProposalSignature is the fingerprint of the proposal an approval echoes: base64 (standard)
// of SHA-256 over the canonical JSON of {walletId, walletName, walletCompany, createdBy,
// currencyId, intentId, createdAt}. A CHECKER's signature covers it, so an approval is bound
// to exactly the proposal it names.
func ProposalSignature(w Wallet) (string, error) {
	intentID := ""
	if w.Intent != nil {
		intentID = w.Intent.ID
	}
	msg, err := canonical.Marshal(map[string]string{
		"walletId": w.ID, "walletName": w.Name, "walletCompany": w.CompanyID, "createdBy": w.CreatedBy,
		"currencyId": w.CurrencyID, "intentId": intentID, "createdAt": w.CreatedAt.UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(msg)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}
