package custody

import (
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
)

// Types of a v2 wallet action (DESIGN.md §7).
const (
	ActionApprove = "Approve"
	ActionReject  = "Reject"
)

// Action is the signed `request` of endpoint 4: a CHECKER's decision on a proposed wallet.
type Action struct {
	AuthorID          string
	AuthorDomainID    string
	TargetDomainID    string
	IntentID          string
	ProposalSignature string
	Type              string
}

// Author is the user who signs an action, as the service desk (the owner of users and their
// approval keys) knows them.
type Author struct {
	ID        string
	Email     string
	CompanyID string
	DomainID  string // the domain id (UUID) of the user's company
	Roles     []string
	Active    bool
	PublicKey string // PEM, EC P-256
}

// Check validates the fields of an action: all mandatory, the ids UUID-shaped, the type
// Approve or Reject.
func (a Action) Check() error {
	ids := []struct{ field, value string }{
		{"request.author.id", a.AuthorID}, {"request.author.domainId", a.AuthorDomainID},
		{"request.targetDomainId", a.TargetDomainID}, {"request.intentId", a.IntentID},
	}
	for _, id := range ids {
		if id.value == "" {
			return apperr.Missing(id.field)
		}
		if err := uuid.Validate(id.value); err != nil || len(id.value) != 36 {
			return apperr.Invalid(apperr.CodeFormat, id.field, "%s must be a UUID", id.field)
		}
	}
	switch {
	case a.ProposalSignature == "":
		return apperr.Missing("request.proposalSignature")
	case a.Type == "":
		return apperr.Missing("request.type")
	case a.Type != ActionApprove && a.Type != ActionReject:
		return apperr.Invalid(apperr.CodeFormat, "request.type", "request.type must be %s or %s", ActionApprove, ActionReject)
	}
	return nil
}

// VerifySignature checks signature (base64 DER ECDSA P-256/SHA-256) over the canonical JSON
// of the signed request against the author's registered key: the scheme of the service
// desk's approvals (DESIGN.md §5). Anything that does not verify is a 403.
func VerifySignature(author Author, requestJSON []byte, signature string) error {
	if author.PublicKey == "" {
		return apperr.Forbidden("the author has no registered approval key")
	}
	err := signing.VerifyApproval(author.PublicKey, requestJSON, signature)
	if err == nil {
		return nil
	}
	if !errors.Is(err, signing.ErrBadApprovalSignature) {
		return fmt.Errorf("author %s: %w", author.ID, err) // a broken registered key: internal
	}
	return apperr.ForbiddenField("signature", "the signature does not verify with the author's registered key")
}

// Authorize checks that author may take the action on w: a member of the wallet's company
// whose domain the action names as author and target (ER-114 otherwise), and an active
// CHECKER other than the proposer (403).
func Authorize(w Wallet, author Author, a Action) error {
	if author.CompanyID != w.CompanyID {
		return apperr.Invalid(apperr.CodeOtherCompany, "request.author.id", "the author is not a user of the wallet's company")
	}
	if a.AuthorDomainID != author.DomainID {
		return apperr.Invalid(apperr.CodeOtherCompany, "request.author.domainId", "request.author.domainId is not the author's company domain")
	}
	if a.TargetDomainID != author.DomainID {
		return apperr.Invalid(apperr.CodeOtherCompany, "request.targetDomainId", "request.targetDomainId is not the domain of wallet %s", w.ID)
	}
	switch {
	case !author.Active:
		return apperr.Forbidden("the author is not an active user")
	case !slices.Contains(author.Roles, principal.RoleChecker):
		return apperr.Forbidden("only a CHECKER can approve or reject a wallet")
	case author.Email == w.CreatedBy:
		return apperr.Forbidden("four-eyes rule: the user who proposed wallet %s cannot act on it", w.ID)
	}
	return nil
}

// CheckPending checks that w waits for exactly this intent: PENDING_AUTH, the intent its
// own and unused, the proposal signature its proposal's. A used intent (replay, second
// action) and a mismatch are 409s.
func CheckPending(w Wallet, a Action) error {
	switch {
	case w.Intent == nil || w.Intent.ID != a.IntentID:
		return apperr.Conflict(apperr.CodeConflict, "intent %s is not the approval intent of wallet %s", a.IntentID, w.ID)
	case w.Intent.Decision != nil || w.Status != StatusPendingAuth:
		return apperr.Conflict(apperr.CodeConflict, "intent %s was already used: wallet %s is %s", a.IntentID, w.ID, w.Status)
	case w.Intent.ProposalSignature != a.ProposalSignature:
		return apperr.Conflict(apperr.CodeConflict, "proposalSignature does not match the proposal of wallet %s", w.ID)
	}
	return nil
}

// Outcome is the status and validity an action of actionType leaves the wallet in: Approve →
// ACTIVE and valid, Reject (anything else) → REJECTED_BY_AUTHORISER and not valid.
func Outcome(actionType string) (status string, valid bool) {
	if actionType == ActionApprove {
		return StatusActive, true
	}
	return StatusRejected, false
}
