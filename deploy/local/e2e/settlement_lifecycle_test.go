package e2e_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
)

// TestSettlementConservesBalances runs a settlement instructed by the venue's operator with
// receivables (BTC, two legs) and a netted payable (ETH: a payable and a receivable) to
// SETTLEMENT_COMPLETE: each wallet ends exactly where the instruction says, and every
// balance kind, summed per currency over the client's and the venue's wallets, is the same
// before and after, to the last decimal.
func TestSettlementConservesBalances(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "10.12345678", "1", "0.5", "100.000000000000000001")
	engine := newSettlementEngine(t)
	before := f.totals(t)
	body := instructionBody("CONS-"+uuid.NewString()[:8], f.venue, []map[string]any{
		legOf(f.btc, "BTC", "BTC", "1.23456789"), legOf(f.btc, "BTC", "BTC", "0.00000001"),
		legOf(f.eth, "ETH", "ETH", "-30"), legOf(f.eth, "ETH", "ETH", "9.499999999999999999"),
	}, map[string]any{"currency": "ETH", "ledger": "ETH", "amount": "-20.500000000000000001"})
	body["header"].(map[string]any)["instructionCount"] = 4
	id := f.createSettlement(t, body).SettlementTrackingID
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, id, to, to)
	}
	if diff := cmp.Diff(before, f.totals(t)); diff != "" {
		t.Errorf("totals per currency changed (-before +after):\n%s", diff)
	}
	want := map[string]amounts{
		f.btc: {"8.88888888", "8.88888888", "0", "0"},
		f.eth: {"21.500000000000000001", "21.500000000000000001", "0", "0"},
	}
	if diff := cmp.Diff(want, clientBalances(t, f.btc, f.eth)); diff != "" {
		t.Errorf("client balances (-want +got):\n%s", diff)
	}
	if got := f.venueBalance(t, "BTC"); got != (amounts{"1.7345679", "1.7345679", "0", "0"}) {
		t.Errorf("venue BTC %v, want 0.5 + 1.2345679", got)
	}
	if got := f.venueBalance(t, "ETH"); got != (amounts{"79.5", "79.5", "0", "0"}) {
		t.Errorf("venue ETH %v, want 100.000000000000000001 - 20.500000000000000001", got)
	}
	var st settlementAnswer
	wantOK(t, settlementStatus(t, f.operatorClient(company), body["header"].(map[string]any)["settlementRequestId"].(string)), &st)
	if st.Status != "SETTLEMENT_COMPLETE" || st.Errors != nil {
		t.Errorf("status %+v, want SETTLEMENT_COMPLETE without errors", st)
	}
}

// TestSettlementConcurrentTransitions: of 20 racing transitions of one settlement exactly
// one wins, the others are 409, and the pay-in moves the funds once.
func TestSettlementConcurrentTransitions(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "5", "0", "0", "0")
	engine := newSettlementEngine(t)
	id := f.createSettlement(t, instructionBody("RACE-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "2")})).SettlementTrackingID
	engine.mustAdvance(t, id, "SETTLEMENT_INITIATED", "SETTLEMENT_INITIATED")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wins []string
	for i := range 20 {
		to := []string{"SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_IN", "SETTLEMENT_FAILED", "SETTLEMENT_AWAITING_FUNDS"}[i%4]
		wg.Go(func() {
			got, err := engine.advance(id, to)
			if err == nil {
				mu.Lock()
				wins = append(wins, got)
				mu.Unlock()
				return
			}
			if c := status.Code(err); (c != codes.Aborted && c != codes.FailedPrecondition) || grpcERCode(err) != "ER-409" {
				t.Errorf("a losing transition to %s: %v, want 409 ER-409", to, err)
			}
		})
	}
	wg.Wait()
	if len(wins) != 1 {
		t.Fatalf("winning transitions %v, want exactly one", wins)
	}
	want := amounts{"5", "5", "0", "0"}
	if wins[0] == "SETTLEMENT_PAY_IN" {
		want = amounts{"3", "5", "2", "0"} // held until PAY_OUT
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != want {
		t.Errorf("client BTC after %s = %v, want %v", wins[0], got, want)
	}
}

// TestSettlementAwaitingFunds: a pay-in the wallet cannot cover holds nothing (all payers or
// none), goes to SETTLEMENT_AWAITING_FUNDS and never drives a balance negative; FAILED then
// has nothing to give back, and the wallet is whole.
func TestSettlementAwaitingFunds(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	engine := newSettlementEngine(t)
	requestID := "AWAIT-" + uuid.NewString()[:8]
	id := f.createSettlement(t, instructionBody(requestID, f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.6"), legOf(f.btc, "BTC", "BTC", "0.6")})).SettlementTrackingID
	engine.mustAdvance(t, id, "SETTLEMENT_INITIATED", "SETTLEMENT_INITIATED")
	engine.mustAdvance(t, id, "SETTLEMENT_PAY_IN", "SETTLEMENT_AWAITING_FUNDS")
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"1", "1", "0", "0"}) {
		t.Errorf("client BTC while awaiting funds = %v, want nothing held", got)
	}
	if got := f.venueBalance(t, "BTC"); got != (amounts{"0", "0", "0", "0"}) {
		t.Errorf("venue BTC while awaiting funds = %v, want nothing paid in", got)
	}
	if _, err := engine.advance(id, "SETTLEMENT_COMPLETE"); status.Code(err) != codes.FailedPrecondition || grpcERCode(err) != "ER-409" {
		t.Errorf("AWAITING_FUNDS → COMPLETE = %v, want an illegal transition (409 ER-409)", err)
	}
	engine.mustAdvance(t, id, "SETTLEMENT_FAILED", "SETTLEMENT_FAILED")
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"1", "1", "0", "0"}) {
		t.Errorf("client BTC after FAILED = %v, want the holds released", got)
	}
	var st settlementAnswer
	wantOK(t, settlementStatus(t, f.operatorClient(company), requestID), &st)
	if st.Status != "SETTLEMENT_FAILED" || st.Errors["message"] != "e2e" || st.Errors["code"] != "ER-409" {
		t.Errorf("status %+v, want SETTLEMENT_FAILED with the reason in errors", st)
	}
}

// TestSettlementEngineAccess: the engine's methods refuse any caller but the settlement
// engine, and check their input.
func TestSettlementEngineAccess(t *testing.T) {
	t.Parallel()
	engine := newSettlementEngine(t)
	if _, err := engine.advance("STL-UNKNOWN0000000", "SETTLEMENT_INITIATED"); status.Code(err) != codes.NotFound || grpcERCode(err) != "ER-102" {
		t.Errorf("unknown settlement: %v, want NotFound ER-102", err)
	}
	if _, err := engine.advance("STL-UNKNOWN0000000", "SETTLED"); status.Code(err) != codes.InvalidArgument || grpcERCode(err) != "ER-108" {
		t.Errorf("unknown status: %v, want InvalidArgument ER-108", err)
	}
	r := do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, "/v3/api/interchange/settlement/advance", []byte(`{}`))
	if r.status != http.StatusNotFound {
		t.Errorf("the internal method has a REST path: %d %s", r.status, r.body)
	}
}
