package server_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance"
)

func interchange() context.Context {
	return as(principal.Principal{Kind: principal.KindSystem, System: "interchange"})
}

func TestCheckVasp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.store.SetActivation(context.Background(), company, "V2", false, maker); err != nil {
		t.Fatal(err)
	}
	notFound := wantErr{codes.NotFound, apperr.CodeNotFound, "vaspId"}
	tests := []struct {
		name      string
		giveCo    string
		giveVASP  string
		want      *compliancev1.CheckVaspResponse
		wantError wantErr
	}{
		{"never switched: active", company, "V1", &compliancev1.CheckVaspResponse{VaspId: "V1", VaspName: "One", Active: true}, wantErr{}},
		{"deactivated by the company", company, "V2", &compliancev1.CheckVaspResponse{VaspId: "V2", VaspName: "Two", Active: false}, wantErr{}},
		{"switched off by the operator", company, "V4", &compliancev1.CheckVaspResponse{VaspId: "V4", VaspName: "Four", Active: false}, wantErr{}},
		{"restricted to the asking company", "ZACME", "V3", &compliancev1.CheckVaspResponse{VaspId: "V3", VaspName: "Three", Active: true}, wantErr{}},
		{"restricted to another company", company, "V3", nil, notFound},
		{"unknown", company, "V9", nil, notFound},
		{"ids are case-sensitive", company, "v1", nil, notFound},
		{"no company", "", "V1", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "companyId"}},
		{"no VASP", company, "", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "vaspId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.directory.CheckVasp(interchange(), &compliancev1.CheckVaspRequest{CompanyId: tt.giveCo, VaspId: tt.giveVASP})
			if tt.want == nil {
				checkErr(t, err, tt.wantError)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("CheckVasp() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckBeneficiary(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, company, "BNF-ZTEST-AAAAAAAAAA", nil)
	f.put(t, company, "BNF-ZTEST-BBBBBBBBBB", func(b *compliance.Beneficiary) { b.Status = compliance.StatusDeactivated })
	f.put(t, "ZACME", "BNF-ZACME-CCCCCCCCCC", nil)
	notFound := wantErr{codes.NotFound, apperr.CodeNotFound, "beneficiaryId"}
	tests := []struct {
		name      string
		giveCo    string
		giveID    string
		want      *compliancev1.CheckBeneficiaryResponse
		wantError wantErr
	}{
		{"active", company, "BNF-ZTEST-AAAAAAAAAA", &compliancev1.CheckBeneficiaryResponse{BeneficiaryId: "BNF-ZTEST-AAAAAAAAAA", BeneficiaryName: "Old Name Ltd", Active: true}, wantErr{}},
		{"deactivated", company, "BNF-ZTEST-BBBBBBBBBB", &compliancev1.CheckBeneficiaryResponse{BeneficiaryId: "BNF-ZTEST-BBBBBBBBBB", BeneficiaryName: "Old Name Ltd", Active: false}, wantErr{}},
		{"another company's", company, "BNF-ZACME-CCCCCCCCCC", nil, notFound},
		{"unknown", company, "BNF-ZTEST-ZZZZZZZZZZ", nil, notFound},
		{"no company", "", "BNF-ZTEST-AAAAAAAAAA", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "companyId"}},
		{"no beneficiary", company, "", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "beneficiaryId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.directory.CheckBeneficiary(interchange(), &compliancev1.CheckBeneficiaryRequest{CompanyId: tt.giveCo, BeneficiaryId: tt.giveID})
			if tt.want == nil {
				checkErr(t, err, tt.wantError)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("CheckBeneficiary() (-want +got):\n%s", diff)
			}
		})
	}
}
