package server_test

import (
	"context"
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

const (
	active      = "BNF-ZTEST-ACTIVE0001"
	deactivated = "BNF-ZTEST-DEACTIVE01"
	zacmes      = "BNF-ZACME-ACTIVE0001"
)

// changeFixture holds an active and a deactivated ZTEST beneficiary and an active ZACME one.
func changeFixture(t *testing.T) fixture {
	t.Helper()
	f := newFixture(t)
	f.put(t, company, active, nil)
	f.put(t, company, deactivated, func(b *compliance.Beneficiary) { b.Status = compliance.StatusDeactivated })
	f.put(t, "ZACME", zacmes, nil)
	return f
}

func TestValidateChangeRefused(t *testing.T) {
	t.Parallel()
	f := changeFixture(t)
	update := func(id string) map[string]any {
		return map[string]any{"beneficiaryId": id, "beneficiaryName": "New Name"}
	}
	deactivate := func(id string) map[string]any { return map[string]any{"beneficiaryId": []any{id}} }
	notFound := wantErr{codes.NotFound, apperr.CodeNotFound, "beneficiaryId"}
	isDeactivated := wantErr{codes.FailedPrecondition, apperr.CodeDeactivated, "beneficiaryId"}
	tests := []struct {
		name    string
		service string
		payload map[string]any
		wantErr wantErr
	}{
		{"update unknown", compliance.ServiceUpdateBeneficiary, update("BNF-ZTEST-UNKNOWN001"), notFound},
		{"update another company's", compliance.ServiceUpdateBeneficiary, update(zacmes), notFound},
		{"update deactivated", compliance.ServiceUpdateBeneficiary, update(deactivated), isDeactivated},
		{"update with nothing to change", compliance.ServiceUpdateBeneficiary, map[string]any{"beneficiaryId": active}, wantErr{codes.InvalidArgument, apperr.CodeEmptyList, "payload"}},
		{"update entity type", compliance.ServiceUpdateBeneficiary, map[string]any{"beneficiaryId": active, "entityType": "INDIVIDUAL"}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityType"}},
		{"deactivate unknown", compliance.ServiceDeactivateBeneficiary, deactivate("BNF-ZTEST-UNKNOWN001"), notFound},
		{"deactivate another company's", compliance.ServiceDeactivateBeneficiary, deactivate(zacmes), notFound},
		{"deactivate deactivated", compliance.ServiceDeactivateBeneficiary, deactivate(deactivated), isDeactivated},
		{"deactivate without id", compliance.ServiceDeactivateBeneficiary, map[string]any{}, wantErr{codes.InvalidArgument, apperr.CodeMissing, "beneficiaryId"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sr := request(t, "SERV-REQ-R"+string(rune('A'+i)), tt.service, tt.payload)
			_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
			checkErr(t, err, tt.wantErr)
			_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr})
			checkErr(t, err, tt.wantErr)
		})
	}
	if n := f.count(t, "plugin_executions"); n != 0 {
		t.Errorf("refused requests recorded %d executions", n)
	}
}

func changeDetail(t *testing.T, name string, operating map[string]any, status string) *structpb.Struct {
	t.Helper()
	fields := map[string]any{"beneficiaryId": active, "entityType": "CORPORATE", "beneficiaryName": name, "legalName": name,
		"registeredAddress": address("1 Old Road", "London", "GB"), "status": status}
	if operating != nil {
		fields["operatingAddress"] = operating
	}
	s, err := structpb.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUpdateThenDeactivate runs a 0x0007-005 and then a 0x0007-006 request on one
// beneficiary: Validate describes the outcome without writing, Execute applies it once.
func TestUpdateThenDeactivate(t *testing.T) {
	t.Parallel()
	f := changeFixture(t)
	ctx := context.Background()
	paris := address("2 Rue X", "Paris", "FR")
	upd := request(t, "SERV-REQ-U1", compliance.ServiceUpdateBeneficiary, map[string]any{"beneficiaryId": []any{active},
		"beneficiaryName": "New Name Ltd", "operatingAddress": paris})
	updated := changeDetail(t, "New Name Ltd", paris, "ACTIVE")
	validated, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: upd})
	if err != nil {
		t.Fatal(err)
	}
	want := &pluginv1.ValidateResponse{EntityIds: []string{active}, Details: []*structpb.Struct{updated}}
	if diff := cmp.Diff(want, validated, protocmp.Transform()); diff != "" {
		t.Errorf("Validate(update) (-want +got):\n%s", diff)
	}
	if b, _ := f.store.Beneficiary(ctx, company, active); b.Name != "Old Name Ltd" || b.Version != 1 {
		t.Fatalf("Validate changed the beneficiary: %+v", b)
	}
	executed, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: upd, EntityIds: []string{active}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&pluginv1.ExecuteResponse{EntityIds: []string{active}, Details: []*structpb.Struct{updated}}, executed, protocmp.Transform()); diff != "" {
		t.Errorf("Execute(update) (-want +got):\n%s", diff)
	}
	// A crash lost the ledger record: the rerun recognises its own change and changes nothing.
	if _, err := f.db.Collection("plugin_executions").DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: upd, EntityIds: []string{active}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.store.Beneficiary(ctx, company, active); b.Version != 2 || b.LegalName != "New Name Ltd" || b.LastRequestID != "SERV-REQ-U1" {
		t.Fatalf("after the update and its rerun: %+v, want version 2", b)
	}
	off := request(t, "SERV-REQ-D1", compliance.ServiceDeactivateBeneficiary, map[string]any{"beneficiaryId": active})
	got, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: off, EntityIds: []string{active}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(changeDetail(t, "New Name Ltd", paris, "DEACTIVATED"), got.GetDetails()[0], protocmp.Transform()); diff != "" {
		t.Errorf("Execute(deactivate) detail (-want +got):\n%s", diff)
	}
	if b, _ := f.store.Beneficiary(ctx, company, active); b.Status != "DEACTIVATED" || b.Version != 3 {
		t.Errorf("after the deactivation: %+v", b)
	}
	// An update authorised before the deactivation and executed after it fails: ER-113.
	late := request(t, "SERV-REQ-U2", compliance.ServiceUpdateBeneficiary, map[string]any{"beneficiaryId": active, "beneficiaryName": "Too Late"})
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: late, EntityIds: []string{active}})
	checkErr(t, err, wantErr{codes.FailedPrecondition, apperr.CodeDeactivated, "beneficiaryId"})
}

func TestExecuteChangeChecksEntityIDs(t *testing.T) {
	t.Parallel()
	f := changeFixture(t)
	sr := request(t, "SERV-REQ-I1", compliance.ServiceDeactivateBeneficiary, map[string]any{"beneficiaryId": active})
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{zacmes}})
	checkErr(t, err, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityIds"})
	if b, _ := f.store.Beneficiary(context.Background(), company, active); b.Status != "ACTIVE" {
		t.Errorf("a refused execution changed the beneficiary: %+v", b)
	}
}
