package settlement_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
)

// trade is a BTC receivable of 1.5 and an ETH payable of 20 (net -20) at BYBIT.
func trade(requestID string) *interchangev1.CreateSettlementRequest {
	return instruction(requestID, []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5"), leg(ethWallet, "ETH", "ETH", "20")},
		&interchangev1.NetSettlement{Currency: "ETH", Ledger: "ETH", Amount: "-20"})
}

// funded returns a fixture whose client and venue wallets hold plenty.
func funded(t *testing.T) fixture {
	t.Helper()
	f := newFixture(t)
	f.ledger.fund(ztest, btcWallet, "100")
	f.ledger.fund(ztest, ethWallet, "0")
	f.ledger.fund("VENUE-BYBIT", "BYBIT-ISW-BTC", "0")
	f.ledger.fund("VENUE-BYBIT", "BYBIT-ISW-ETH", "1000")
	return f
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
func TestStateMachine(t *testing.T) {
	t.Parallel()
	f := funded(t)
	n := 0
	for _, from := range settlement.Statuses() {
		for _, to := range settlement.Statuses() {
			n++
			id := f.create(t, trade(fmt.Sprintf("SM-%d", n)))
			for _, step := range pathTo[from] {
				f.mustAdvance(t, id, step, step)
			}
			got, err := f.advance(id, to)
			if settlement.Allowed(from, to) {
				if err != nil || got != to {
					t.Errorf("%s → %s = %q, %v; want allowed", from, to, got, err)
				}
				continue
			}
			if status.Code(err) != codes.FailedPrecondition {
				t.Errorf("%s → %s = %q, %v; want FailedPrecondition", from, to, got, err)
			}
			wantAppErr(t, err, "ER-409", "")
		}
	}
}

func TestFullSettlementConservesFunds(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.create(t, trade("FULL-1"))
	for _, step := range []string{settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut, settlement.StatusComplete} {
		f.mustAdvance(t, id, step, step)
	}
	want := map[string][3]string{
		ztest + "/" + btcWallet:     {"98.5", "98.5", "0"},
		"VENUE-BYBIT/BYBIT-ISW-BTC": {"1.5", "1.5", "0"},
		ztest + "/" + ethWallet:     {"20", "20", "0"},
		"VENUE-BYBIT/BYBIT-ISW-ETH": {"980", "980", "0"},
	}
	got := map[string][3]string{}
	for key := range want {
		company, wallet, _ := strings.Cut(key, "/")
		got[key] = f.ledger.get(company, wallet)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("balances after the settlement (-want +got):\n%s", diff)
	}
	resp, err := f.svc.GetSettlementStatus(companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "FULL-1"})
	if err != nil || resp.GetStatus() != settlement.StatusComplete || resp.GetErrors() != nil {
		t.Errorf("status = %v, %v; want COMPLETE without errors", resp, err)
	}
}

func TestAwaitingFundsThenFailedReleasesHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(ztest, btcWallet, "1")
	two := instruction("AF-1", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "0.5"), leg(btcWallet, "BTC", "BTC", "1")})
	id := f.create(t, two)
	f.mustAdvance(t, id, settlement.StatusInitiated, settlement.StatusInitiated)
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	if got := f.ledger.get(ztest, btcWallet); got != [3]string{"0.5", "1", "0.5"} {
		t.Errorf("client BTC after a short pay-in = %v, want 0.5 held, 0.5 available", got)
	}
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds) // still short: no second hold
	if got := f.ledger.get(ztest, btcWallet); got != [3]string{"0.5", "1", "0.5"} {
		t.Errorf("client BTC after a second short pay-in = %v, want unchanged", got)
	}
	if _, err := f.engine.AdvanceSettlement(engineCtx(), &interchangev1.AdvanceSettlementRequest{SettlementTrackingId: id, ToStatus: settlement.StatusFailed}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("FAILED without a reason = %v, want InvalidArgument", err)
	}
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	if got := f.ledger.get(ztest, btcWallet); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC after FAILED = %v, want every hold released", got)
	}
	resp, err := f.svc.GetSettlementStatus(companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "AF-1"})
	if err != nil || resp.GetErrors().GetMessage() != "test" || resp.GetErrors().GetCode() != "ER-409" {
		t.Errorf("status of a failed settlement = %v, %v; want its reason in errors", resp, err)
	}
}

func TestAwaitingFundsThenFunded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(ztest, btcWallet, "1")
	id := f.create(t, instruction("AF-2", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5")}))
	f.mustAdvance(t, id, settlement.StatusInitiated, settlement.StatusInitiated)
	f.mustAdvance(t, id, settlement.StatusAwaitingFunds, settlement.StatusAwaitingFunds)
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	f.ledger.fund(ztest, btcWallet, "2")
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusPayIn)
	if got := f.ledger.get(ztest, btcWallet); got != [3]string{"0.5", "0.5", "0"} {
		t.Errorf("client BTC = %v, want 0.5 left", got)
	}
}

func TestPayOutNeedsVenueFunds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(ztest, btcWallet, "2")
	f.ledger.fund(ztest, ethWallet, "0")
	id := f.create(t, trade("PO-1"))
	f.mustAdvance(t, id, settlement.StatusInitiated, settlement.StatusInitiated)
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusPayIn)
	_, err := f.advance(id, settlement.StatusPayOut)
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("PAY_OUT from an empty venue wallet = %v, want FailedPrecondition", err)
	}
	f.ledger.fund("VENUE-BYBIT", "BYBIT-ISW-ETH", "20")
	f.mustAdvance(t, id, settlement.StatusPayOut, settlement.StatusPayOut)
	if got := f.ledger.get(ztest, ethWallet); got != [3]string{"20", "20", "0"} {
		t.Errorf("client ETH = %v, want 20 paid out", got)
	}
}

func TestRacingTransitionsOneWins(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.create(t, trade("RACE-1"))
	f.mustAdvance(t, id, settlement.StatusInitiated, settlement.StatusInitiated)
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
	got := f.ledger.get(ztest, btcWallet)
	if got != [3]string{"98.5", "98.5", "0"} && got != [3]string{"100", "100", "0"} {
		t.Errorf("client BTC = %v, want moved once or not at all", got)
	}
}

// TestResume: a transition cut short is resumed by the same transition asked again; while
// its claim is held another call is refused; once the lease has run out it is taken over.
func TestResume(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.create(t, trade("RES-1"))
	f.mustAdvance(t, id, settlement.StatusInitiated, settlement.StatusInitiated)
	f.ledger.fail = failOnce(id+":PAY_IN:leg1:credit", status.Error(codes.Unavailable, "trading is down"))
	if _, err := f.advance(id, settlement.StatusPayIn); status.Code(err) != codes.Unavailable {
		t.Fatalf("advance with trading down = %v, want Unavailable", err)
	}
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("another transition while PAY_IN is pending = %v, want FailedPrecondition", err)
	}
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusPayIn)

	id2 := f.create(t, trade("RES-2"))
	f.mustAdvance(t, id2, settlement.StatusInitiated, settlement.StatusInitiated)
	var nested []string
	f.ledger.fail = func(movement string) error {
		if movement != id2+":PAY_IN:leg1:settle" || len(nested) > 0 {
			return nil
		}
		f.ledger.fail = nil
		_, err := f.advance(id2, settlement.StatusPayIn) // the claim is held
		nested = append(nested, status.Code(err).String())
		f.clock.advance(11 * time.Second)
		got, err := f.advance(id2, settlement.StatusPayIn) // the lease ran out: taken over
		nested = append(nested, got, status.Code(err).String())
		return nil
	}
	_, err := f.advance(id2, settlement.StatusPayIn)
	if status.Code(err) != codes.Aborted {
		t.Errorf("the overtaken call = %v, want Aborted", err)
	}
	if want := []string{"Aborted", settlement.StatusPayIn, "OK"}; !cmp.Equal(want, nested) {
		t.Errorf("nested calls %v, want %v", nested, want)
	}
	if got := f.ledger.get(ztest, btcWallet); got != [3]string{"97", "97", "0"} {
		t.Errorf("client BTC after two pay-ins of 1.5 = %v, want 97 (each moved once)", got)
	}
}

func failOnce(movement string, err error) func(string) error {
	done := false
	return func(id string) error {
		if id != movement || done {
			return nil
		}
		done = true
		return err
	}
}
