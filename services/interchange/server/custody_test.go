package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/principal"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/server"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/withdrawal"
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

// instructionRequest is a 0x0003-003 service request of BYBIT's operator.
func instructionRequest(t *testing.T, requestID string, payload map[string]any, venues ...string) *pluginv1.ServiceRequest {
	t.Helper()
	p, err := structpb.NewStruct(payload)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginv1.ServiceRequest{RequestId: requestID, ServiceId: server.ServiceInstruction, RequestType: "CREATE", CompanyId: zbybit,
		MakerEmail: "maker@zbybit", Payload: p, VenueIds: venues}
}

func transferPayload(sender, destination, amount string) map[string]any {
	return map[string]any{"sender": map[string]any{"type": "WALLETID", "value": sender}, "destination": map[string]any{"type": "WALLETID", "value": destination},
		"currency": "BTC", "venueId": venue, "amount": amount, "subtractFee": false}
}

// TestInstructionThroughTheServiceDesk: a venue operator's 0x0003-003 request records a
// one-leg settlement at its venue when executed (once, however often executed): from a
// client's wallet to the venue's settlement wallet a receivable, the other way a payable;
// the engine then advances it. A venue the company does not operate is 403; a pair of
// wallets without the venue's settlement wallet, another client's wallet elsewhere, or a
// fee is refused.
func TestInstructionThroughTheServiceDesk(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.ledger.fund(t, "VENUE-"+venue, "BYBIT-ISW-BTC", "BTC", "1")
	p := f.wired.Plugin(nil)
	run := func(requestID string, payload map[string]any) string {
		t.Helper()
		sr := instructionRequest(t, requestID, payload, venue)
		v, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: sr})
		if err != nil {
			t.Fatalf("validate %s: %v", requestID, err)
		}
		if ids := v.GetEntityIds(); len(ids) != 1 || ids[0] != requestID {
			t.Fatalf("validate %s reserved %v, want the request id", requestID, ids)
		}
		var tracking string
		for range 2 {
			e, err := p.Execute(servicedeskCtx(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: v.GetEntityIds()})
			if err != nil {
				t.Fatalf("execute %s: %v", requestID, err)
			}
			got := e.GetDetails()[0].AsMap()["settlementTrackingId"].(string)
			if tracking != "" && got != tracking {
				t.Errorf("a repeated execution recorded another settlement: %s, then %s", tracking, got)
			}
			tracking = got
		}
		return tracking
	}
	receivable := run("SERV-REQ-RCV", transferPayload(btcWallet, "BYBIT-ISW-BTC", "0.3"))
	payable := run("SERV-REQ-PAY", transferPayload("BYBIT-ISW-BTC", btcWallet2, "0.2"))
	for _, id := range []string{receivable, payable} {
		for _, to := range []string{settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut, settlement.StatusComplete} {
			f.mustAdvance(t, id, to, to)
		}
	}
	if a, b := f.ledger.get(t, btcWallet, "BTC"), f.ledger.get(t, btcWallet2, "BTC"); a != [3]string{"0.7", "0.7", "0"} || b != [3]string{"0.2", "0.2", "0"} {
		t.Errorf("after both settlements: %v and %v, want 0.3 paid to the venue and 0.2 paid by it", a, b)
	}
	st, err := f.svc.GetSettlementStatus(f.venueCtx(), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "SERV-REQ-RCV"})
	if err != nil || st.GetStatus() != settlement.StatusComplete {
		t.Errorf("the operator's status of its request: %v, %v; want COMPLETE", st, err)
	}
	for _, tt := range []struct {
		name    string
		payload map[string]any
		venues  []string
		code    string
		field   string
	}{
		{"a venue it does not operate", transferPayload(btcWallet, "BYBIT-ISW-BTC", "0.1"), []string{"DERIBIT"}, "ER-403", "venueId"},
		{"no venue side", transferPayload(btcWallet, btcWallet2, "0.1"), []string{venue}, "ER-108", "destination.value"},
		{"a client's wallet at another venue (the operator does not see it)", transferPayload(deribitBTC, "BYBIT-ISW-BTC", "0.1"), []string{venue}, "ER-102", "sender.value"},
		{"a fee", func() map[string]any {
			m := transferPayload(btcWallet, "BYBIT-ISW-BTC", "0.1")
			m["subtractFee"] = true
			return m
		}(), []string{venue}, "ER-108", "subtractFee"},
		{"a reference, not a wallet id", func() map[string]any {
			m := transferPayload(btcWallet, "BYBIT-ISW-BTC", "0.1")
			m["sender"] = map[string]any{"type": "WALLETREFERENCE", "value": "desk-1"}
			return m
		}(), []string{venue}, "ER-108", "sender.type"},
	} {
		_, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: instructionRequest(t, "SERV-REQ-X", tt.payload, tt.venues...)})
		t.Run(tt.name, func(t *testing.T) { wantAppErr(t, err, tt.code, tt.field) })
	}
}

// TestTransitReconciledWhileATransferLands: transfers land while the reconciliation reads
// the two sides. One was posted out of trading before and is credited (by the sweeper) right
// after custody's account was read; another is accepted, posted and credited right after
// trading's was read. Neither is a difference: the first is counted in flight, the second is
// on neither side. The next reconciliation finds both sides equal, nothing in flight.
func TestTransitReconciledWhileATransferLands(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	cut := f.requestToCustody(t, "SERV-REQ-LAND", btcWallet, custodyBTC, "0.25")
	late := f.requestToCustody(t, "SERV-REQ-LATE", btcWallet, custodyBTC, "0.5")
	f.custody.down.Store(1)
	if err := confirm(f, f.venueCtx(), cut, "ACCEPT", ""); status.Code(err) != codes.Unavailable {
		t.Fatalf("accept with custody down: %v, want Unavailable", err)
	}
	f.clock.advance(grace + time.Second)
	land := func() { f.sweeper(grace).Once(context.Background()) }
	f.custody.afterRead.Store(&land)
	accept := func() {
		if err := confirm(f, f.venueCtx(), late, "ACCEPT", ""); err != nil {
			t.Errorf("accept during the reconciliation: %v", err)
		}
	}
	f.ledger.afterRead.Store(&accept)
	r := f.transit(t)
	if got := f.custody.available(t, custodyBTC); got != "0.75" {
		t.Fatalf("custody BTC after both landed = %s, want 0.75 (a hook did not run during the reconciliation)", got)
	}
	if len(r.GetViolations()) > 0 {
		t.Errorf("transit while transfers landed = %v, want no violation", r)
	}
	f.clock.advance(time.Second)
	if r := f.transit(t); len(r.GetViolations()) > 0 || r.GetInFlight() != 0 || r.GetCurrencies()[0].GetInFlight() != "0" ||
		r.GetCurrencies()[0].GetSent() != "0.75" || r.GetCurrencies()[0].GetReceived() != "0.75" {
		t.Errorf("transit after the landings = %v, want both sides at 0.75 and nothing in flight", r)
	}
}

// TestOperatorSeesWithdrawalNotTheClientsDetails: the venue's withdrawal search shows the
// withdrawal to custody, but not the client's service request or custody wallet; the client
// sees both.
func TestOperatorSeesWithdrawalNotTheClientsDetails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	id := f.requestToCustody(t, "SERV-REQ-SEE", btcWallet, custodyBTC, "0.1")
	for name, c := range map[string]struct {
		ctx                 context.Context
		request, custodyWID string
	}{
		"the venue":  {f.venueCtx(), "", ""},
		"the client": {f.companyCtx(ztest), "SERV-REQ-SEE", custodyBTC},
	} {
		resp, err := f.svc.SearchWithdrawals(c.ctx, &interchangev1.SearchWithdrawalsRequest{TransferIds: []string{id}})
		if err != nil || len(resp.GetItems()) != 1 {
			t.Fatalf("%s: search = %v, %v; want the withdrawal", name, resp, err)
		}
		w := resp.GetItems()[0]
		if w.GetRequestId() != c.request || w.GetDestinationWalletId() != c.custodyWID || w.GetAmount() != "0.1" || w.GetVenueId() != venue {
			t.Errorf("%s sees %v, want request %q and custody wallet %q", name, w, c.request, c.custodyWID)
		}
	}
}

// TestExecutionCutShortIsRetriedNotFailed: the hold of a requested withdrawal fails on an
// internal error after the withdrawal is stored: the execution answers 503 (the service desk
// retries it rather than recording the request FAILED while the withdrawal lives on), and its
// repeat places the hold.
func TestExecutionCutShortIsRetriedNotFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	p := f.wired.Plugin(nil)
	sr := withdrawalRequest(t, "SERV-REQ-CUT", btcWallet, custodyBTC, "0.3")
	v, err := p.Validate(servicedeskCtx(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	id := v.GetEntityIds()[0]
	f.ledger.setFail(failOnce(withdrawal.HoldID(withdrawal.Withdrawal{TransferID: id}, 1), status.Error(codes.Internal, "trading broke")))
	_, err = p.Execute(servicedeskCtx(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: v.GetEntityIds()})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("execution whose hold failed: %v, want Unavailable (retried)", err)
	}
	if _, err := p.Execute(servicedeskCtx(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: v.GetEntityIds()}); err != nil {
		t.Fatalf("the repeated execution: %v", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.7", "1", "0.3"} {
		t.Errorf("trading BTC after the repeat = %v, want 0.3 held once", got)
	}
}
