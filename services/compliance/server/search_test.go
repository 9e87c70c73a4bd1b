package server_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
)

func TestSearchVaspsValidAndUpdatedAt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	off, err := f.store.SetActivation(ctx, company, "V1", false, maker)
	if err != nil {
		t.Fatal(err)
	}
	on, err := f.store.SetActivation(ctx, company, "V2", true, company)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.SetActivation(ctx, "ZACME", "V4", false, "x"); err != nil { // another company's choice
		t.Fatal(err)
	}
	viewer := as(principal.Principal{Kind: principal.KindUser, CompanyID: company, UserEmail: "v@ztest", Roles: []string{principal.RoleViewer}})
	got, err := f.server.SearchVasps(viewer, &compliancev1.SearchVaspsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &compliancev1.SearchVaspsResponse{Total: 3, Items: []*compliancev1.Vasp{
		{VaspId: "V1", VaspName: "One", TravelRuleMethod: "TRUST", VaspCountry: "GB", Valid: false, UpdatedAt: apitime.Format(off.UpdatedAt)},
		{VaspId: "V2", VaspName: "Two", TravelRuleMethod: "MANUAL", VaspCountry: "CH", Valid: true, UpdatedAt: apitime.Format(on.UpdatedAt)},
		{VaspId: "V4", VaspName: "Four", TravelRuleMethod: "MANUAL", VaspCountry: "US", Valid: false},
	}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("SearchVasps() (-want +got):\n%s", diff)
	}
	zacme, err := f.server.SearchVasps(companyCtx("ZACME"), &compliancev1.SearchVaspsRequest{Ids: []string{"V1", "V2", "V3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(zacme.GetItems()) != 2 || !zacme.GetItems()[0].GetValid() || zacme.GetItems()[0].GetUpdatedAt() != "" || zacme.GetItems()[1].GetVaspId() != "V3" {
		t.Errorf("ZACME sees %v, want V1 valid and never switched, then V3", zacme.GetItems())
	}
}

func TestSearchVaspsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name    string
		ctx     context.Context
		give    *compliancev1.SearchVaspsRequest
		wantErr wantErr
	}{
		{"unknown travel-rule method", companyCtx(company), &compliancev1.SearchVaspsRequest{TravelRuleMethods: []string{"TRUST", "EMAIL"}}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "travelRuleMethods"}},
		{"method in lower case", companyCtx(company), &compliancev1.SearchVaspsRequest{TravelRuleMethods: []string{"trust"}}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "travelRuleMethods"}},
		{"limit 0", companyCtx(company), &compliancev1.SearchVaspsRequest{PaginationLimit: proto.Int32(0)}, wantErr{codes.InvalidArgument, apperr.CodeLength, "paginationLimit"}},
		{"limit 1025", companyCtx(company), &compliancev1.SearchVaspsRequest{PaginationLimit: proto.Int32(1025)}, wantErr{codes.InvalidArgument, apperr.CodeLength, "paginationLimit"}},
		{"negative offset", companyCtx(company), &compliancev1.SearchVaspsRequest{PaginationOffset: proto.Int32(-1)}, wantErr{codes.InvalidArgument, apperr.CodeLength, "paginationOffset"}},
		{"sort by name", companyCtx(company), &compliancev1.SearchVaspsRequest{Sort: &commonv1.Sort{By: "vaspName"}}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "sort.by"}},
		{"sort by updatedAt", companyCtx(company), &compliancev1.SearchVaspsRequest{Sort: &commonv1.Sort{By: "updatedAt"}}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "sort.by"}},
		{"sort order", companyCtx(company), &compliancev1.SearchVaspsRequest{Sort: &commonv1.Sort{By: "id", Order: "down"}}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "sort.order"}},
		{"system acting for no company", as(principal.Principal{Kind: principal.KindSystem, System: "interchange"}), &compliancev1.SearchVaspsRequest{}, wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""}},
		{"no principal", context.Background(), &compliancev1.SearchVaspsRequest{}, wantErr{codes.Unauthenticated, apperr.CodeUnauthorized, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.server.SearchVasps(tt.ctx, tt.give)
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestSearchVaspsPageAndSort(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name      string
		give      *compliancev1.SearchVaspsRequest
		wantIDs   []string
		wantTotal int32
	}{
		{"default page", &compliancev1.SearchVaspsRequest{}, []string{"V1", "V2", "V4"}, 3},
		{"limit 1", &compliancev1.SearchVaspsRequest{PaginationLimit: proto.Int32(1)}, []string{"V1"}, 3},
		{"offset 2", &compliancev1.SearchVaspsRequest{PaginationOffset: proto.Int32(2)}, []string{"V4"}, 3},
		{"offset at the end", &compliancev1.SearchVaspsRequest{PaginationOffset: proto.Int32(3)}, []string{}, 3},
		{"limit 1024", &compliancev1.SearchVaspsRequest{PaginationLimit: proto.Int32(1024)}, []string{"V1", "V2", "V4"}, 3},
		{"descending", &compliancev1.SearchVaspsRequest{Sort: &commonv1.Sort{By: "id", Order: "DESC"}}, []string{"V4", "V2", "V1"}, 3},
		{"names and methods", &compliancev1.SearchVaspsRequest{Names: []string{"Two", "Four", "Three"}, TravelRuleMethods: []string{"MANUAL", "ZODIA"}}, []string{"V2", "V4"}, 2},
		{"another company's VASP by id", &compliancev1.SearchVaspsRequest{Ids: []string{"V3"}}, []string{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.server.SearchVasps(companyCtx(company), tt.give)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, v := range got.GetItems() {
				ids = append(ids, v.GetVaspId())
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" || got.GetTotal() != tt.wantTotal {
				t.Errorf("ids (-want +got):\n%s total %d, want %d", diff, got.GetTotal(), tt.wantTotal)
			}
		})
	}
}
