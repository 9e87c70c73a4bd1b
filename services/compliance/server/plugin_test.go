package server_test

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/compliance"
)

func TestRequestChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	withChange := func(change func(*pluginv1.ServiceRequest)) *pluginv1.ServiceRequest {
		sr := request(t, "SERV-REQ-C1", compliance.ServiceCreateBeneficiary, createPayload())
		change(sr)
		return sr
	}
	unimplemented := wantErr{codes.Unimplemented, apperr.CodeUnimplemented, "serviceId"}
	tests := []struct {
		name    string
		give    *pluginv1.ServiceRequest
		wantErr wantErr
	}{
		{"unknown service", request(t, "SERV-REQ-C2", "0x0099-001", nil), unimplemented},
		{"another owner's service", request(t, "SERV-REQ-C3", "0x0007-007", nil), unimplemented},
		{"custody's service", request(t, "SERV-REQ-C4", "0x0013-001", nil), unimplemented},
		{"no request", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "request"}},
		{"wrong request type", withChange(func(sr *pluginv1.ServiceRequest) { sr.RequestType = "UPDATE" }), wantErr{codes.InvalidArgument, apperr.CodeFormat, "requestType"}},
		{"no company", withChange(func(sr *pluginv1.ServiceRequest) { sr.CompanyId = "" }), wantErr{codes.InvalidArgument, apperr.CodeMissing, "companyId"}},
		{"no maker", withChange(func(sr *pluginv1.ServiceRequest) { sr.MakerEmail = "" }), wantErr{codes.InvalidArgument, apperr.CodeMissing, "makerEmail"}},
		{"no payload", withChange(func(sr *pluginv1.ServiceRequest) { sr.Payload = nil }), wantErr{codes.InvalidArgument, apperr.CodeMissing, "entityType"}},
		{"bad country", withChange(func(sr *pluginv1.ServiceRequest) {
			sr.Payload.Fields["registeredAddress"].GetStructValue().Fields["country"] = sr.Payload.Fields["entityType"]
		}), wantErr{codes.InvalidArgument, apperr.CodeFormat, "registeredAddress.country"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: tt.give})
			checkErr(t, err, tt.wantErr)
			_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: tt.give, EntityIds: []string{"BNF-ZTEST-ABCDEFGHIJ"}})
			checkErr(t, err, tt.wantErr)
		})
	}
	sr := request(t, "", compliance.ServiceCreateBeneficiary, createPayload())
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{"BNF-ZTEST-ABCDEFGHIJ"}})
	checkErr(t, err, wantErr{codes.InvalidArgument, apperr.CodeMissing, "requestId"})
	if n := f.count(t, "beneficiaries") + f.count(t, "plugin_executions"); n != 0 {
		t.Errorf("refused requests wrote %d documents", n)
	}
}
