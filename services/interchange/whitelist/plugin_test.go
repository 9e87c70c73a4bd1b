package whitelist_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/ledger"
)

func generate(t *testing.T, chain string) string {
	t.Helper()
	a, err := ledger.Generate(chain)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestPluginServesOnlyItsServices(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, serviceID := range []string{"0x0003-003", "0x0013-001"} {
		_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, company, "SERV-REQ-2", serviceID, nil)})
		wantAppErr(t, err, apperr.CodeUnimplemented, "serviceId")
	}
}

// TestPluginChecksTheRequest: the plugin framework refuses a request whose type is not its
// service's, or without a maker, before anything runs (the hand-written plugin used to carry
// out a deactivation labelled CREATE).
func TestPluginChecksTheRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	addr := generate(t, ledger.ETH)
	id := f.run(t, request(t, company, "SERV-REQ-WL", address.ServiceWhitelist, whitelistPayload(addr, "ETH", "VASP-001")))
	mislabelled := request(t, company, "SERV-REQ-DE", address.ServiceDeactivate, deactivatePayload(addr, "ETH"))
	mislabelled.RequestType = "CREATE"
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: mislabelled, EntityIds: []string{id}})
	wantAppErr(t, err, apperr.CodeFormat, "requestType")
	anonymous := request(t, company, "SERV-REQ-DE", address.ServiceDeactivate, deactivatePayload(addr, "ETH"))
	anonymous.MakerEmail = ""
	_, err = f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: anonymous})
	wantAppErr(t, err, apperr.CodeMissing, "makerEmail")
	list, err := f.svc.ListWhitelistedAddresses(caller(company), &interchangev1.ListWhitelistedAddressesRequest{Statuses: []string{"ACTIVE"}})
	if err != nil || list.GetTotal() != 1 {
		t.Errorf("ACTIVE after refused requests = %v, %v; want the address still active", list, err)
	}
}

func TestValidateWhitelistWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	addr := generate(t, ledger.XLM)
	payload := whitelistPayload(addr, "XLM", "VASP-002")
	payload["beneficiaryId"] = "BNF-ZTEST-AAAAAAAAAA"
	resp, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, company, "SERV-REQ-1", address.ServiceWhitelist, payload)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetEntityIds()) != 1 || !address.IsID(resp.GetEntityIds()[0]) {
		t.Fatalf("entityIds = %v, want one UUID", resp.GetEntityIds())
	}
	want := map[string]any{"beneficiaryAddressId": resp.GetEntityIds()[0], "address": addr, "cryptoAddress": addr, "blockchain": "XLM",
		"blockchainId": "xlm-xlm", "currency": "XLM", "addressPurpose": []any{"INCOMING", "OUTGOING"}, "hostedAddress": true,
		"vaspId": "VASP-002", "managingVasp": "ZTEST Private Venue", "beneficiaryId": "BNF-ZTEST-AAAAAAAAAA", "beneficiaryName": "Alice Treasury"}
	if diff := cmp.Diff(want, resp.GetDetails()[0].AsMap()); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if n := f.count(t); n != 0 {
		t.Errorf("Validate stored %d addresses, want none", n)
	}
	wantCalls := []string{"CheckVasp ZTEST VASP-002", "CheckBeneficiary ZTEST BNF-ZTEST-AAAAAAAAAA"}
	if diff := cmp.Diff(wantCalls, f.dir.callLog()); diff != "" {
		t.Errorf("compliance calls (-want +got):\n%s", diff)
	}
}

func TestValidateWhitelistRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	taken := generate(t, ledger.ETH)
	f.run(t, request(t, company, "SERV-REQ-TAKEN", address.ServiceWhitelist, whitelistPayload(taken, "ETH", "VASP-001")))
	withBeneficiary := func(id string) map[string]any {
		p := whitelistPayload(generate(t, ledger.BTC), "BTC", "VASP-001")
		p["beneficiaryId"] = id
		return p
	}
	tests := []struct {
		name       string
		companyID  string
		payload    map[string]any
		wantStatus codes.Code
		wantCode   string
		wantField  string
		down       bool
	}{
		{"payload", company, whitelistPayload("0x12", "ETH", "VASP-001"), codes.InvalidArgument, apperr.CodeFormat, "address", false},
		{"unknown VASP", company, whitelistPayload(generate(t, ledger.ETH), "ETH", "VASP-999"), codes.NotFound, apperr.CodeNotFound, "vaspId", false},
		{"VASP of another company", other, whitelistPayload(generate(t, ledger.ETH), "ETH", "VASP-002"), codes.NotFound, apperr.CodeNotFound, "vaspId", false},
		{"deactivated VASP", company, whitelistPayload(generate(t, ledger.ETH), "ETH", "VASP-004"), codes.FailedPrecondition, apperr.CodeDeactivated, "vaspId", false},
		{"unknown beneficiary", company, withBeneficiary("BNF-ZTEST-ZZZZZZZZZZ"), codes.NotFound, apperr.CodeNotFound, "beneficiaryId", false},
		{"deactivated beneficiary", company, withBeneficiary("BNF-ZTEST-DDDDDDDDDD"), codes.FailedPrecondition, apperr.CodeDeactivated, "beneficiaryId", false},
		{"already whitelisted", company, whitelistPayload(strings.ToLower(taken), "ETH", "VASP-001"), codes.AlreadyExists, apperr.CodeExists, "address", false},
		{"compliance down", company, whitelistPayload(generate(t, ledger.ETH), "ETH", "VASP-001"), codes.Unavailable, apperr.CodeUnavailable, "vaspId", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.dir.setDown(tt.down)
			defer f.dir.setDown(false)
			r := request(t, tt.companyID, "SERV-REQ-1", address.ServiceWhitelist, tt.payload)
			_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
			wantAppErr(t, err, tt.wantCode, tt.wantField)
			if got := status.Code(apperr.ToStatus(err)); got != tt.wantStatus {
				t.Errorf("gRPC code %s, want %s", got, tt.wantStatus)
			}
		})
	}
	if n := f.count(t); n != 1 {
		t.Errorf("%d addresses stored, want only the taken one", n)
	}
}

func TestExecuteWhitelist(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	addr := generate(t, ledger.XRP)
	r := request(t, company, "SERV-REQ-1", address.ServiceWhitelist, whitelistPayload(addr, "XRP", "VASP-001"))
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	exec := &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}
	first, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil || !proto.Equal(first, again) {
		t.Errorf("a repeated Execute = %v, %v; want the first answer %v", again, err, first)
	}
	if got := first.GetDetails()[0].AsMap()["status"]; got != "ACTIVE" || f.count(t) != 1 {
		t.Errorf("status %v, %d stored; want one ACTIVE address", got, f.count(t))
	}
	list, err := f.svc.ListWhitelistedAddresses(caller(company), &interchangev1.ListWhitelistedAddressesRequest{})
	if err != nil || list.GetTotal() != 1 || list.GetItems()[0].GetAddress() != addr {
		t.Fatalf("endpoint 9 after execution = %v, %v", list, err)
	}

	reuse := request(t, company, "SERV-REQ-2", address.ServiceWhitelist, whitelistPayload(generate(t, ledger.XRP), "XRP", "VASP-001"))
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: reuse, EntityIds: v.GetEntityIds()})
	wantAppErr(t, err, apperr.CodeExists, "entityIds")

	twice := request(t, company, "SERV-REQ-3", address.ServiceWhitelist, whitelistPayload(addr, "XRP", "VASP-002"))
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: twice, EntityIds: []string{address.NewID()}})
	wantAppErr(t, err, apperr.CodeExists, "address")
	if got := status.Code(apperr.ToStatus(err)); got != codes.AlreadyExists {
		t.Errorf("a duplicate at execution has gRPC code %s, want AlreadyExists (final, not retried)", got)
	}
	for _, ids := range [][]string{nil, {"not-a-uuid"}, {address.NewID(), address.NewID()}} {
		_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: twice, EntityIds: ids})
		wantCode := apperr.CodeFormat
		if ids == nil {
			wantCode = apperr.CodeMissing
		}
		wantAppErr(t, err, wantCode, "entityIds")
	}
}

func TestExecuteChecksTheVaspAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := request(t, company, "SERV-REQ-1", address.ServiceWhitelist, whitelistPayload(generate(t, ledger.ETH), "ETH", "VASP-002"))
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	f.dir.set(company+"|VASP-002", entry{"ZTEST Private Venue", false}) // deactivated while the request waited
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()})
	wantAppErr(t, err, apperr.CodeDeactivated, "vaspId")
	if n := f.count(t); n != 0 {
		t.Errorf("%d addresses stored under a deactivated VASP", n)
	}
	f.dir.setDown(true)
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()})
	if got := status.Code(apperr.ToStatus(err)); got != codes.Unavailable {
		t.Errorf("compliance down at execution: code %s, want Unavailable (retried by the service desk)", got)
	}
}
