package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/trading"
)

// custodianClient signs as ZCUSTODY, the custodian's own company, with its demo user of role
// as submitter (role company: no submitter).
func custodianClient(t *testing.T, role string) *signing.Client {
	t.Helper()
	pemBytes, err := demo.Key("zcustody-company.pem")
	if err != nil {
		t.Fatal(err)
	}
	key, err := signing.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	c := &signing.Client{BaseURL: env.stack.GatewayURL, Company: demo.CompanyZCUSTODY, Key: key, HTTP: &http.Client{Timeout: 30 * time.Second}}
	if role != company {
		c.Submitter = demo.UserEmail("zcustody", role)
	}
	return c
}

// custodianAct fetches the pending object of a ZCUSTODY request as role, sets the decision
// (none: the maker's confirmation as offered), signs it with the user's key and sends it.
func custodianAct(t *testing.T, role, requestID, decision string) response {
	t.Helper()
	var p pendingAnswer
	wantOK(t, do(t, custodianClient(t, role), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": requestID})), &p)
	if decision != "" {
		p.Request["type"] = decision
	}
	return do(t, custodianClient(t, role), http.MethodPost, approvePath, approveBody(t, requestID, p.Request, userKey(t, demo.CompanyZCUSTODY, role)))
}

// reversalPayload asks for the reversal of a trading journal entry, per account when
// amounts are given (account → amount, in BTC).
func reversalPayload(entryID string, amounts map[string]string) map[string]any {
	p := map[string]any{"journal": "trading", "entryId": entryID, "reason": "booked by mistake"}
	if amounts != nil {
		var list []any
		for account, a := range amounts {
			list = append(list, map[string]any{"account": account, "currency": "BTC", "amount": a})
		}
		p["amounts"] = list
	}
	return p
}

// recordDeposit credits a wallet under a known deposit id (its entry is
// trading.DepositEntryID(id)), as the settlement engine.
func recordDeposit(t *testing.T, id, walletID, amount string) string {
	t.Helper()
	ledger, ctx := newPriceFeed(t)
	if _, err := ledger.RecordDeposit(ctx(), &tradingv1.RecordDepositRequest{DepositId: id, CompanyId: demo.CompanyZTEST, WalletId: walletID,
		Currency: "BTC", Amount: amount}); err != nil {
		t.Fatalf("deposit %s: %v", id, err)
	}
	return trading.DepositEntryID(id)
}

type reversalPosting struct {
	walletPosting
	Reverses *string `json:"reverses"`
}

// walletHistory reads a ZTEST wallet's whole statement (one page) through the gateway.
func walletHistory(t *testing.T, walletID string) []reversalPosting {
	t.Helper()
	var page struct {
		Items []reversalPosting `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/trading/wallets/history",
		mustJSON(t, map[string]any{"walletId": walletID, "paginationLimit": 100})), &page)
	return page.Items
}

// TestLedgerReversalThroughTheServiceDesk: a deposit booked on a client's trading wallet by
// mistake is corrected by the custodian's operators with four eyes: ZCUSTODY's maker asks
// for its reversal (0x0009-001), its checker approves, trading reverses it; the wallet's
// statement shows the reversal linked to the deposit, and the balances are back. A client
// cannot ask for it; an unknown entry and a reversal beyond the entry are refused at create
// with the contract's error body.
func TestLedgerReversalThroughTheServiceDesk(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	before := clientBalances(t, f.btc)[f.btc]
	entry := recordDeposit(t, "E2E-REV-"+uuid.NewString(), f.btc, "0.4")
	if got := clientBalances(t, f.btc)[f.btc]; got[1] != "1.4" {
		t.Fatalf("ledger balance after the deposit = %v, want 1.4", got)
	}

	// Only the custodian's users see it in the catalog; a client's maker cannot ask for it.
	var products struct {
		Items []struct {
			ServiceID string `json:"serviceId"`
		} `json:"items"`
	}
	wantOK(t, do(t, custodianClient(t, viewer), http.MethodPost, productsPath, []byte(`{}`)), &products)
	if len(products.Items) != 1 || products.Items[0].ServiceID != servicedesk.ServiceLedgerReversal {
		t.Errorf("ZCUSTODY's catalog = %+v, want the ledger reversal only", products.Items)
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, productsPath, []byte(`{"serviceIds":["0x0009-001"]}`)), &products)
	if len(products.Items) != 0 {
		t.Errorf("ZTEST's catalog shows %+v", products.Items)
	}
	r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, createBody(t, servicedesk.ServiceLedgerReversal, reversalPayload(entry, nil)))
	wantError(t, r, http.StatusForbidden, "ER-403")

	// Refusals at create, in the contract's error body.
	for _, tt := range []struct {
		name    string
		payload map[string]any
		status  int
		code    string
	}{
		{"unknown entry", reversalPayload("dep:NO-SUCH-DEPOSIT", nil), http.StatusNotFound, "ER-102"},
		{"more than the entry moved", reversalPayload(entry, map[string]string{f.btc: "0.5", trading.WorldDeposits: "0.5"}), http.StatusConflict, "ER-409"},
		{"unbalanced", reversalPayload(entry, map[string]string{f.btc: "0.1", trading.WorldDeposits: "0.2"}), http.StatusBadRequest, "ER-108"},
		{"another company's journal name", map[string]any{"journal": "interchange", "entryId": entry}, http.StatusBadRequest, "ER-108"},
	} {
		r := do(t, custodianClient(t, maker), http.MethodPost, createPath, createBody(t, servicedesk.ServiceLedgerReversal, tt.payload))
		if msg := wantError(t, r, tt.status, tt.code); msg == "" {
			t.Errorf("%s: no message", tt.name)
		}
	}

	// A partial reversal first (0.1), then the rest in full is more than is left: refused;
	// then the rest (0.3).
	reverse := func(amounts map[string]string) (createAnswer, response) {
		var got createAnswer
		wantOK(t, do(t, custodianClient(t, maker), http.MethodPost, createPath, createBody(t, servicedesk.ServiceLedgerReversal, reversalPayload(entry, amounts))), &got)
		wantStatus(t, custodianAct(t, maker, got.RequestID, ""), "PENDING AUTHORISATION")
		return got, custodianAct(t, checker, got.RequestID, "Approve")
	}
	first, approved := reverse(map[string]string{f.btc: "0.1", trading.WorldDeposits: "0.1"})
	wantStatus(t, approved, "COMPLETED")
	if want := first.RequestID + ":reversal"; len(first.PluginDetail.EntityID) != 1 || first.PluginDetail.EntityID[0] != want {
		t.Errorf("entityId %v, want [%s]", first.PluginDetail.EntityID, want)
	}
	r = do(t, custodianClient(t, maker), http.MethodPost, createPath, createBody(t, servicedesk.ServiceLedgerReversal, reversalPayload(entry, nil)))
	wantError(t, r, http.StatusConflict, "ER-409")
	second, approved := reverse(map[string]string{f.btc: "0.3", trading.WorldDeposits: "0.3"})
	wantStatus(t, approved, "COMPLETED")

	if got := clientBalances(t, f.btc)[f.btc]; got != before {
		t.Errorf("balances after the reversals = %v, want them back at %v", got, before)
	}
	var links []string
	for _, p := range walletHistory(t, f.btc) {
		if p.Reverses != nil {
			links = append(links, p.EntryID+"→"+*p.Reverses+":"+p.Type+":"+p.LedgerChange+":"+p.Reference)
		}
	}
	ref := strings.TrimPrefix(entry, "dep:") // a reversal keeps its entry's business reference
	want := []string{first.RequestID + ":reversal→" + entry + ":correction.reversal:-0.1:" + ref,
		second.RequestID + ":reversal→" + entry + ":correction.reversal:-0.3:" + ref}
	if len(links) != 2 || links[0] != want[0] || links[1] != want[1] {
		t.Errorf("reversals in the statement = %v, want %v", links, want)
	}
}

// TestLedgerReversalRefusedAtExecution: a reversal approved while the money it takes back was
// spent meanwhile fails (FAILED, with the journal's reason), and changes nothing.
func TestLedgerReversalRefusedAtExecution(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "0", "0", "0", "0")
	entry := recordDeposit(t, "E2E-REV-"+uuid.NewString(), f.btc, "0.2")
	var got createAnswer
	wantOK(t, do(t, custodianClient(t, maker), http.MethodPost, createPath, createBody(t, servicedesk.ServiceLedgerReversal, reversalPayload(entry, nil))), &got)
	wantStatus(t, custodianAct(t, maker, got.RequestID, ""), "PENDING AUTHORISATION")
	spend(t, f, "0.15") // meanwhile the wallet pays 0.15 to its venue
	wantStatus(t, custodianAct(t, checker, got.RequestID, "Approve"), "FAILED")
	if b := clientBalances(t, f.btc)[f.btc]; b[1] != "0.05" {
		t.Errorf("ledger balance = %v, want 0.05 (nothing reversed)", b)
	}
}

// spend moves amount BTC from the fixture's ZTEST wallet to its venue's settlement wallet, a
// settlement the venue's operator instructs and the settlement engine completes.
func spend(t *testing.T, f venueFixture, amount string) {
	t.Helper()
	id := f.createSettlement(t, instructionBody("REV-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", amount)})).SettlementTrackingID
	engine := newSettlementEngine(t)
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, id, to, to)
	}
}
