package compliance_test

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/compliance"
)

func TestNewBeneficiaryID(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^BNF-ZTEST-[A-Z0-9]{10}$`)
	a, b := compliance.NewBeneficiaryID("ZTEST"), compliance.NewBeneficiaryID("ZTEST")
	for _, id := range []string{a, b} {
		if !shape.MatchString(id) {
			t.Errorf("NewBeneficiaryID(ZTEST) = %q, want %s", id, shape)
		}
		if err := compliance.CheckReservedID(id, "ZTEST"); err != nil {
			t.Errorf("CheckReservedID(%q, ZTEST) = %v, want nil", id, err)
		}
	}
	if a == b {
		t.Errorf("two ids are equal: %s", a)
	}
}

func TestCheckReservedIDRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, id, company string }{
		{"other company", "BNF-ZACME-ABCDEFGHIJ", "ZTEST"},
		{"company prefix of another", "BNF-ZTESTX-ABCDEFGHIJ", "ZTEST"},
		{"suffix too short", "BNF-ZTEST-ABCDEFGHI", "ZTEST"},
		{"suffix too long", "BNF-ZTEST-ABCDEFGHIJK", "ZTEST"},
		{"lower case suffix", "BNF-ZTEST-abcdefghij", "ZTEST"},
		{"symbol in suffix", "BNF-ZTEST-ABCDE-GHIJ", "ZTEST"},
		{"wallet id", "ZTEST-NOBENF-ABCDEFGHIJ", "ZTEST"},
		{"empty", "", "ZTEST"},
		{"no company", "BNF--ABCDEFGHIJ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var e *apperr.Error
			err := compliance.CheckReservedID(tt.id, tt.company)
			if !errors.As(err, &e) || e.Code != apperr.CodeFormat || e.Field != "entityIds" {
				t.Errorf("CheckReservedID(%q, %q) = %v, want ER-108 on entityIds", tt.id, tt.company, err)
			}
		})
	}
}

func TestCreateAndChanges(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	berlin := compliance.Address{Line1: "1 Main Street", City: "Berlin", Country: "DE"}
	b := compliance.Create("BNF-ZTEST-ABCDEFGHIJ", "ZTEST", "maker@ztest", "SERV-REQ-1",
		compliance.NewBeneficiary{EntityType: compliance.EntityCorporate, Name: "Acme", RegisteredAddress: berlin}, at)
	want := compliance.Beneficiary{ID: "BNF-ZTEST-ABCDEFGHIJ", CompanyID: "ZTEST", EntityType: "CORPORATE", Name: "Acme", LegalName: "Acme",
		RegisteredAddress: berlin, Status: "ACTIVE", Version: 1, CreatedAt: at, UpdatedAt: at, CreatedBy: "maker@ztest", LastRequestID: "SERV-REQ-1"}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Fatalf("Create() mismatch (-want +got):\n%s", diff)
	}
	name, paris := "Acme Holding", compliance.Address{Line1: "2 Rue X", City: "Paris", Country: "FR"}
	got := compliance.Update{ID: b.ID, Name: &name, OperatingAddress: &paris}.Apply(b)
	want.Name, want.LegalName, want.OperatingAddress = name, name, &paris
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply() mismatch (-want +got):\n%s", diff)
	}
	if b.Name != "Acme" || b.OperatingAddress != nil {
		t.Errorf("Apply() changed its input: %+v", b)
	}
	if kept := (compliance.Update{ID: b.ID}).Apply(b); !cmp.Equal(kept, b) {
		t.Errorf("an empty update changed the beneficiary: %+v", kept)
	}
	if off := compliance.Deactivate(b); off.Status != compliance.StatusDeactivated || b.Status != compliance.StatusActive {
		t.Errorf("Deactivate() = %q (input now %q), want DEACTIVATED and the input untouched", off.Status, b.Status)
	}
}

func TestCheckChangeable(t *testing.T) {
	t.Parallel()
	if err := compliance.CheckChangeable(compliance.Beneficiary{ID: "B", Status: compliance.StatusActive}); err != nil {
		t.Errorf("ACTIVE: %v, want nil", err)
	}
	var e *apperr.Error
	err := compliance.CheckChangeable(compliance.Beneficiary{ID: "B", Status: compliance.StatusDeactivated})
	if !errors.As(err, &e) || e.Status != codes.FailedPrecondition || e.Code != apperr.CodeDeactivated || e.Field != "beneficiaryId" {
		t.Errorf("DEACTIVATED: %v, want 409 ER-113 on beneficiaryId", err)
	}
}
