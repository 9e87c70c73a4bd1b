package settlement_test

import (
	"context"
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

// grace is the recovery grace of the tests' sweepers.
const grace = 30 * time.Second

var tradingDown = status.Error(codes.Unavailable, "trading is down")

// sentMovements records the movement ids the service sends to the ledger.
type sentMovements struct {
	mu  sync.Mutex
	ids []string
}

// record makes the fake ledger record every movement sent from now on.
func (f fixture) record() *sentMovements {
	m := &sentMovements{}
	f.ledger.fail = func(id string) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.ids = append(m.ids, id)
		return nil
	}
	return m
}

// take returns the ids recorded since the last take.
func (m *sentMovements) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.ids
	m.ids = nil
	return out
}

// TestSweeperCompletesWithdrawals: a decision whose money step was cut short, and which the
// company never confirms again, is completed by one sweep once the grace has passed; within
// the grace it is left to its caller, and once completed no sweep sends a movement again
// (and a repeated confirmation moves nothing).
func TestSweeperCompletesWithdrawals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, decision, reason string
		failing                string // the movement step that fails once ("": none)
		stuck, want            [3]string
	}{
		{"accept whose settle failed", "ACCEPT", "", "settle", [3]string{"0.6", "1", "0.4"}, [3]string{"0.6", "0.6", "0"}},
		{"decline whose release failed", "DECLINE", "wrong address", "release", [3]string{"0.6", "1", "0.4"}, [3]string{"1", "1", "0"}},
		{"decline whose hold failed", "DECLINE", "wrong address", "hold", [3]string{"1", "1", "0"}, [3]string{"1", "1", "0"}},
		{"accept done at once", "ACCEPT", "", "", [3]string{"0.6", "0.6", "0"}, [3]string{"0.6", "0.6", "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.ledger.fund(ztest, btcWallet, "1")
			f.withdraw(t, withdrawal("WD-CUT", "0.4"))
			want := codes.OK
			if tt.failing != "" {
				f.ledger.fail, want = failOnce("WD:WD-CUT:"+tt.failing, tradingDown), codes.Unavailable
			}
			if err := confirm(f, companyCtx(ztest), "WD-CUT", tt.decision, tt.reason); status.Code(err) != want {
				t.Fatalf("%s: %v, want %s", tt.decision, err, want)
			}
			if got := f.ledger.get(ztest, btcWallet); got != tt.stuck {
				t.Fatalf("client BTC after the cut = %v, want %v", got, tt.stuck)
			}
			sent, sweeper := f.record(), f.svc.Sweeper(grace)
			f.clock.advance(grace - time.Second)
			sweeper.Once(context.Background())
			if got, ids := f.ledger.get(ztest, btcWallet), sent.take(); got != tt.stuck || len(ids) > 0 {
				t.Errorf("sweep within the grace: client BTC %v, movements %v; want %v and none", got, ids, tt.stuck)
			}
			f.clock.advance(2 * time.Second)
			sweeper.Once(context.Background())
			if got := f.ledger.get(ztest, btcWallet); got != tt.want {
				t.Errorf("client BTC after a sweep = %v, want %v", got, tt.want)
			}
			if ids := sent.take(); (len(ids) > 0) != (tt.failing != "") {
				t.Errorf("the sweep sent %v, want movements only for a step cut short", ids)
			}
			sweeper.Once(context.Background())
			if got, ids := f.ledger.get(ztest, btcWallet), sent.take(); got != tt.want || len(ids) > 0 {
				t.Errorf("after a second sweep: client BTC %v, movements %v; want %v and none", got, ids, tt.want)
			}
			if err := confirm(f, companyCtx(ztest), "WD-CUT", tt.decision, tt.reason); err != nil {
				t.Errorf("%s again: %v", tt.decision, err)
			}
			if got := f.ledger.get(ztest, btcWallet); got != tt.want {
				t.Errorf("after a repeated %s: client BTC %v, want %v", tt.decision, got, tt.want)
			}
			if warns := f.logs.matching(`"level":"WARN"`); len(warns) > 0 {
				t.Errorf("warnings: %v", warns)
			}
		})
	}
}

// stuckPayIn creates a trade settlement and cuts its pay-in short after its claim: the last
// credit fails once, so the client has paid and the venue is not credited yet.
func stuckPayIn(t *testing.T, f fixture, requestID string) string {
	t.Helper()
	id := f.create(t, trade(requestID))
	f.mustAdvance(t, id, settlement.StatusInitiated, settlement.StatusInitiated)
	f.ledger.fail = failOnce(id+":PAY_IN:leg1:credit", tradingDown)
	if _, err := f.advance(id, settlement.StatusPayIn); status.Code(err) != codes.Unavailable {
		t.Fatalf("pay-in with trading down: %v, want Unavailable", err)
	}
	return id
}

func (f fixture) settlementStatus(t *testing.T, requestID string) string {
	t.Helper()
	resp, err := f.svc.GetSettlementStatus(companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: requestID})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStatus()
}

// TestSweeperResumesSettlement: a transition cut short after its claim, which the engine does
// not ask for again, blocks the settlement until a sweep after its lease and the grace
// finishes it, each movement applied once; a second sweep sends nothing.
func TestSweeperResumesSettlement(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := stuckPayIn(t, f, "SWEEP-1")
	venueBTC := func() [3]string { return f.ledger.get("VENUE-BYBIT", "BYBIT-ISW-BTC") }
	if got := venueBTC(); got != [3]string{"0", "0", "0"} {
		t.Fatalf("venue BTC after the cut = %v, want not credited yet", got)
	}
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("another transition while the pay-in is pending = %v, want FailedPrecondition", err)
	}
	sent, sweeper := f.record(), f.svc.Sweeper(grace)
	f.clock.advance(grace - time.Second)
	sweeper.Once(context.Background())
	if ids := sent.take(); len(ids) > 0 || f.settlementStatus(t, "SWEEP-1") != settlement.StatusInitiated {
		t.Errorf("a sweep within the grace sent %v and left %s; want nothing done", ids, f.settlementStatus(t, "SWEEP-1"))
	}
	f.clock.advance(2 * time.Second)
	sweeper.Once(context.Background())
	if got := f.settlementStatus(t, "SWEEP-1"); got != settlement.StatusPayIn {
		t.Errorf("status after a sweep = %s, want %s", got, settlement.StatusPayIn)
	}
	want := map[string][3]string{"client": {"98.5", "98.5", "0"}, "venue": {"1.5", "1.5", "0"}}
	got := map[string][3]string{"client": f.ledger.get(ztest, btcWallet), "venue": venueBTC()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BTC after the sweep (-want +got):\n%s", diff)
	}
	if ids := sent.take(); !cmp.Equal(ids, []string{id + ":PAY_IN:leg1:hold", id + ":PAY_IN:leg1:settle", id + ":PAY_IN:leg1:credit"}) {
		t.Errorf("the sweep sent %v, want the pay-in's movements again", ids)
	}
	sweeper.Once(context.Background())
	if ids := sent.take(); len(ids) > 0 {
		t.Errorf("a second sweep sent %v, want nothing", ids)
	}
	if lines := f.logs.matching(`"settlements recovered"`, id); len(lines) != 1 {
		t.Errorf("recovery log lines naming %s: %v, want one", id, lines)
	}
	f.mustAdvance(t, id, settlement.StatusPayOut, settlement.StatusPayOut)
}

// TestRacingSweepers: the sweepers of several replicas running at once recover each cut-short
// withdrawal and transition once: the money moves once, one sweeper finishes each transition,
// and the others' lost claims are not warnings.
func TestRacingSweepers(t *testing.T) {
	t.Parallel()
	f := funded(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, stuckPayIn(t, f, fmt.Sprintf("SWEEP-RACE-%d", i)))
	}
	f.withdraw(t, withdrawal("WD-ACC", "0.4"))
	f.withdraw(t, withdrawal("WD-DEC", "0.5"))
	f.ledger.fail = failOnce("WD:WD-ACC:settle", tradingDown)
	if err := confirm(f, companyCtx(ztest), "WD-ACC", "ACCEPT", ""); status.Code(err) != codes.Unavailable {
		t.Fatalf("accept with trading down: %v", err)
	}
	f.ledger.fail = failOnce("WD:WD-DEC:release", tradingDown)
	if err := confirm(f, companyCtx(ztest), "WD-DEC", "DECLINE", "no"); status.Code(err) != codes.Unavailable {
		t.Fatalf("decline with trading down: %v", err)
	}
	f.ledger.fail = nil
	f.clock.advance(grace + time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { f.svc.Sweeper(grace).Once(context.Background()) })
	}
	wg.Wait()
	want := map[string][3]string{"client": {"95.1", "95.1", "0"}, "venue": {"4.5", "4.5", "0"}}
	got := map[string][3]string{"client": f.ledger.get(ztest, btcWallet), "venue": f.ledger.get("VENUE-BYBIT", "BYBIT-ISW-BTC")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BTC after racing sweeps, three pay-ins of 1.5 and a withdrawal of 0.4 (-want +got):\n%s", diff)
	}
	for i, id := range ids {
		if st := f.settlementStatus(t, fmt.Sprintf("SWEEP-RACE-%d", i)); st != settlement.StatusPayIn {
			t.Errorf("%s is %s, want %s", id, st, settlement.StatusPayIn)
		}
		if lines := f.logs.matching(`"settlements recovered"`, id); len(lines) != 1 {
			t.Errorf("recovery log lines naming %s: %d, want one sweeper to finish it", id, len(lines))
		}
	}
	if warns := f.logs.matching(`"level":"WARN"`); len(warns) > 0 {
		t.Errorf("warnings: %s", strings.Join(warns, ""))
	}
	t.Logf("claims lost to another sweeper: %d", len(f.logs.matching(`"settlement resumed by another"`)))
}

// TestStaleSweepLosesItsClaim: a sweeper whose batch went stale (another replica finished a
// transition of it meanwhile) loses that claim quietly and starts nothing new: the money
// moves once.
func TestStaleSweepLosesItsClaim(t *testing.T) {
	t.Parallel()
	f := funded(t)
	first, second := stuckPayIn(t, f, "STALE-1"), stuckPayIn(t, f, "STALE-2")
	f.clock.advance(grace + time.Second)
	var once sync.Once
	f.ledger.fail = func(id string) error {
		if id == first+":PAY_IN:leg1:hold" { // the stale sweeper resumes first, then second
			once.Do(func() { f.svc.Sweeper(grace).Once(context.Background()) }) // another replica finishes second
		}
		return nil
	}
	f.svc.Sweeper(grace).Once(context.Background())
	if lines := f.logs.matching(`"settlement resumed by another"`, second); len(lines) != 1 {
		t.Errorf("lost claims on %s: %v, want the stale sweeper's one", second, lines)
	}
	want := map[string][3]string{"client": {"97", "97", "0"}, "venue": {"3", "3", "0"}}
	got := map[string][3]string{"client": f.ledger.get(ztest, btcWallet), "venue": f.ledger.get("VENUE-BYBIT", "BYBIT-ISW-BTC")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BTC after two pay-ins of 1.5 (-want +got):\n%s", diff)
	}
	for _, requestID := range []string{"STALE-1", "STALE-2"} {
		if st := f.settlementStatus(t, requestID); st != settlement.StatusPayIn {
			t.Errorf("%s is %s, want %s", requestID, st, settlement.StatusPayIn)
		}
	}
	if warns := f.logs.matching(`"level":"WARN"`); len(warns) > 0 {
		t.Errorf("warnings: %s", strings.Join(warns, ""))
	}
}

// TestSweeperLeavesPutWithdrawals: withdrawals put as a whole already decided (demo data)
// never had a hold, so no sweep moves money for them.
func TestSweeperLeavesPutWithdrawals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(ztest, btcWallet, "1")
	decided := f.clock.Now().Add(-time.Hour)
	for i, st := range []string{settlement.WithdrawalAccepted, settlement.WithdrawalDeclined} {
		w := settlement.Withdrawal{TransferID: fmt.Sprintf("WD-PUT-%d", i), CompanyID: ztest, WalletID: btcWallet, Currency: "BTC",
			Amount: "0.4", DestinationAddress: btcAddress, Status: st, Version: 2, CreatedAt: decided, UpdatedAt: decided, DecidedAt: decided}
		if err := settlement.PutWithdrawal(context.Background(), f.db, w); err != nil {
			t.Fatal(err)
		}
	}
	sent := f.record()
	f.svc.Sweeper(grace).Once(context.Background())
	if got, ids := f.ledger.get(ztest, btcWallet), sent.take(); got != [3]string{"1", "1", "0"} || len(ids) > 0 {
		t.Errorf("after a sweep: client BTC %v, movements %v; want untouched", got, ids)
	}
}
