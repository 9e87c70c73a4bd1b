package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/principal"
)

// servicedeskCtx is a call of the service desk on the plugin API.
func servicedeskCtx() context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: "servicedesk", Issuer: "servicedesk"})
}

// withdrawalRequest is a 0x0003-004 service request of ZTEST.
func withdrawalRequest(t *testing.T, requestID, sender, destination, amount string) *pluginv1.ServiceRequest {
	t.Helper()
	payload, err := structpb.NewStruct(map[string]any{"sender": map[string]any{"type": "WALLETID", "value": sender},
		"destination": map[string]any{"type": "WALLETID", "value": destination}, "amount": amount})
	if err != nil {
		t.Fatal(err)
	}
	return &pluginv1.ServiceRequest{RequestId: requestID, ServiceId: server.ServiceWithdrawal, RequestType: "CREATE", CompanyId: ztest,
		MakerEmail: "maker@ztest", Payload: payload}
}

// requestToCustody validates and executes a withdrawal request as the service desk does,
// and returns the transfer id reserved for it.
func (f fixture) requestToCustody(t *testing.T, requestID, sender, destination, amount string) string {
	t.Helper()
	p := f.wired.Plugin(nil)
	sr := withdrawalRequest(t, requestID, sender, destination, amount)
	v, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	for range 2 { // a repeated execution creates nothing twice
		if _, err := p.Execute(servicedeskCtx(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: v.GetEntityIds()}); err != nil {
			t.Fatalf("execute: %v", err)
		}
	}
	return v.GetEntityIds()[0]
}

// transit reconciles the two in-transit accounts as the settlement engine.
func (f fixture) transit(t *testing.T) *interchangev1.ReconcileTransitResponse {
	t.Helper()
	r, err := f.engine.ReconcileTransit(engineCtx(), &interchangev1.ReconcileTransitRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWithdrawalToCustody: a requested withdrawal holds its amount when executed; the
// venue's ACCEPT moves it out of the trading wallet and into the custody wallet once, and
// the in-transit accounts agree.
func TestWithdrawalToCustody(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	id := f.requestToCustody(t, "SERV-REQ-1", btcWallet, custodyBTC, "0.4")
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.6", "1", "0.4"} {
		t.Errorf("trading BTC once requested = %v, want 0.4 held", got)
	}
	if err := confirm(f, f.companyCtx(ztest), id, "ACCEPT", ""); status.Code(err) != codes.PermissionDenied {
		t.Errorf("the client accepts its own withdrawal: %v, want PermissionDenied", err)
	}
	for range 2 {
		if err := confirm(f, f.venueCtx(), id, "ACCEPT", ""); err != nil {
			t.Fatalf("the venue accepts: %v", err)
		}
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.6", "0.6", "0"} {
		t.Errorf("trading BTC once accepted = %v, want 0.4 gone", got)
	}
	if got := f.custody.available(t, custodyBTC); got != "0.4" {
		t.Errorf("custody BTC once accepted = %s, want 0.4", got)
	}
	r := f.transit(t)
	if len(r.GetViolations()) > 0 || r.GetInFlight() != 0 || len(r.GetCurrencies()) != 1 ||
		r.GetCurrencies()[0].GetSent() != "0.4" || r.GetCurrencies()[0].GetReceived() != "0.4" {
		t.Errorf("transit = %v, want 0.4 BTC sent and received, nothing in flight", r)
	}
}

// TestCustodyCreditCutShort: custody is down when the venue accepts: the amount has left
// the trading wallet but not reached custody. The transit reconciliation counts it in
// flight (no violation); the sweeper credits custody once the grace has passed, and the
// two sides are equal again.
func TestCustodyCreditCutShort(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	id := f.requestToCustody(t, "SERV-REQ-2", btcWallet, custodyBTC, "0.25")
	f.custody.down.Store(1)
	if err := confirm(f, f.venueCtx(), id, "ACCEPT", ""); status.Code(err) != codes.Unavailable {
		t.Fatalf("accept with custody down: %v, want Unavailable", err)
	}
	if got, custodyGot := f.ledger.get(t, btcWallet, "BTC"), f.custody.available(t, custodyBTC); got != [3]string{"0.75", "0.75", "0"} || custodyGot != "0" {
		t.Errorf("after the cut: trading %v, custody %s; want 0.25 gone from trading, not yet in custody", got, custodyGot)
	}
	if r := f.transit(t); len(r.GetViolations()) > 0 || r.GetInFlight() != 1 || r.GetCurrencies()[0].GetInFlight() != "0.25" {
		t.Errorf("transit while in flight = %v, want 0.25 BTC in flight and no violation", r)
	}
	f.clock.advance(grace + time.Second)
	f.sweeper(grace).Once(context.Background())
	if got := f.custody.available(t, custodyBTC); got != "0.25" {
		t.Errorf("custody BTC after the sweep = %s, want 0.25", got)
	}
	f.sweeper(grace).Once(context.Background())
	if got := f.custody.available(t, custodyBTC); got != "0.25" {
		t.Errorf("custody BTC after a second sweep = %s, want 0.25 (credited once)", got)
	}
	if r := f.transit(t); len(r.GetViolations()) > 0 || r.GetInFlight() != 0 || r.GetCurrencies()[0].GetReceived() != "0.25" {
		t.Errorf("transit after the sweep = %v, want both sides at 0.25", r)
	}
}

// TestWithdrawalRequestChecks: the plugin refuses, naming the payload field, what a
// company may not withdraw: another company's wallets, a custody wallet that cannot take
// the currency, a deactivated trading wallet, an amount finer than the currency; nothing is
// held. One beyond the funds passes the check and fails at its execution, holding nothing.
func TestWithdrawalRequestChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	p := f.wired.Plugin(nil)
	tests := []struct {
		name, sender, destination, amount string
		code, field                       string
	}{
		{"another company's trading wallet", acmeBTC, custodyBTC, "0.1", "ER-102", "sender.value"},
		{"another company's custody wallet", btcWallet, acmeCustody, "0.1", "ER-102", "destination.value"},
		{"a custody wallet in another currency", btcWallet, custodyETH, "0.1", "ER-111", "destination.value"},
		{"a deactivated trading wallet", "ZTEST-TW-CLOSED0001", custodyBTC, "0.1", "ER-113", "sender.value"},
		{"a trading wallet at no venue", "ZTEST-TW-NOVENUE001", custodyBTC, "0.1", "ER-108", "sender.value"},
		{"an amount finer than a satoshi", btcWallet, custodyBTC, "0.000000001", "ER-108", "amount"},
		{"a negative amount", btcWallet, custodyBTC, "-1", "ER-108", "amount"},
	}
	for _, tt := range tests {
		_, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: withdrawalRequest(t, "SERV-REQ-X", tt.sender, tt.destination, tt.amount)})
		t.Run(tt.name, func(t *testing.T) { wantAppErr(t, err, tt.code, tt.field) })
	}
	sr := withdrawalRequest(t, "SERV-REQ-BIG", btcWallet, custodyBTC, "2")
	v, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatalf("validate 2 of 1: %v (funds are checked when the request is executed)", err)
	}
	_, err = p.Execute(servicedeskCtx(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: v.GetEntityIds()})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("execute 2 of 1: %v, want FailedPrecondition (the request fails)", err)
	}
	if _, err := p.Execute(servicedeskCtx(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{"TWD-ZACME-AAAAAAAAAA"}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("execute under another company's transfer id: %v, want InvalidArgument", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("trading BTC after the refusals = %v, want untouched", got)
	}
}
