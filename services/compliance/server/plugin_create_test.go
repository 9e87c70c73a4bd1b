package server_test

import (
	"context"
	"regexp"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance"
)

var beneficiaryID = regexp.MustCompile(`^BNF-ZTEST-[A-Z0-9]{10}$`)

// wantDetail is the detail of the createPayload beneficiary.
func wantDetail(t *testing.T, id, status string) *structpb.Struct {
	t.Helper()
	fields := map[string]any{"beneficiaryId": id, "entityType": "CORPORATE", "beneficiaryName": "Acme Supplier GmbH",
		"legalName": "Acme Supplier GmbH", "registeredAddress": address("1 Main Street", "Berlin", "DE"),
		"operatingAddress": address("Bahnhofstrasse 1", "Zürich", "CH")}
	if status != "" {
		fields["status"] = status
	}
	s, err := structpb.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidateCreateReservesAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sr := request(t, "SERV-REQ-V1", compliance.ServiceCreateBeneficiary, createPayload())
	got, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetEntityIds()) != 1 || !beneficiaryID.MatchString(got.GetEntityIds()[0]) {
		t.Fatalf("entityIds %v, want one BNF-ZTEST-<10>", got.GetEntityIds())
	}
	want := &pluginv1.ValidateResponse{EntityIds: got.GetEntityIds(), Details: []*structpb.Struct{wantDetail(t, got.GetEntityIds()[0], "")}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("Validate() (-want +got):\n%s", diff)
	}
	again, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil || again.GetEntityIds()[0] == got.GetEntityIds()[0] {
		t.Errorf("a second Validate reserved %v, %v; want a fresh id", again.GetEntityIds(), err)
	}
	if n := f.count(t, "beneficiaries") + f.count(t, "plugin_executions"); n != 0 {
		t.Errorf("Validate wrote %d documents", n)
	}
}

func TestExecuteCreate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := compliance.NewBeneficiaryID(company)
	sr := request(t, "SERV-REQ-E1", compliance.ServiceCreateBeneficiary, createPayload())
	got, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	want := &pluginv1.ExecuteResponse{EntityIds: []string{id}, Details: []*structpb.Struct{wantDetail(t, id, "ACTIVE")}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("Execute() (-want +got):\n%s", diff)
	}
	b, err := f.store.Beneficiary(context.Background(), company, id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != "ACTIVE" || b.Version != 1 || b.CreatedBy != maker || b.LastRequestID != "SERV-REQ-E1" || b.LegalName != "Acme Supplier GmbH" || b.CreatedAt.IsZero() {
		t.Errorf("stored %+v", b)
	}
	repeat, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{id}})
	if err != nil || !cmp.Equal(got, repeat, protocmp.Transform()) {
		t.Errorf("repeat = %v, %v; want the first answer", repeat, err)
	}
	if n := f.count(t, "beneficiaries"); n != 1 {
		t.Errorf("%d beneficiaries after a repeated Execute, want 1", n)
	}
}

// TestExecuteCreateRaceAndCrash: racing runs of one request and a run after a crash that lost
// the ledger record all end with one beneficiary under the reserved id.
func TestExecuteCreateRaceAndCrash(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := compliance.NewBeneficiaryID(company)
	sr := request(t, "SERV-REQ-E2", compliance.ServiceCreateBeneficiary, createPayload())
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			resp, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{id}})
			if err != nil || resp.GetEntityIds()[0] != id {
				t.Errorf("racing Execute = %v, %v", resp, err)
			}
		})
	}
	wg.Wait()
	if _, err := f.db.Collection("plugin_executions").DeleteMany(context.Background(), bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{id}}); err != nil {
		t.Errorf("Execute after losing the ledger record: %v", err)
	}
	if n := f.count(t, "beneficiaries"); n != 1 {
		t.Errorf("%d beneficiaries, want 1", n)
	}
}

func TestExecuteCreateChecksTheReservedID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name    string
		give    []string
		wantErr wantErr
	}{
		{"none", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "entityIds"}},
		{"two", []string{compliance.NewBeneficiaryID(company), compliance.NewBeneficiaryID(company)}, wantErr{codes.InvalidArgument, apperr.CodeLength, "entityIds"}},
		{"another company's", []string{compliance.NewBeneficiaryID("ZACME")}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityIds"}},
		{"a wallet id", []string{"ZTEST-NOBENF-ABCDEFGHIJ"}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityIds"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sr := request(t, "SERV-REQ-X"+string(rune('A'+i)), compliance.ServiceCreateBeneficiary, createPayload())
			_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: tt.give})
			checkErr(t, err, tt.wantErr)
		})
	}
	if n := f.count(t, "beneficiaries"); n != 0 {
		t.Errorf("refused executions wrote %d beneficiaries", n)
	}
}
