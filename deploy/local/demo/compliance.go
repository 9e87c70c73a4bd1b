package demo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/compliance"
	compliancestore "github.com/zcustody/suite/services/compliance/store"
)

// Demo beneficiaries, one ACTIVE per company (tests only read them: changing them would
// disturb the tests that whitelist addresses under them).
const (
	BeneficiaryZTEST = "BNF-ZTEST-DEMO000001"
	BeneficiaryZACME = "BNF-ZACME-DEMO000001"
)

// Beneficiaries returns the demo beneficiaries.
func Beneficiaries() []compliance.Beneficiary {
	created := time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)
	return []compliance.Beneficiary{
		compliance.Create(BeneficiaryZTEST, CompanyZTEST, UserEmail("ztest", "maker"), "", compliance.NewBeneficiary{
			EntityType: compliance.EntityCorporate, Name: "Northwind Trading Ltd",
			RegisteredAddress: compliance.Address{Line1: "10 Fleet Street", City: "London", Country: "GB"},
		}, created),
		compliance.Create(BeneficiaryZACME, CompanyZACME, UserEmail("zacme", "maker"), "", compliance.NewBeneficiary{
			EntityType: compliance.EntityCorporate, Name: "Helvetia Metals AG",
			RegisteredAddress: compliance.Address{Line1: "Bahnhofstrasse 10", City: "Zürich", Country: "CH"},
			OperatingAddress:  &compliance.Address{Line1: "Marina Boulevard 8", City: "Singapore", Country: "SG"},
		}, created),
	}
}

// loadCompliance writes the demo VASP registry and beneficiaries into the compliance
// database. It is idempotent: fixed ids, each entry replaced as a whole.
func loadCompliance(ctx context.Context, client *mongo.Client) error {
	st := compliancestore.New(client.Database("compliance"))
	if err := st.EnsureIndexes(ctx); err != nil {
		return fmt.Errorf("demo compliance: %w", err)
	}
	for _, v := range VASPs() {
		if err := st.PutVASP(ctx, v); err != nil {
			return fmt.Errorf("demo vasp: %w", err)
		}
	}
	for _, b := range Beneficiaries() {
		if err := st.PutBeneficiary(ctx, b); err != nil {
			return fmt.Errorf("demo beneficiary: %w", err)
		}
	}
	return nil
}
