package e2e_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
)

// TestDirectoryCheckVasp calls compliance's internal DirectoryService past the gateway, as
// the settlement engine: active follows the operator's switch and the company's own.
func TestDirectoryCheckVasp(t *testing.T) {
	t.Parallel()
	withTestVASPs(t)
	client, ctx := directoryAs(t, "settlement-engine")
	check := func(companyID, vaspID string) (*compliancev1.CheckVaspResponse, error) {
		return client.CheckVasp(ctx(), &compliancev1.CheckVaspRequest{CompanyId: companyID, VaspId: vaspID})
	}
	tests := []struct {
		name     string
		company  string
		vasp     string
		want     *compliancev1.CheckVaspResponse
		wantCode codes.Code
	}{
		{"switched off by the operator", demo.CompanyZTEST, "VASP-004", &compliancev1.CheckVaspResponse{VaspId: "VASP-004", VaspName: "Dormant Exchange"}, codes.OK},
		{"restricted to the company", demo.CompanyZACME, "VASP-003", &compliancev1.CheckVaspResponse{VaspId: "VASP-003", VaspName: "Acme Partner Brokerage", Active: true}, codes.OK},
		{"restricted to another company", demo.CompanyZTEST, "VASP-003", nil, codes.NotFound},
		{"restricted to nobody asking", demo.CompanyZACME, "E2E-HIDDEN", nil, codes.NotFound},
		{"unknown", demo.CompanyZTEST, "VASP-999", nil, codes.NotFound},
		{"no company", "", "VASP-001", nil, codes.InvalidArgument},
		{"no VASP", demo.CompanyZTEST, "", nil, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := check(tt.company, tt.vasp)
			if status.Code(err) != tt.wantCode {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); tt.want != nil && diff != "" {
				t.Errorf("CheckVasp (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("follows the company's activation", func(t *testing.T) {
		t.Parallel()
		ztest := newClient(demo.CompanyZTEST, company)
		for _, valid := range []bool{false, true, false} {
			setVASP(t, ztest, "E2E-DIR-1", valid)
			got, err := check(demo.CompanyZTEST, "E2E-DIR-1")
			if err != nil || got.GetActive() != valid {
				t.Errorf("after setting %v: %v, %v", valid, got, err)
			}
		}
	})
}

func TestDirectoryCheckBeneficiary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		company  string
		id       string
		want     *compliancev1.CheckBeneficiaryResponse
		wantCode codes.Code
	}{
		{"demo ZTEST", demo.CompanyZTEST, demo.BeneficiaryZTEST, &compliancev1.CheckBeneficiaryResponse{BeneficiaryId: demo.BeneficiaryZTEST, BeneficiaryName: "Northwind Trading Ltd", Active: true}, codes.OK},
		{"demo ZACME", demo.CompanyZACME, demo.BeneficiaryZACME, &compliancev1.CheckBeneficiaryResponse{BeneficiaryId: demo.BeneficiaryZACME, BeneficiaryName: "Helvetia Metals AG", Active: true}, codes.OK},
		{"another company's", demo.CompanyZTEST, demo.BeneficiaryZACME, nil, codes.NotFound},
		{"unknown", demo.CompanyZTEST, "BNF-ZTEST-UNKNOWN000", nil, codes.NotFound},
		{"no beneficiary", demo.CompanyZTEST, "", nil, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := checkBeneficiary(t, tt.company, tt.id)
			if status.Code(err) != tt.wantCode {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); tt.want != nil && diff != "" {
				t.Errorf("CheckBeneficiary (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDirectoryCallers: any internal system may ask; a company's principal (even one the
// gateway signed) may not, nor a caller without a principal.
func TestDirectoryCallers(t *testing.T) {
	t.Parallel()
	gatewayKey, err := principal.LoadPrivateKey(filepath.Join(env.dataDir, "keys", "gateway-principal.pem"))
	if err != nil {
		t.Fatal(err)
	}
	gatewaySigned := func(p principal.Principal) context.Context {
		tok, err := principal.NewSigner("gateway", gatewayKey, time.Minute).Sign(p)
		if err != nil {
			t.Fatal(err)
		}
		return metadata.AppendToOutgoingContext(t.Context(), principal.MetadataKey, tok)
	}
	client, engine := directoryAs(t, "settlement-engine")
	_, interchange := directoryAs(t, "interchange")
	tests := []struct {
		name string
		ctx  context.Context
		want codes.Code
	}{
		{"settlement engine", engine(), codes.OK},
		{"interchange", interchange(), codes.OK},
		{"company via the gateway key", gatewaySigned(principal.Principal{Kind: principal.KindCompany, CompanyID: demo.CompanyZTEST}), codes.PermissionDenied},
		{"maker via the gateway key", gatewaySigned(principal.Principal{Kind: principal.KindUser, CompanyID: demo.CompanyZTEST,
			UserEmail: demo.UserEmail("ztest", maker), Roles: []string{principal.RoleMaker}}), codes.PermissionDenied},
		{"no principal", t.Context(), codes.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.CheckVasp(tt.ctx, &compliancev1.CheckVaspRequest{CompanyId: demo.CompanyZTEST, VaspId: "VASP-001"})
			if status.Code(err) != tt.want {
				t.Errorf("CheckVasp: code %v (%v), want %v", status.Code(err), err, tt.want)
			}
			// An admitted caller learns that the beneficiary does not exist; the others nothing.
			wantBeneficiary := tt.want
			if wantBeneficiary == codes.OK {
				wantBeneficiary = codes.NotFound
			}
			_, err = client.CheckBeneficiary(tt.ctx, &compliancev1.CheckBeneficiaryRequest{CompanyId: demo.CompanyZTEST, BeneficiaryId: "BNF-ZTEST-NOSUCH0000"})
			if status.Code(err) != wantBeneficiary {
				t.Errorf("CheckBeneficiary: code %v (%v), want %v", status.Code(err), err, wantBeneficiary)
			}
		})
	}
}
