// Package compliance is the domain of network compliance: the VASP registry with each
// company's activation of its VASPs, and the beneficiaries of the service desk's
// 0x0007-004/005/006 requests.
package compliance

import (
	"slices"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/page"
)

// Travel-rule methods of a VASP.
const (
	TravelRuleManual   = "MANUAL"
	TravelRuleTrust    = "TRUST"
	TravelRuleZodia    = "ZODIA"
	TravelRuleUnhosted = "UNHOSTED"
)

// TravelRuleMethods lists the travel-rule methods of the registry.
func TravelRuleMethods() []string {
	return []string{TravelRuleManual, TravelRuleTrust, TravelRuleZodia, TravelRuleUnhosted}
}

// VASP is a virtual asset service provider of the registry.
type VASP struct {
	ID               string
	Name             string
	TravelRuleMethod string
	Country          string
	// Active is the operator's switch: an inactive VASP is off for every company.
	Active bool
	// RestrictedCompanies lists the only companies that may use the VASP; empty means all.
	RestrictedCompanies []string
}

// VisibleTo reports whether companyID may see and use the VASP. A VASP restricted to other
// companies answers as not found, never as forbidden.
func (v VASP) VisibleTo(companyID string) bool {
	return len(v.RestrictedCompanies) == 0 || slices.Contains(v.RestrictedCompanies, companyID)
}

// ActiveFor reports whether the VASP is usable by a company whose activation is act (nil
// when the company never chose): the operator's switch and the company's choice, which
// defaults to active.
func (v VASP) ActiveFor(act *Activation) bool {
	return v.Active && (act == nil || act.Active)
}

// VASPFilter is a validated VASP search: values OR-ed within a field, fields AND-ed, only
// the VASPs visible to CompanyID.
type VASPFilter struct {
	CompanyID         string
	IDs               []string
	Names             []string
	TravelRuleMethods []string
	Page              page.Page
}

// Activation is one company's choice to use a VASP or not.
type Activation struct {
	VASPID    string
	CompanyID string
	Active    bool
	Version   int64
	UpdatedAt time.Time
	UpdatedBy string
}

// ActivationChange is one entry of the audit of a company's activation of a VASP: every
// change of state is recorded, a repeat of the current state is not.
type ActivationChange struct {
	Active bool
	At     time.Time
	By     string // e-mail of the user, or the company id for a company-level call
}

// ParseValid reads the {valid} path parameter: exactly "true" or "false".
func ParseValid(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, apperr.Invalid(apperr.CodeFormat, "valid", "valid must be true or false, got %q", s)
}
