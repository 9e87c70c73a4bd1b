package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/settlement"
	interchangestore "github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/internal/journal"
)

// The attack scenarios, at unit level, and the rules that answer them.

// TestNetCannotDrainTheVenue: an instruction holds a receivable of ten million from a
// brand-new, empty USDC wallet with a net claiming the venue pays it ten million. The net must equal the sum of
// the legs, so it is refused; with the right net the wallet has to pay, cannot, and the
// venue's wallet is never touched.
func TestNetCannotDrainTheVenue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, venueCompany, "BYBIT-ISW-USDC", "USDC", "50000000")
	drain := func(requestID, net string) *interchangev1.CreateSettlementRequest {
		return instruction(requestID, []*interchangev1.Settlement{leg(usdcWallet, "USDC", "XLM", "10000000")},
			&interchangev1.NetSettlement{Currency: "USDC", Ledger: "XLM", Amount: net})
	}
	_, err := f.svc.CreateSettlement(f.venueCtx(), drain("DRAIN-1", "-10000000"))
	wantAppErr(t, err, "ER-108", "netSettlements[0].amount")
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("code %s, want InvalidArgument (400)", status.Code(err))
	}
	_, err = f.engine.InstructSettlement(engineCtx(), &interchangev1.InstructSettlementRequest{CompanyId: ztest, Instruction: drain("DRAIN-1", "-10000000")})
	wantAppErr(t, err, "ER-108", "netSettlements[0].amount")

	id := f.create(t, drain("DRAIN-2", "10000000"))
	f.walk(t, id, settlement.StatusInitiated)
	f.mustAdvance(t, id, settlement.StatusPayIn, settlement.StatusAwaitingFunds)
	untouched := map[string][3]string{
		usdcWallet + " USDC":       zero,
		"BYBIT-ISW-USDC USDC":      {"50000000", "50000000", "0"},
		"clearing:" + id + " USDC": zero,
	}
	f.wantBalances(t, "after the pay-in of an empty wallet", untouched)
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	f.wantBalances(t, "after FAILED", untouched)
}

// TestManyTinyLegsRenewTheLease: 150 legs of one satoshi on one wallet settle end to end
// while PAY_IN's hold and PAY_OUT's post each outlast the lease twice over on the test clock
// (a slow trading): the runner renews its lease from the clock, so neither the same
// transition asked again nor a sweeper takes it over, and the wallet pays exactly 150
// satoshis once. Only the test clock moves the lease towards its end; the renewals come
// every third of it on the real ticker, so the lease is short for them to come soon.
func TestManyTinyLegsRenewTheLease(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond // of the test clock; renewed every 100 ms of real time
	f := newFixture(t, func(d *app.Parts) { d.Lease = lease })
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	satoshis := make([]string, 150)
	for i := range satoshis {
		satoshis[i] = "0.00000001"
	}
	id := f.create(t, btcLegs("TINY-1", satoshis...))
	f.walk(t, id, settlement.StatusInitiated)
	slowSteps := map[string]string{"stl:" + id + ":payin:1": settlement.StatusPayIn, "stl:" + id + ":payin:1:post": settlement.StatusPayOut}
	seen := map[string]bool{} // the hook runs in the runner's goroutine
	var intruders []string
	f.ledger.setFail(func(entry string) error {
		to, slow := slowSteps[entry]
		if !slow || seen[entry] {
			return nil
		}
		seen[entry] = true
		f.clock.advance(2 * lease) // the step has taken twice the lease: unrenewed, it ran out
		f.waitRenewed(t, id, lease)
		_, err := f.advance(id, to)
		f.sweeper(0).Once(context.Background())
		intruders = append(intruders, to+" "+status.Code(err).String())
		return nil
	})
	f.walk(t, id, settlement.StatusPayIn)
	f.wantBalances(t, "after PAY_IN", map[string][3]string{btcWallet + " BTC": {"0.9999985", "1", "0.0000015"}})
	f.walk(t, id, settlement.StatusPayOut, settlement.StatusComplete)
	want := []string{settlement.StatusPayIn + " Aborted", settlement.StatusPayOut + " Aborted"}
	if len(intruders) != len(want) || intruders[0] != want[0] || intruders[1] != want[1] {
		t.Errorf("calls during the slow steps: %v, want %v (the lease kept)", intruders, want)
	}
	if lines := f.logs.matching(`"settlements recovered"`); len(lines) > 0 {
		t.Errorf("a sweeper took over a live transition: %v", lines)
	}
	f.wantBalances(t, "after COMPLETE", map[string][3]string{
		btcWallet + " BTC": {"0.9999985", "0.9999985", "0"}, venueBTC + " BTC": {"0.0000015", "0.0000015", "0"},
		"clearing:" + id + " BTC": zero,
	})
}

// waitRenewed waits, for a bounded real time, until the runner of id's pending transition
// has renewed its lease to lease past the test clock's now.
func (f fixture) waitRenewed(t *testing.T, id string, lease time.Duration) {
	t.Helper()
	st := interchangestore.New(f.db, nil)
	want := f.clock.Now().Add(lease)
	var got *settlement.Pending
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s, err := st.SettlementByTracking(context.Background(), id)
		if err != nil {
			t.Errorf("read settlement %s: %v", id, err)
			return
		}
		if got = s.Pending; got != nil && got.LeaseUntil.Equal(want) {
			return
		}
	}
	t.Errorf("the lease of %s was not renewed to %s (the test clock plus the lease): pending %+v", id, want, got)
}

// TestFailedReleasesTheHoldOnce: FAILED after PAY_IN gives every payer back exactly what
// was held; a void whose answer was lost, retried, and a second FAILED give nothing back
// twice, and trading itself refuses to resolve the hold again.
func TestFailedReleasesTheHoldOnce(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.instruct(t, ztest, trade("FAIL-1"))
	hold := "stl:" + id + ":payin:1"
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusPayIn)
	f.wantBalances(t, "after PAY_IN", map[string][3]string{btcWallet + " BTC": {"98.5", "100", "1.5"}, venueETH + " ETH": {"980", "1000", "20"}})
	f.ledger.setLose(failOnce(hold+":void", tradingDown))
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.Unavailable {
		t.Fatalf("FAILED whose void answer is lost = %v, want Unavailable", err)
	}
	released := map[string][3]string{
		btcWallet + " BTC": {"100", "100", "0"}, venueETH + " ETH": {"1000", "1000", "0"},
		ethWallet + " ETH": zero, venueBTC + " BTC": zero, "clearing:" + id + " BTC": zero, "clearing:" + id + " ETH": zero,
	}
	f.wantBalances(t, "after the void reached trading", released)
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	f.wantBalances(t, "after FAILED resumed", released)
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("FAILED again = %v, want FailedPrecondition", err)
	}
	for _, r := range []struct {
		entry string
		kind  journal.Kind
	}{{"other:void", journal.Void}, {"other:post", journal.Post}, {hold + ":post", journal.Post}} {
		if _, err := f.ledger.store.ResolveHold(context.Background(), r.entry, hold, r.kind, "test"); !errors.Is(err, journal.ErrHoldAlreadyVoided) {
			t.Errorf("%s of the voided hold: %v, want %v", r.entry, err, journal.ErrHoldAlreadyVoided)
		}
	}
	f.wantBalances(t, "after every retry", released)
}

// TestFailedAfterPayOutReverses: FAILED after PAY_OUT takes the payments back by a new
// entry; it is refused (the settlement stays PAY_OUT) while a payee no longer holds its
// share, and a reverse whose answer was lost is not applied twice.
func TestFailedAfterPayOutReverses(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.instruct(t, ztest, trade("REV-1"))
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut)
	f.ledger.fund(t, ztest, ethWallet, "ETH", "5") // the client spent what it was paid
	_, err := f.advance(id, settlement.StatusFailed)
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("FAILED while a payee is short = %v, want FailedPrecondition", err)
	}
	wantAppErr(t, err, "ER-409", "")
	if got := f.settlementStatus(t, "REV-1"); got != settlement.StatusPayOut {
		t.Errorf("status after a refused reversal = %s, want %s", got, settlement.StatusPayOut)
	}
	f.wantBalances(t, "after a refused reversal", map[string][3]string{
		btcWallet + " BTC": {"98.5", "98.5", "0"}, venueBTC + " BTC": {"1.5", "1.5", "0"},
		ethWallet + " ETH": {"5", "5", "0"}, venueETH + " ETH": {"980", "980", "0"},
	})
	f.ledger.fund(t, ztest, ethWallet, "ETH", "20")
	f.ledger.setLose(failOnce("stl:"+id+":reverse:2", tradingDown)) // the refused :reverse:1 stays refused
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.Unavailable {
		t.Fatalf("FAILED whose reverse answer is lost = %v, want Unavailable", err)
	}
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	reversed := map[string][3]string{
		btcWallet + " BTC": {"100", "100", "0"}, venueBTC + " BTC": zero,
		ethWallet + " ETH": zero, venueETH + " ETH": {"1000", "1000", "0"},
		"clearing:" + id + " BTC": zero, "clearing:" + id + " ETH": zero,
	}
	f.wantBalances(t, "after FAILED", reversed)
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("FAILED again = %v, want FailedPrecondition", err)
	}
	f.wantBalances(t, "after FAILED again", reversed)
}

// TestNettedSettlementClearsToZero: with a net, each wallet's legs net to one amount; one
// client wallet is paid (a payable), another pays, and the venue pays or receives only the
// net. Every payer is held at PAY_IN, every payee paid at PAY_OUT, and the clearing account
// ends at zero.
func TestNettedSettlementClearsToZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		payer, payee, net   string
		fundPayer           string
		afterPayIn, settled map[string][3]string
	}{
		{
			name: "the venue pays the net", payer: "0.5", payee: "-2", net: "-1.5", fundPayer: "1",
			afterPayIn: map[string][3]string{btcWallet + " BTC": {"0.5", "1", "0.5"}, btcWallet2 + " BTC": zero, venueBTC + " BTC": {"8.5", "10", "1.5"}},
			settled:    map[string][3]string{btcWallet + " BTC": {"0.5", "0.5", "0"}, btcWallet2 + " BTC": {"2", "2", "0"}, venueBTC + " BTC": {"8.5", "8.5", "0"}},
		},
		{
			name: "the venue receives the net", payer: "2", payee: "-0.5", net: "1.5", fundPayer: "3",
			afterPayIn: map[string][3]string{btcWallet + " BTC": {"1", "3", "2"}, btcWallet2 + " BTC": zero, venueBTC + " BTC": {"10", "10", "0"}},
			settled:    map[string][3]string{btcWallet + " BTC": {"1", "1", "0"}, btcWallet2 + " BTC": {"0.5", "0.5", "0"}, venueBTC + " BTC": {"11.5", "11.5", "0"}},
		},
		{
			name: "a net of zero", payer: "1.5", payee: "-1.5", net: "0", fundPayer: "2",
			afterPayIn: map[string][3]string{btcWallet + " BTC": {"0.5", "2", "1.5"}, btcWallet2 + " BTC": zero, venueBTC + " BTC": {"10", "10", "0"}},
			settled:    map[string][3]string{btcWallet + " BTC": {"0.5", "0.5", "0"}, btcWallet2 + " BTC": {"1.5", "1.5", "0"}, venueBTC + " BTC": {"10", "10", "0"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.ledger.fund(t, ztest, btcWallet, "BTC", tt.fundPayer)
			f.ledger.fund(t, venueCompany, venueBTC, "BTC", "10")
			id := f.instruct(t, ztest, instruction("NET-1", []*interchangev1.Settlement{
				leg(btcWallet, "BTC", "BTC", tt.payer), leg(btcWallet2, "BTC", "BTC", tt.payee)},
				&interchangev1.NetSettlement{Currency: "BTC", Ledger: "BTC", Amount: tt.net}))
			clearing := "clearing:" + id + " BTC"
			f.walk(t, id, settlement.StatusInitiated, settlement.StatusPayIn)
			tt.afterPayIn[clearing] = zero
			f.wantBalances(t, "after PAY_IN", tt.afterPayIn)
			f.walk(t, id, settlement.StatusPayOut, settlement.StatusComplete)
			tt.settled[clearing] = zero
			f.wantBalances(t, "after COMPLETE", tt.settled)
		})
	}
}

// TestOvertakenPayInLeavesNoStrayHold: a PAY_IN runner's hold is slow on its way to trading;
// its lease runs out, the same transition asked again takes over and finds the payer short
// (AWAITING_FUNDS); the funds arrive, then the first runner's hold lands. Whatever the
// interleaving, the settlement must own every hold it placed: the next PAY_IN holds what
// the payer owes once, and the settlement settles.
func TestOvertakenPayInLeavesNoStrayHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	id := f.create(t, instruction("STRAY-1", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1.5")}))
	f.walk(t, id, settlement.StatusInitiated)
	var taken string
	var takenErr error
	f.ledger.setFail(func(entry string) error {
		if entry != "stl:"+id+":payin:1" {
			return nil
		}
		f.ledger.setFail(nil)
		f.clock.advance(11 * time.Second)
		taken, takenErr = f.advance(id, settlement.StatusPayIn)
		f.ledger.fund(t, ztest, btcWallet, "BTC", "2")
		return nil
	})
	if _, err := f.advance(id, settlement.StatusPayIn); status.Code(err) != codes.Aborted {
		t.Errorf("the overtaken runner = %v, want Aborted", err)
	}
	if taken != settlement.StatusAwaitingFunds || takenErr != nil {
		t.Fatalf("the runner that took over = %q, %v; want %s", taken, takenErr, settlement.StatusAwaitingFunds)
	}
	got, err := f.advance(id, settlement.StatusPayIn)
	if err != nil || got != settlement.StatusPayIn {
		t.Errorf("PAY_IN once funded = %q, %v; want %s (client BTC %v)", got, err, settlement.StatusPayIn, f.ledger.get(t, btcWallet, "BTC"))
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.5", "2", "1.5"} {
		t.Errorf("client BTC after PAY_IN = %v, want 1.5 held once", got)
	}
	f.mustAdvance(t, id, settlement.StatusFailed, settlement.StatusFailed)
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"2", "2", "0"} {
		t.Errorf("client BTC after FAILED = %v, want nothing held", got)
	}
}
