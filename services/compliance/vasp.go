// Package compliance is the domain of network compliance: the VASP registry (and, later,
// beneficiaries).
package compliance

import (
	"slices"
	"time"

	"github.com/zcustody/suite/services/apperr"
)

// Travel-rule methods of a VASP.
const (
	TravelRuleManual   = "MANUAL"
	TravelRuleTrust    = "TRUST"
	TravelRuleZodia    = "ZODIA"
	TravelRuleUnhosted = "UNHOSTED"
)

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

// Activation is one company's choice to use a VASP or not.
type Activation struct {
	VASPID    string
	CompanyID string
	Active    bool
	Version   int64
	UpdatedAt time.Time
	UpdatedBy string
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
