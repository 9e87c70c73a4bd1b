package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/trading"
)

func wantAppErr(t *testing.T, err error, code, field string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want %s on %q", err, code, field)
	}
	if ae.Code != code || ae.Field != field {
		t.Errorf("err = %s on %q (%s), want %s on %q", ae.Code, ae.Field, ae.Message, code, field)
	}
}

func TestValidateCreateWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := request(t, "SERV-REQ-1", "0x0003-001", createPayload("Bybit BTC", "BTC"))
	resp, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetEntityIds()) != 1 || !trading.IsWalletIDOf(company, resp.GetEntityIds()[0]) {
		t.Errorf("entityIds = %v, want one %s-TW-<10>", resp.GetEntityIds(), company)
	}
	d := resp.GetDetails()[0].AsMap()
	if d["name"] != "Bybit BTC" || d["tradingVenueId"] != "BYBIT" || d["walletId"] != resp.GetEntityIds()[0] {
		t.Errorf("details = %v, want the payload echoed with the wallet id", d)
	}
	for _, col := range []string{"wallets", "vault_addresses", "plugin_executions"} {
		if n := f.count(t, col); n != 0 {
			t.Errorf("Validate wrote %d documents to %s", n, col)
		}
	}
}

func TestPluginRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	deactivated := f.create(t, "SERV-REQ-D", "Old", "BTC")
	deactivate := func(id string) *pluginv1.ServiceRequest {
		return request(t, "SERV-REQ-X", "0x0003-002", map[string]any{"walletId": id})
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: deactivate(deactivated)}); err != nil {
		t.Fatal(err)
	}
	asAcme := deactivate(f.create(t, "SERV-REQ-A", "Mine", "BTC")) // a ZTEST wallet, asked for by ZACME
	asAcme.CompanyId = "ZACME"
	tests := []struct {
		name      string
		ctx       context.Context
		give      *pluginv1.ServiceRequest
		wantCode  string
		wantField string
	}{
		{"settlement belongs to interchange", servicedesk(), request(t, "R", "0x0003-003", map[string]any{}), apperr.CodeUnimplemented, "serviceId"},
		{"custody service", servicedesk(), request(t, "R", "0x0013-001", map[string]any{}), apperr.CodeUnimplemented, "serviceId"},
		{"bad payload", servicedesk(), request(t, "R", "0x0003-001", createPayload("A", "DOGE")), apperr.CodeCurrency, "currency"},
		{"unknown wallet", servicedesk(), deactivate("ZTEST-TW-NOSUCHWALL"), apperr.CodeNotFound, "walletId"},
		{"another company's wallet", servicedesk(), asAcme, apperr.CodeNotFound, "walletId"},
		{"deactivated wallet", servicedesk(), deactivate(deactivated), apperr.CodeDeactivated, "walletId"},
		{"deactivation sent as a create", servicedesk(), withType(deactivate(deactivated), "CREATE"), apperr.CodeFormat, "requestType"},
		{"create sent as a deactivation", servicedesk(), withType(request(t, "R", "0x0003-001", createPayload("A", "BTC")), "DEACTIVATE"), apperr.CodeFormat, "requestType"},
		{"no maker", servicedesk(), withMaker(request(t, "R", "0x0003-001", createPayload("A", "BTC")), ""), apperr.CodeMissing, "makerEmail"},
		{"no request", servicedesk(), nil, apperr.CodeMissing, "request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.plugin.Validate(tt.ctx, &pluginv1.ValidateRequest{Request: tt.give})
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: request(t, "R", "0x0003-003", map[string]any{})})
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Status != codes.Unimplemented {
		t.Errorf("Execute(0x0003-003) = %v, want Unimplemented", err)
	}
}

func withType(r *pluginv1.ServiceRequest, requestType string) *pluginv1.ServiceRequest {
	r.RequestType = requestType
	return r
}

func withMaker(r *pluginv1.ServiceRequest, email string) *pluginv1.ServiceRequest {
	r.MakerEmail = email
	return r
}

// TestExecuteRefusesAMislabelledRequest: the plugin framework checks the request type before
// anything runs, so a deactivation labelled CREATE deactivates nothing (the hand-written
// plugin used to carry it out).
func TestExecuteRefusesAMislabelledRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.create(t, "SERV-REQ-1", "Bybit BTC", "BTC")
	r := withType(request(t, "SERV-REQ-2", "0x0003-002", map[string]any{"walletId": id}), "CREATE")
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: []string{id}})
	wantAppErr(t, err, apperr.CodeFormat, "requestType")
	w, err := f.store.Wallet(context.Background(), company, id)
	if err != nil || w.Status != trading.StatusActive {
		t.Errorf("wallet after a mislabelled deactivation = %+v, %v; want it ACTIVE", w, err)
	}
	if n := f.count(t, "plugin_executions"); n != 1 {
		t.Errorf("%d executions recorded, want only the create's", n)
	}
}

func TestExecuteCreateIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := request(t, "SERV-REQ-1", "0x0003-001", createPayload("Bybit USDC", "USDC"))
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	exec := &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}
	first, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(first, second) {
		t.Errorf("second Execute = %v, want the first's %v", second, first)
	}
	if f.count(t, "wallets") != 1 || f.count(t, "vault_addresses") != 2 {
		t.Errorf("after two Executes: %d wallets, %d addresses; want 1 and 2 (usdc-eth, usdc-xlm)", f.count(t, "wallets"), f.count(t, "vault_addresses"))
	}
	w, err := f.store.Wallet(context.Background(), company, v.GetEntityIds()[0])
	if err != nil {
		t.Fatal(err)
	}
	wantProps := `{"accountUuid":"` + accountUUID + `","userUuid":"` + userUUID + `"}`
	if w.Status != trading.StatusActive || w.CreatedBy != maker || w.VenueID != "BYBIT" || w.CustomProperties != wantProps ||
		len(w.Balances) != 1 || w.Balances[0].Currency != "USDC" || w.Balances[0].Available != "0" {
		t.Errorf("created wallet = %+v", w)
	}
	addrs := first.GetDetails()[0].AsMap()["addresses"].([]any)
	for _, a := range addrs {
		m := a.(map[string]any)
		if err := ledger.Validate(m["ledger"].(string), m["address"].(string)); err != nil {
			t.Error(err)
		}
	}
	// A reserved id of another company is refused.
	foreign := &pluginv1.ExecuteRequest{Request: request(t, "SERV-REQ-2", "0x0003-001", createPayload("X", "BTC")), EntityIds: []string{"ZACME-TW-AAAAAAAAAA"}}
	_, err = f.plugin.Execute(servicedesk(), foreign)
	wantAppErr(t, err, apperr.CodeFormat, "entityIds")
}

func TestExecuteCreateConcurrently(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := request(t, "SERV-REQ-1", "0x0003-001", createPayload("Racing", "USDC"))
	exec := &pluginv1.ExecuteRequest{Request: r, EntityIds: []string{trading.NewWalletID(company)}}
	const n = 20
	var wg sync.WaitGroup
	results := make(chan *pluginv1.ExecuteResponse, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := f.plugin.Execute(servicedesk(), exec)
			if err != nil {
				t.Error(err)
				return
			}
			results <- resp
		}()
	}
	wg.Wait()
	close(results)
	var first *pluginv1.ExecuteResponse
	for resp := range results {
		if first == nil {
			first = resp
		}
		if !proto.Equal(first, resp) {
			t.Errorf("racing Executes answered differently:\n%v\n%v", first, resp)
		}
	}
	if f.count(t, "wallets") != 1 || f.count(t, "vault_addresses") != 2 {
		t.Errorf("after %d racing Executes: %d wallets, %d addresses; want 1 and 2", n, f.count(t, "wallets"), f.count(t, "vault_addresses"))
	}
}

func TestExecuteDeactivate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.create(t, "SERV-REQ-1", "Bybit BTC", "BTC")
	r := request(t, "SERV-REQ-2", "0x0003-002", map[string]any{"walletId": []any{id}})
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil || v.GetEntityIds()[0] != id {
		t.Fatalf("Validate(deactivate) = %v, %v", v, err)
	}
	var responses []*pluginv1.ExecuteResponse
	for range 2 {
		resp, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()})
		if err != nil {
			t.Fatal(err)
		}
		responses = append(responses, resp)
	}
	if !proto.Equal(responses[0], responses[1]) || responses[0].GetDetails()[0].AsMap()["status"] != trading.StatusDeactivated {
		t.Errorf("Execute(deactivate) twice = %v / %v", responses[0], responses[1])
	}
	w, err := f.store.Wallet(context.Background(), company, id)
	if err != nil || w.Status != trading.StatusDeactivated || w.Version != 2 {
		t.Errorf("wallet after deactivation = %+v, %v; want DEACTIVATED at version 2", w, err)
	}
	again := request(t, "SERV-REQ-3", "0x0003-002", map[string]any{"walletId": id})
	_, err = f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: again})
	wantAppErr(t, err, apperr.CodeDeactivated, "walletId")
	if !strings.HasPrefix(id, company+"-TW-") {
		t.Errorf("wallet id %s", id)
	}
}
