package compliance

import (
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/ids"
)

// Catalog services compliance carries out.
const (
	ServiceCreateBeneficiary     = catalog.BeneficiaryCreate
	ServiceUpdateBeneficiary     = catalog.BeneficiaryUpdate
	ServiceDeactivateBeneficiary = catalog.BeneficiaryDeactivate
)

// Beneficiary statuses.
const (
	StatusActive      = "ACTIVE"
	StatusDeactivated = "DEACTIVATED"
)

// Entity types of a beneficiary.
const (
	EntityIndividual = "INDIVIDUAL"
	EntityCorporate  = "CORPORATE"
)

// idSuffixLen is the length of the random part of a beneficiary id.
const idSuffixLen = 10

// Address is a postal address of a beneficiary.
type Address struct {
	Line1   string
	City    string
	Country string // ISO 3166-1 alpha-2
}

// Beneficiary is a party a company sends assets to (or receives them from).
type Beneficiary struct {
	ID         string // BNF-<COMPANY>-<10>
	CompanyID  string
	EntityType string
	Name       string
	// LegalName is the name the beneficiary is registered under; the 0x0007 payloads carry
	// one name, so it follows Name.
	LegalName         string
	RegisteredAddress Address
	OperatingAddress  *Address // nil when none was given
	Status            string
	Version           int64
	CreatedAt         time.Time
	UpdatedAt         time.Time
	CreatedBy         string // e-mail of the maker
	// LastRequestID is the service request that created or last changed the beneficiary; a
	// repeated Execute of that request recognises its own change by it.
	LastRequestID string
}

// NewBeneficiary is what a 0x0007-004 request creates.
type NewBeneficiary struct {
	EntityType        string
	Name              string
	RegisteredAddress Address
	OperatingAddress  *Address
}

// Update is a 0x0007-005 request: the fields it gives replace the stored ones.
type Update struct {
	ID                string
	Name              *string
	RegisteredAddress *Address
	OperatingAddress  *Address
}

// NewBeneficiaryID returns a fresh id for a beneficiary of companyID: BNF-<COMPANY>-<10>.
func NewBeneficiaryID(companyID string) string {
	return "BNF-" + companyID + "-" + ids.Random(idSuffixLen)
}

// CheckReservedID checks that id is shaped as NewBeneficiaryID makes it for companyID.
func CheckReservedID(id, companyID string) error {
	suffix, ok := strings.CutPrefix(id, "BNF-"+companyID+"-")
	if !ok || companyID == "" || len(suffix) != idSuffixLen || strings.Trim(suffix, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		return apperr.Invalid(apperr.CodeFormat, "entityIds", "entity id %q is not a beneficiary id of company %s", id, companyID)
	}
	return nil
}

// Create returns the ACTIVE beneficiary at version 1 that request requestID of createdBy
// creates under the reserved id.
func Create(id, companyID, createdBy, requestID string, nb NewBeneficiary, at time.Time) Beneficiary {
	return Beneficiary{ID: id, CompanyID: companyID, EntityType: nb.EntityType, Name: nb.Name, LegalName: nb.Name,
		RegisteredAddress: nb.RegisteredAddress, OperatingAddress: nb.OperatingAddress, Status: StatusActive,
		Version: 1, CreatedAt: at, UpdatedAt: at, CreatedBy: createdBy, LastRequestID: requestID}
}

// Apply returns b with the update's fields replaced.
func (u Update) Apply(b Beneficiary) Beneficiary {
	if u.Name != nil {
		b.Name, b.LegalName = *u.Name, *u.Name
	}
	if u.RegisteredAddress != nil {
		b.RegisteredAddress = *u.RegisteredAddress
	}
	if u.OperatingAddress != nil {
		addr := *u.OperatingAddress
		b.OperatingAddress = &addr
	}
	return b
}

// Deactivate returns b deactivated.
func Deactivate(b Beneficiary) Beneficiary {
	b.Status = StatusDeactivated
	return b
}

// CheckChangeable reports whether a beneficiary may be updated or deactivated now: it must be
// ACTIVE. A deactivated beneficiary answers ER-113.
func CheckChangeable(b Beneficiary) error {
	if b.Status == StatusActive {
		return nil
	}
	return apperr.Precondition(apperr.CodeDeactivated, "beneficiaryId", "beneficiary %s is deactivated", b.ID)
}
