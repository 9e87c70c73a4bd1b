package e2e_test

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/trading"
)

// withdrawalService is the client's withdrawal from its trading wallet to its custody wallet.
const withdrawalService = "0x0003-004"

// withdrawalPayload asks to move amount from a trading wallet to a custody wallet.
func withdrawalPayload(sender, destination, amount string) map[string]any {
	return map[string]any{"sender": map[string]any{"type": "WALLETID", "value": sender},
		"destination": map[string]any{"type": "WALLETID", "value": destination}, "amount": amount}
}

// requestWithdrawal has ZTEST's maker request a withdrawal; it returns the request and the
// transfer id reserved for it.
func requestWithdrawal(t *testing.T, sender, destination, amount string) (requestID, transferID string) {
	t.Helper()
	got := create(t, demo.CompanyZTEST, maker, createBody(t, withdrawalService, withdrawalPayload(sender, destination, amount)))
	if len(got.PluginDetail.EntityID) != 1 || !strings.HasPrefix(got.PluginDetail.EntityID[0], "TWD-"+demo.CompanyZTEST+"-") {
		t.Fatalf("withdrawal request reserved %v, want one TWD-%s- transfer id", got.PluginDetail.EntityID, demo.CompanyZTEST)
	}
	return got.RequestID, got.PluginDetail.EntityID[0]
}

// authorised has ZTEST's maker confirm a request and its checker approve it, and returns the
// status the request reached.
func authorised(t *testing.T, requestID string) string {
	t.Helper()
	var got statusAnswer
	wantOK(t, authorise(t, requestID), &got)
	return got.Status
}

// newCustodyWallet creates a ZTEST custody wallet in currencyID through the service desk
// (0x0013-001, maker then checker) and returns its id.
func newCustodyWallet(t *testing.T, currency, currencyID string) string {
	t.Helper()
	payload := map[string]any{"name": []string{"E2E transfer target"}, "currency": []string{currency}, "currencyId": []string{currencyID}}
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", payload))
	wlComplete(t, demo.CompanyZTEST, got.RequestID)
	return got.PluginDetail.EntityID[0]
}

// custodyAvailable is a custody wallet's available balance in its first asset (endpoint 14).
func custodyAvailable(t *testing.T, walletID string) string {
	t.Helper()
	w := legacyWalletOf(t, demo.CompanyZTEST, walletID)
	if len(w.AssetBalances) == 0 {
		t.Fatalf("custody wallet %s lists no asset", walletID)
	}
	return w.AssetBalances[0].AvailableBalance
}

// transitReconciled fails the test unless trading's and custody's in-transit accounts agree
// (ReconcileTransit, as the settlement engine). Other tests move money meanwhile, which the
// reconciliation may catch half-way: a difference must persist to count.
func transitReconciled(t *testing.T) *interchangev1.ReconcileTransitResponse {
	t.Helper()
	engine := newSettlementEngine(t)
	var last *interchangev1.ReconcileTransitResponse
	for range 10 {
		resp, err := engine.client.ReconcileTransit(engine.ctx(), &interchangev1.ReconcileTransitRequest{})
		if err != nil {
			t.Fatalf("reconcile transit: %v", err)
		}
		if last = resp; len(resp.GetViolations()) == 0 && resp.GetInFlight() == 0 {
			return resp
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Errorf("the in-transit accounts do not agree: %v (in flight %d)", last.GetViolations(), last.GetInFlight())
	return last
}

// custodyReconciled fails the test unless custody's journal reconciles (its Reconcile, as
// interchange, the one caller custody's ledger API admits); like trading's, a difference must
// persist over several attempts to count while other tests move money.
func custodyReconciled(t *testing.T) {
	t.Helper()
	conn, ctx := internalConnAs(t, "custody", "interchange", "interchange-internal.pem")
	var last []string
	for range 10 {
		resp, err := custodyv1.NewCustodyLedgerServiceClient(conn).Reconcile(ctx(), &custodyv1.ReconcileRequest{})
		if err != nil {
			t.Fatalf("reconcile custody: %v", err)
		}
		if last = resp.GetViolations(); len(last) == 0 {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Errorf("custody's journal does not reconcile:\n%s", strings.Join(last, "\n"))
}

// TestTwoSidedInterchangeFlow walks issue 18's flow through the gateway: the client's
// trading wallets are funded; the venue's operator instructs a settlement with a receivable
// (the client sells 0.5 BTC) and a payable (the venue pays 3 ETH); the engine advances it to
// COMPLETE; the client's maker requests a withdrawal of 1 BTC to its custody wallet and its
// checker authorises it (the amount is held); the client cannot decide it, another venue's
// operator does not find it; the venue's operator accepts; the custody wallet rises by 1
// BTC, the trading wallet falls by it, and both journals and the in-transit accounts
// reconcile.
func TestTwoSidedInterchangeFlow(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "2", "0", "0", "10")
	target := newCustodyWallet(t, "BTC", "btc-btc")
	if got := custodyAvailable(t, target); got != "0" {
		t.Fatalf("new custody wallet holds %s BTC, want 0", got)
	}

	// The venue settles a trade.
	body := instructionBody("FLOW-"+f.venue, f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.5"), legOf(f.eth, "ETH", "ETH", "-3")})
	stl := f.createSettlement(t, body)
	engine := newSettlementEngine(t)
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, stl.SettlementTrackingID, to, to)
	}
	balances := clientBalances(t, f.btc, f.eth)
	if balances[f.btc] != (amounts{"1.5", "1.5", "0", "0"}) || balances[f.eth] != (amounts{"3", "3", "0", "0"}) {
		t.Fatalf("after the settlement: BTC %v, ETH %v; want 1.5 BTC and 3 ETH", balances[f.btc], balances[f.eth])
	}

	// The client asks for 1 BTC back in custody; its checker authorises: the amount is held.
	requestID, transferID := requestWithdrawal(t, f.btc, target, "1")
	if got := authorised(t, requestID); got != "COMPLETED" {
		t.Fatalf("authorised withdrawal request is %s, want COMPLETED", got)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.5", "1.5", "1", "0"}) {
		t.Errorf("trading BTC once requested = %v, want 1 held", got)
	}

	// Only the venue's operator decides.
	confirmBody := func(decision string) []byte {
		b := map[string]string{"transferId": transferID, "withdrawalConfirmation": decision}
		if decision == "DECLINE" {
			b["reason"] = "not yours to decide"
		}
		return mustJSON(t, b)
	}
	for name, c := range map[string]struct {
		role, company string
		status        int
		code          string
	}{
		"the client itself":        {company, demo.CompanyZTEST, http.StatusForbidden, "ER-403"},
		"the client's checker":     {checker, demo.CompanyZTEST, http.StatusForbidden, "ER-403"},
		"another venue's operator": {company, demo.CompanyZBYBIT, http.StatusNotFound, "ER-102"},
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, do(t, newClient(c.company, c.role), http.MethodPost, withdrawalPath, confirmBody("ACCEPT")), c.status, c.code)
			wantError(t, do(t, newClient(c.company, c.role), http.MethodPost, withdrawalPath, confirmBody("DECLINE")), c.status, c.code)
		})
	}
	if got := custodyAvailable(t, target); got != "0" {
		t.Errorf("custody BTC after the refused decisions = %s, want 0", got)
	}

	// The venue accepts: the money leaves trading and lands in custody, once.
	for range 2 {
		var got struct {
			TransferID string `json:"transferId"`
		}
		if wantOK(t, do(t, f.operatorClient(maker), http.MethodPost, withdrawalPath, confirmBody("ACCEPT")), &got); got.TransferID != transferID {
			t.Errorf("accept answered transfer %q, want %s", got.TransferID, transferID)
		}
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.5", "0.5", "0", "0"}) {
		t.Errorf("trading BTC once accepted = %v, want 1 gone", got)
	}
	if got := custodyAvailable(t, target); got != "1" {
		t.Errorf("custody BTC once accepted = %s, want 1", got)
	}
	transitReconciled(t)
	custodyReconciled(t)
}

// TestWithdrawalRequestRefusals: a withdrawal request names the company's own ACTIVE
// trading wallet and its own custody wallet able to take the currency, with an amount the
// currency can carry; anything else is refused when the request is made, with nothing
// held. One for more than the wallet holds is made, but its execution is refused (the
// request FAILED, nothing held).
func TestWithdrawalRequestRefusals(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "1", "0", "0")
	target := newCustodyWallet(t, "BTC", "btc-btc")
	ethTarget := newCustodyWallet(t, "ETH", "eth-eth")
	now := time.Now().UTC().Truncate(time.Millisecond)
	acmeTrading := trading.Wallet{ID: trading.NewWalletID(demo.CompanyZACME), VenueID: f.venue, Name: "E2E ACME", Status: trading.StatusActive,
		CompanyID: demo.CompanyZACME, Currency: "BTC", CustomProperties: `{}`, CreatedAt: now, UpdatedAt: now, Version: 1, RequestID: "E2E"}
	if err := f.store.PutWallet(t.Context(), acmeTrading); err != nil {
		t.Fatal(err)
	}
	deposit(t, demo.CompanyZACME, acmeTrading.ID, "BTC", "1")
	acmeCustody, err := custody.Open(custody.Opening{ID: custody.NewWalletID(demo.CompanyZACME, ""), Name: "E2E ACME", CompanyID: demo.CompanyZACME,
		CreatedBy: demo.UserEmail("zacme", maker), CurrencyID: "btc-btc", At: now, Balance: custody.Amounts{Available: "0", Ledger: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := custodyStore(t).PutWallet(context.Background(), acmeCustody); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		payload map[string]any
		status  int
		code    string
	}{
		{"another company's trading wallet", withdrawalPayload(acmeTrading.ID, target, "0.1"), http.StatusNotFound, "ER-102"},
		{"an unknown trading wallet", withdrawalPayload(demo.CompanyZTEST+"-TW-NOSUCH0000", target, "0.1"), http.StatusNotFound, "ER-102"},
		{"a deactivated trading wallet", withdrawalPayload(f.inactive, target, "0.1"), http.StatusConflict, "ER-113"},
		{"another company's custody wallet", withdrawalPayload(f.btc, acmeCustody.ID, "0.1"), http.StatusNotFound, "ER-102"},
		{"a custody wallet of another currency", withdrawalPayload(f.btc, ethTarget, "0.1"), http.StatusBadRequest, "ER-111"},
		{"an amount finer than a satoshi", withdrawalPayload(f.btc, target, "0.000000001"), http.StatusBadRequest, "ER-108"},
		{"a zero amount", withdrawalPayload(f.btc, target, "0"), http.StatusBadRequest, "ER-108"},
		{"a destination that is no wallet id", map[string]any{"sender": map[string]any{"type": "WALLETID", "value": f.btc},
			"destination": map[string]any{"type": "ENDPOINT", "value": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}, "amount": "0.1"}, http.StatusBadRequest, "ER-108"},
		{"no amount", map[string]any{"sender": map[string]any{"type": "WALLETID", "value": f.btc},
			"destination": map[string]any{"type": "WALLETID", "value": target}}, http.StatusBadRequest, "ER-101"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := createBody(t, withdrawalService, tt.payload)
			wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, body), tt.status, tt.code)
		})
	}
	// More than the wallet holds: the request is made, its execution refused.
	requestID, _ := requestWithdrawal(t, f.btc, target, "1.5")
	if got := authorised(t, requestID); got != "FAILED" {
		t.Errorf("withdrawal of 1.5 BTC out of 1: request %s, want FAILED", got)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"1", "1", "0", "0"}) {
		t.Errorf("trading BTC after the refused withdrawals = %v, want untouched", got)
	}
	if got := custodyAvailable(t, target); got != "0" {
		t.Errorf("custody BTC after the refused withdrawals = %s, want 0", got)
	}
}

// TestDeclinedWithdrawalReleasesItsHold: the venue's DECLINE gives the held amount back to
// the trading wallet and credits nothing in custody; a later ACCEPT is 409.
func TestDeclinedWithdrawalReleasesItsHold(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	target := newCustodyWallet(t, "BTC", "btc-btc")
	requestID, transferID := requestWithdrawal(t, f.btc, target, "0.4")
	if got := authorised(t, requestID); got != "COMPLETED" {
		t.Fatalf("authorised withdrawal request is %s, want COMPLETED", got)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.6", "1", "0.4", "0"}) {
		t.Errorf("trading BTC once requested = %v, want 0.4 held", got)
	}
	decline := mustJSON(t, map[string]string{"transferId": transferID, "withdrawalConfirmation": "DECLINE", "reason": "collateral for open trades"})
	var got map[string]any
	wantOK(t, do(t, f.operatorClient(maker), http.MethodPost, withdrawalPath, decline), &got)
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"1", "1", "0", "0"}) {
		t.Errorf("trading BTC once declined = %v, want the hold released", got)
	}
	accept := mustJSON(t, map[string]string{"transferId": transferID, "withdrawalConfirmation": "ACCEPT"})
	wantError(t, do(t, f.operatorClient(maker), http.MethodPost, withdrawalPath, accept), http.StatusConflict, "ER-409")
	if got := custodyAvailable(t, target); got != "0" {
		t.Errorf("custody BTC after the decline = %s, want 0", got)
	}
	transitReconciled(t)
	custodyReconciled(t)
}

// operatorAct has the venue operator's role fetch a request's pending object, sign it with
// its demo key and send it (the operator's maker confirms, its checker approves).
func (f venueFixture) operatorAct(t *testing.T, role, requestID, decision string) response {
	t.Helper()
	c := f.operatorClient(role)
	var p pendingAnswer
	wantOK(t, do(t, c, http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": requestID})), &p)
	if decision != "" {
		p.Request["type"] = decision
	}
	pemBytes, err := demo.Key(demo.VenueOperatorKeys + "-" + role + ".pem")
	if err != nil {
		t.Fatal(err)
	}
	key, err := signing.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, c, http.MethodPost, approvePath, approveBody(t, requestID, p.Request, key.(*ecdsa.PrivateKey)))
}

// TestInstructionThroughTheServiceDesk: a venue operator's maker requests a settlement
// instruction (0x0003-003) and its checker authorises it: the settlement is recorded at the
// venue under the request's id, the engine advances it, and the client's wallet pays the
// venue. The client cannot request one (403), nor the operator at another venue (403).
func TestInstructionThroughTheServiceDesk(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	payload := func(venue string) map[string]any {
		return map[string]any{"sender": map[string]any{"type": "WALLETID", "value": f.btc},
			"destination": map[string]any{"type": "WALLETID", "value": trading.VenueWalletID(venue, "BTC")},
			"currency":    "BTC", "venueId": venue, "amount": "0.3", "subtractFee": false}
	}
	var made createAnswer
	wantOK(t, do(t, f.operatorClient(maker), http.MethodPost, createPath, createBody(t, "0x0003-003", payload(f.venue))), &made)
	if len(made.PluginDetail.EntityID) != 1 || made.PluginDetail.EntityID[0] != made.RequestID {
		t.Fatalf("instruction request reserved %v, want its own id %s", made.PluginDetail.EntityID, made.RequestID)
	}
	wantStatus(t, f.operatorAct(t, maker, made.RequestID, ""), "PENDING AUTHORISATION")
	wantStatus(t, f.operatorAct(t, checker, made.RequestID, "Approve"), "COMPLETED")

	var st settlementAnswer
	wantOK(t, settlementStatus(t, f.operatorClient(viewer), made.RequestID), &st)
	if st.Status != "SETTLEMENT_RECEIVED" || st.SettlementTrackingID == "" {
		t.Fatalf("settlement of the request: %+v, want RECEIVED with a tracking id", st)
	}
	engine := newSettlementEngine(t)
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, st.SettlementTrackingID, to, to)
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.7", "0.7", "0", "0"}) {
		t.Errorf("client BTC after the instruction = %v, want 0.3 paid", got)
	}
	if got := f.venueBalance(t, "BTC"); got[1] != "0.3" {
		t.Errorf("venue BTC after the instruction = %v, want 0.3 received", got)
	}

	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, createBody(t, "0x0003-003", payload(f.venue))),
		http.StatusForbidden, "ER-403")
	wantError(t, do(t, f.operatorClient(maker), http.MethodPost, createPath, createBody(t, "0x0003-003", payload("BYBIT"))),
		http.StatusForbidden, "ER-403")
}
