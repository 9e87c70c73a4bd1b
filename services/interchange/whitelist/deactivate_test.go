package whitelist_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/ledger"
)

func deactivatePayload(addr, chain string) map[string]any {
	return map[string]any{"address": []any{addr}, "blockchain": []any{chain}}
}

func TestDeactivateWhitelisted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	addr := generate(t, ledger.ETH)
	id := f.run(t, request(t, company, "SERV-REQ-WL", address.ServiceWhitelist, whitelistPayload(addr, "ETH", "VASP-001")))

	// Lower case names the same ETH address.
	r := request(t, company, "SERV-REQ-DE", address.ServiceDeactivate, deactivatePayload(strings.ToLower(addr), "ETH"))
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.GetEntityIds()) != 1 || v.GetEntityIds()[0] != id {
		t.Fatalf("entityIds = %v, want the whitelisted address %s", v.GetEntityIds(), id)
	}
	exec := &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}
	first, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.GetDetails()[0].AsMap()["status"]; got != address.StatusDeactivated {
		t.Errorf("status after deactivation %v, want DEACTIVATED", got)
	}
	again, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil || !proto.Equal(first, again) {
		t.Errorf("a repeated Execute = %v, %v; want the first answer", again, err)
	}
	list, err := f.svc.ListWhitelistedAddresses(caller(company), &interchangev1.ListWhitelistedAddressesRequest{Statuses: []string{"DEACTIVATED"}})
	if err != nil || list.GetTotal() != 1 || list.GetItems()[0].GetAddress() != addr {
		t.Errorf("endpoint 9 DEACTIVATED = %v, %v; want the address", list, err)
	}

	later := request(t, company, "SERV-REQ-DE2", address.ServiceDeactivate, deactivatePayload(addr, "ETH"))
	_, err = f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: later})
	wantAppErr(t, err, apperr.CodeNotFound, "address")
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: later, EntityIds: []string{id}})
	wantAppErr(t, err, apperr.CodeDeactivated, "address")
	if got := status.Code(apperr.ToStatus(err)); got != codes.FailedPrecondition {
		t.Errorf("deactivating a deactivated address: gRPC code %s, want FailedPrecondition (final)", got)
	}

	// Once deactivated, the address can be whitelisted again.
	f.run(t, request(t, company, "SERV-REQ-WL2", address.ServiceWhitelist, whitelistPayload(addr, "ETH", "VASP-001")))
}

func TestDeactivateRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	addr := generate(t, ledger.BTC)
	id := f.run(t, request(t, company, "SERV-REQ-WL", address.ServiceWhitelist, whitelistPayload(addr, "BTC", "VASP-001")))
	otherAddr := generate(t, ledger.BTC)
	otherID := f.run(t, request(t, company, "SERV-REQ-WL2", address.ServiceWhitelist, whitelistPayload(otherAddr, "BTC", "VASP-001")))
	tests := []struct {
		name      string
		companyID string
		payload   map[string]any
		wantCode  string
		wantField string
	}{
		{"another company's address", other, deactivatePayload(addr, "BTC"), apperr.CodeNotFound, "address"},
		{"never whitelisted", company, deactivatePayload(generate(t, ledger.BTC), "BTC"), apperr.CodeNotFound, "address"},
		{"bad format", company, deactivatePayload(addr, "XRP"), apperr.CodeFormat, "address"},
		{"unknown field", company, map[string]any{"address": addr, "blockchain": "BTC", "notes": "x"}, apperr.CodeFormat, "notes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, tt.companyID, "SERV-REQ-1", address.ServiceDeactivate, tt.payload)})
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
	stolen := request(t, other, "SERV-REQ-2", address.ServiceDeactivate, deactivatePayload(addr, "BTC"))
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: stolen, EntityIds: []string{id}})
	wantAppErr(t, err, apperr.CodeNotFound, "address")
	mismatch := request(t, company, "SERV-REQ-3", address.ServiceDeactivate, deactivatePayload(addr, "BTC"))
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: mismatch, EntityIds: []string{otherID}})
	wantAppErr(t, err, apperr.CodeFormat, "entityIds")
	list, err := f.svc.ListWhitelistedAddresses(caller(company), &interchangev1.ListWhitelistedAddressesRequest{Statuses: []string{"ACTIVE"}})
	if err != nil || list.GetTotal() != 2 {
		t.Errorf("ACTIVE after refused deactivations = %v, %v; want both addresses", list, err)
	}
}
