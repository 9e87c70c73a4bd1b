package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/settlement"
)

// The venue's side of the tests: its company and settlement wallets.
const (
	venueCompany = "VENUE-BYBIT"
	venueBTC     = "BYBIT-ISW-BTC"
	venueETH     = "BYBIT-ISW-ETH"
)

// zero is an account that holds nothing (or does not exist).
var zero = [3]string{"0", "0", "0"}

// trade is a BTC receivable of 1.5 (the client pays) and an ETH payable of 20 (the venue
// pays, net -20) at BYBIT: an instruction of the venue's side.
func trade(requestID string) *interchangev1.CreateSettlementRequest {
	return instruction(requestID, []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5"), leg(ethWallet, "ETH", "ETH", "-20")},
		&interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "-20"})
}

// funded returns a fixture whose client BTC wallet holds 100 and the venue's ETH wallet 1000.
func funded(t *testing.T, options ...func(*app.Parts)) fixture {
	t.Helper()
	f := newFixture(t, options...)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "100")
	f.ledger.fund(t, venueCompany, venueETH, "ETH", "1000")
	return f
}

// wantBalances checks [available, ledger, pendingOut] of each account named "<wallet> <currency>".
func (f fixture) wantBalances(t *testing.T, when string, want map[string][3]string) {
	t.Helper()
	got := map[string][3]string{}
	for key := range want {
		wallet, currency, _ := strings.Cut(key, " ")
		got[key] = f.ledger.get(t, wallet, currency)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("balances %s (-want +got):\n%s", when, diff)
	}
}

// walk advances a settlement through steps, each answered with its own status.
func (f fixture) walk(t *testing.T, trackingID string, steps ...string) {
	t.Helper()
	for _, step := range steps {
		f.mustAdvance(t, trackingID, step, step)
	}
}

// pathTo lists the transitions that bring a new settlement to status.
var pathTo = map[string][]string{
	settlement.StatusReceived:      nil,
	settlement.StatusInitiated:     {settlement.StatusInitiated},
	settlement.StatusAwaitingFunds: {settlement.StatusInitiated, settlement.StatusAwaitingFunds},
	settlement.StatusPayIn:         {settlement.StatusInitiated, settlement.StatusPayIn},
	settlement.StatusPayOut:        {settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut},
	settlement.StatusComplete:      {settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut, settlement.StatusComplete},
	settlement.StatusRejected:      {settlement.StatusRejected},
	settlement.StatusFailed:        {settlement.StatusInitiated, settlement.StatusFailed},
}

// TestStateMachine tries every status from every status: the transitions of DESIGN.md §7
// succeed, every other one is 409 (FailedPrecondition, ER-409) and changes nothing.
// legalMoves is DESIGN.md §7's state machine written out here, apart from the production
// table: every (from, to) pair a settlement may take. Every other pair is refused.
var legalMoves = map[[2]string]bool{
	{settlement.StatusReceived, settlement.StatusInitiated}:      true,
	{settlement.StatusReceived, settlement.StatusRejected}:       true,
	{settlement.StatusInitiated, settlement.StatusAwaitingFunds}: true,
	{settlement.StatusInitiated, settlement.StatusPayIn}:         true,
	{settlement.StatusInitiated, settlement.StatusFailed}:        true,
	{settlement.StatusAwaitingFunds, settlement.StatusPayIn}:     true,
	{settlement.StatusAwaitingFunds, settlement.StatusFailed}:    true,
	{settlement.StatusPayIn, settlement.StatusPayOut}:            true,
	{settlement.StatusPayIn, settlement.StatusFailed}:            true,
	{settlement.StatusPayOut, settlement.StatusComplete}:         true,
	{settlement.StatusPayOut, settlement.StatusFailed}:           true,
}

func TestStateMachine(t *testing.T) {
	t.Parallel()
	f := funded(t)
	n := 0
	at := func(from string) (string, string) {
		n++
		requestID := fmt.Sprintf("SM-%d", n)
		id := f.instruct(t, ztest, trade(requestID))
		f.walk(t, id, pathTo[from]...)
		return id, requestID
	}
	for _, from := range settlement.Statuses() {
		id, requestID := at(from)
		for _, to := range settlement.Statuses() {
			if legalMoves[[2]string{from, to}] {
				continue
			}
			got, err := f.advance(id, to)
			if status.Code(err) != codes.FailedPrecondition {
				t.Errorf("%s → %s = %q, %v; want FailedPrecondition", from, to, got, err)
			}
			wantAppErr(t, err, "ER-409", "")
		}
		if got := f.settlementStatus(t, requestID); got != from {
			t.Errorf("after refused transitions from %s the settlement is %s", from, got)
		}
		for _, to := range settlement.Statuses() {
			if !legalMoves[[2]string{from, to}] {
				continue
			}
			id, _ := at(from)
			if got, err := f.advance(id, to); err != nil || got != to {
				t.Errorf("%s → %s = %q, %v; want allowed", from, to, got, err)
			}
		}
	}
}

// TestFullSettlementConservesFunds: PAY_IN holds the client's receivable and the venue's
// payout into the clearing account, PAY_OUT pays both payees out of it, COMPLETE moves
// nothing; the clearing account ends at zero.
func TestFullSettlementConservesFunds(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.instruct(t, ztest, trade("FULL-1"))
	clearing := "clearing:" + id
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusPayIn)
	f.wantBalances(t, "after PAY_IN", map[string][3]string{
		btcWallet + " BTC": {"98.5", "100", "1.5"}, venueBTC + " BTC": zero,
		ethWallet + " ETH": zero, venueETH + " ETH": {"980", "1000", "20"},
		clearing + " BTC": zero, clearing + " ETH": zero,
	})
	f.walk(t, id, settlement.StatusPayOut)
	paid := map[string][3]string{
		btcWallet + " BTC": {"98.5", "98.5", "0"}, venueBTC + " BTC": {"1.5", "1.5", "0"},
		ethWallet + " ETH": {"20", "20", "0"}, venueETH + " ETH": {"980", "980", "0"},
		clearing + " BTC": zero, clearing + " ETH": zero,
	}
	f.wantBalances(t, "after PAY_OUT", paid)
	sent := f.record()
	f.walk(t, id, settlement.StatusComplete)
	if ids := sent.take(); len(ids) > 0 {
		t.Errorf("COMPLETE sent %v to trading, want nothing", ids)
	}
	f.wantBalances(t, "after COMPLETE", paid)
	resp, err := f.svc.GetSettlementStatus(f.companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "FULL-1"})
	if err != nil || resp.GetStatus() != settlement.StatusComplete || resp.GetErrors() != nil {
		t.Errorf("status = %v, %v; want COMPLETE without errors", resp, err)
	}
}

// TestAwaitingFundsHoldsNothing: PAY_IN is all or nothing: a payer short of funds leaves
// the settlement AWAITING_FUNDS with nothing held, each attempt under a new hold id;
// FAILED then has nothing to give back.
func TestAwaitingFundsHoldsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	id := f.create(t, instruction("AF-1", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "0.5"), leg(btcWallet, "BTC", "BTC", "1")}))
	f.walk(t, id, settlement.StatusInitiated)
	sent := f.record()
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC after a short pay-in = %v, want nothing held", got)
	}
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC after a second short pay-in = %v, want unchanged", got)
	}
	want := []string{"stl:" + id + ":payin:1", "stl:" + id + ":payin:2"}
	if ids := sent.take(); !cmp.Equal(want, ids) {
		t.Errorf("pay-in attempts sent %v, want %v", ids, want)
	}
	f.ledger.setFail(nil)
	if _, err := f.engine.AdvanceSettlement(engineCtx(), &interchangev1.AdvanceSettlementRequest{SettlementTrackingId: id, ToStatus: settlement.StatusFailed}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("FAILED without a reason = %v, want InvalidArgument", err)
	}
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC after FAILED = %v, want untouched", got)
	}
	resp, err := f.svc.GetSettlementStatus(f.venueCtx(), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "AF-1"})
	if err != nil || resp.GetErrors().GetMessage() != "test" || resp.GetErrors().GetCode() != "ER-409" {
		t.Errorf("status of a failed settlement = %v, %v; want its reason in errors", resp, err)
	}
}

func TestAwaitingFundsThenFunded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	id := f.create(t, instruction("AF-2", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5")}))
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusAwaitingFunds)
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "2")
	sent := f.record()
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusPayIn)
	if ids := sent.take(); !cmp.Equal(ids, []string{"stl:" + id + ":payin:2"}) {
		t.Errorf("the funded pay-in sent %v, want the second attempt's hold", ids)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.5", "2", "1.5"} {
		t.Errorf("client BTC = %v, want 1.5 held", got)
	}
	f.walk(t, id, settlement.StatusPayOut)
	f.wantBalances(t, "after PAY_OUT", map[string][3]string{btcWallet + " BTC": {"0.5", "0.5", "0"}, venueBTC + " BTC": {"1.5", "1.5", "0"}})
}

// TestPayInAttemptsAreBounded: a PAY_IN refused for lack of funds may be tried again, up
// to settlement.MaxAttempts times (each try is a step of the settlement's history); past
// that it is 409 and recorded nowhere, while FAILED still releases nothing held and ends it.
func TestPayInAttemptsAreBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.create(t, instruction("AF-MAX", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5")}))
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusAwaitingFunds)
	// As if it had been tried MaxAttempts times: the next try would be one more.
	key := bson.D{{Key: "_id", Value: zbybit + ":AF-MAX"}}
	if _, err := f.db.Collection("settlements").UpdateOne(t.Context(), key, bson.D{{Key: "$set", Value: bson.D{{Key: "payInAttempt", Value: settlement.MaxAttempts + 1}}}}); err != nil {
		t.Fatal(err)
	}
	f.ledger.fund(t, ztest, btcWallet, "BTC", "2")
	_, err := f.advance(id, settlement.StatusPayIn)
	wantAppErr(t, err, "ER-409", "")
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("code %s, want FailedPrecondition (409)", status.Code(err))
	}
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	f.wantBalances(t, "after FAILED", map[string][3]string{btcWallet + " BTC": {"2", "2", "0"}, "clearing:" + id + " BTC": zero})
}

// TestPayInNeedsEveryPayer: the venue's payout is held at PAY_IN like a client's
// receivable; while the venue's settlement wallet is short, nobody's money is held.
func TestPayInNeedsEveryPayer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "2")
	id := f.instruct(t, ztest, trade("PI-1"))
	f.walk(t, id, settlement.StatusInitiated)
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	f.wantBalances(t, "after a pay-in the venue cannot fund", map[string][3]string{btcWallet + " BTC": {"2", "2", "0"}, venueETH + " ETH": zero})
	f.ledger.fund(t, venueCompany, venueETH, "ETH", "20")
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusPayIn)
	f.wantBalances(t, "after PAY_IN", map[string][3]string{btcWallet + " BTC": {"0.5", "2", "1.5"}, venueETH + " ETH": {"0", "20", "20"}})
	f.walk(t, id, settlement.StatusPayOut)
	f.wantBalances(t, "after PAY_OUT", map[string][3]string{
		btcWallet + " BTC": {"0.5", "0.5", "0"}, venueBTC + " BTC": {"1.5", "1.5", "0"},
		ethWallet + " ETH": {"20", "20", "0"}, venueETH + " ETH": zero,
	})
}

func TestRacingTransitionsOneWins(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.instruct(t, ztest, trade("RACE-1"))
	f.walk(t, id, settlement.StatusInitiated)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 10 {
		to := settlement.StatusPayIn
		if i%3 == 0 {
			to = settlement.StatusAwaitingFunds
		}
		wg.Go(func() {
			_, err := f.advance(id, to)
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
				return
			}
			if c := status.Code(err); c != codes.Aborted && c != codes.FailedPrecondition {
				t.Errorf("losing advance: %v, want a 409", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d transitions won, want exactly 1", wins)
	}
	got := f.ledger.get(t, btcWallet, "BTC")
	if got != [3]string{"98.5", "100", "1.5"} && got != [3]string{"100", "100", "0"} {
		t.Errorf("client BTC = %v, want held once or not at all", got)
	}
}

// TestResume: a transition cut short is resumed by the same transition asked again; while
// its claim is held another call is refused; once the lease has run out it is taken over,
// and the overtaken runner is told so (Aborted). Nothing moves twice.
func TestResume(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.instruct(t, ztest, trade("RES-1"))
	f.walk(t, id, settlement.StatusInitiated)
	f.ledger.setFail(failOnce("stl:"+id+":payin:1", tradingDown))
	if _, err := f.advance(id, settlement.StatusPayIn); status.Code(err) != codes.Unavailable {
		t.Fatalf("advance with trading down = %v, want Unavailable", err)
	}
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("another transition while PAY_IN is pending = %v, want FailedPrecondition", err)
	}
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusPayIn)

	id2 := f.instruct(t, ztest, trade("RES-2"))
	f.walk(t, id2, settlement.StatusInitiated)
	var nested []string
	f.ledger.setFail(func(entry string) error {
		if entry != "stl:"+id2+":payin:1" {
			return nil
		}
		f.ledger.setFail(nil)
		_, err := f.advance(id2, settlement.StatusPayIn) // the claim is held
		nested = append(nested, status.Code(err).String())
		f.clock.advance(11 * time.Second)
		got, err := f.advance(id2, settlement.StatusPayIn) // the lease ran out: taken over
		nested = append(nested, got, status.Code(err).String())
		return nil
	})
	_, err := f.advance(id2, settlement.StatusPayIn)
	if status.Code(err) != codes.Aborted {
		t.Errorf("the overtaken call = %v, want Aborted", err)
	}
	if want := []string{"Aborted", settlement.StatusPayIn, "OK"}; !cmp.Equal(want, nested) {
		t.Errorf("nested calls %v, want %v", nested, want)
	}
	f.wantBalances(t, "after two pay-ins", map[string][3]string{btcWallet + " BTC": {"97", "100", "3"}, venueETH + " ETH": {"960", "1000", "40"}})
}

// failOnce fails the first call that carries entry with err.
func failOnce(entry string, err error) func(string) error {
	var once sync.Once
	return func(id string) error {
		if id != entry {
			return nil
		}
		var out error
		once.Do(func() { out = err })
		return out
	}
}
