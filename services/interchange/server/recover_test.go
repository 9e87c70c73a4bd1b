package server_test

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
	interchangestore "github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/withdrawal"
)

// grace is the recovery grace of the tests' sweepers.
const grace = 30 * time.Second

var tradingDown = status.Error(codes.Unavailable, "trading is down")

// sentEntries records the entry ids the service sends to trading.
type sentEntries struct {
	mu  sync.Mutex
	ids []string
}

// record makes the ledger record every entry id sent from now on (it replaces l.fail).
func (f fixture) record() *sentEntries {
	m := &sentEntries{}
	f.ledger.setFail(func(id string) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.ids = append(m.ids, id)
		return nil
	})
	return m
}

// take returns the ids recorded since the last take.
func (m *sentEntries) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.ids
	m.ids = nil
	return out
}

// TestSweeperCompletesWithdrawals: a decision whose money step was cut short, and which the
// company never confirms again, is completed by one sweep once the grace has passed; within
// the grace it is left to its caller, and once completed no sweep sends an entry again (and
// a repeated confirmation moves nothing). The amount is held from the withdrawal's creation;
// an ACCEPT cut short before it confirmed the hold decided nothing: the sweeper leaves it
// (held), and the ACCEPT asked again takes the decision.
func TestSweeperCompletesWithdrawals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, decision, reason string
		failing                string // the step whose call fails once ("": none)
		stuck, swept, again    [3]string
		sweeps                 bool // whether the sweep has a step to drive
	}{
		{"accept whose post failed", "ACCEPT", "", "post", [3]string{"0.6", "1", "0.4"}, [3]string{"0.6", "0.6", "0"}, [3]string{"0.6", "0.6", "0"}, true},
		{"decline whose void failed", "DECLINE", "wrong address", "void", [3]string{"0.6", "1", "0.4"}, [3]string{"1", "1", "0"}, [3]string{"1", "1", "0"}, true},
		{"accept whose hold failed", "ACCEPT", "", "hold", [3]string{"0.6", "1", "0.4"}, [3]string{"0.6", "1", "0.4"}, [3]string{"0.6", "0.6", "0"}, false},
		{"accept done at once", "ACCEPT", "", "", [3]string{"0.6", "0.6", "0"}, [3]string{"0.6", "0.6", "0"}, [3]string{"0.6", "0.6", "0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
			f.withdraw(t, withdrawalReq("WD-CUT", "0.4"))
			want := codes.OK
			if tt.failing != "" {
				f.ledger.setFail(failOnce("wd:WD-CUT:hold:1"+map[string]string{"hold": "", "post": ":post", "void": ":void"}[tt.failing], tradingDown))
				want = codes.Unavailable
			}
			if err := confirm(f, f.venueCtx(), "WD-CUT", tt.decision, tt.reason); status.Code(err) != want {
				t.Fatalf("%s: %v, want %s", tt.decision, err, want)
			}
			if got := f.ledger.get(t, btcWallet, "BTC"); got != tt.stuck {
				t.Fatalf("client BTC after the cut = %v, want %v", got, tt.stuck)
			}
			sent, sweeper := f.record(), f.sweeper(grace)
			f.clock.advance(grace - time.Second)
			sweeper.Once(context.Background())
			if got, ids := f.ledger.get(t, btcWallet, "BTC"), sent.take(); got != tt.stuck || len(ids) > 0 {
				t.Errorf("sweep within the grace: client BTC %v, entries %v; want %v and none", got, ids, tt.stuck)
			}
			f.clock.advance(2 * time.Second)
			sweeper.Once(context.Background())
			if got := f.ledger.get(t, btcWallet, "BTC"); got != tt.swept {
				t.Errorf("client BTC after a sweep = %v, want %v", got, tt.swept)
			}
			if ids := sent.take(); (len(ids) > 0) != tt.sweeps {
				t.Errorf("the sweep sent %v, want entries only for a decided step cut short", ids)
			}
			sweeper.Once(context.Background())
			if got, ids := f.ledger.get(t, btcWallet, "BTC"), sent.take(); got != tt.swept || len(ids) > 0 {
				t.Errorf("after a second sweep: client BTC %v, entries %v; want %v and none", got, ids, tt.swept)
			}
			if err := confirm(f, f.venueCtx(), "WD-CUT", tt.decision, tt.reason); err != nil {
				t.Errorf("%s again: %v", tt.decision, err)
			}
			if got := f.ledger.get(t, btcWallet, "BTC"); got != tt.again {
				t.Errorf("after a repeated %s: client BTC %v, want %v", tt.decision, got, tt.again)
			}
			if warns := f.logs.matching(`"level":"WARN"`); len(warns) > 0 {
				t.Errorf("warnings: %v", warns)
			}
		})
	}
}

// stuckPayIn instructs a trade settlement and cuts its pay-in short after its claim: the
// hold reaches trading and its answer is lost, so the money is held and the settlement is
// still INITIATED with PAY_IN pending.
func stuckPayIn(t *testing.T, f fixture, requestID string) string {
	t.Helper()
	id := f.instruct(t, ztest, trade(requestID))
	f.walk(t, id, settlement.StatusInitiated)
	f.ledger.setLose(failOnce("stl:"+id+":payin:1", tradingDown))
	if _, err := f.advance(id, settlement.StatusPayIn); status.Code(err) != codes.Unavailable {
		t.Fatalf("pay-in whose answer is lost: %v, want Unavailable", err)
	}
	f.ledger.setLose(nil)
	return id
}

func (f fixture) settlementStatus(t *testing.T, requestID string) string {
	t.Helper()
	resp, err := f.svc.GetSettlementStatus(f.companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: requestID})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStatus()
}

// TestSweeperResumesSettlement: a transition cut short after its claim, which the engine does
// not ask for again, blocks the settlement until a sweep after its lease and the grace
// finishes it, its entry applied once; a second sweep sends nothing.
func TestSweeperResumesSettlement(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := stuckPayIn(t, f, "SWEEP-1")
	held := map[string][3]string{btcWallet + " BTC": {"98.5", "100", "1.5"}, venueETH + " ETH": {"980", "1000", "20"}}
	f.wantBalances(t, "after the cut", held)
	if _, err := f.advance(id, settlement.StatusFailed); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("another transition while the pay-in is pending = %v, want FailedPrecondition", err)
	}
	sent, sweeper := f.record(), f.sweeper(grace)
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
	f.wantBalances(t, "after the sweep", held)
	if ids := sent.take(); !cmp.Equal(ids, []string{"stl:" + id + ":payin:1"}) {
		t.Errorf("the sweep sent %v, want the pay-in's hold again", ids)
	}
	sweeper.Once(context.Background())
	if ids := sent.take(); len(ids) > 0 {
		t.Errorf("a second sweep sent %v, want nothing", ids)
	}
	if lines := f.logs.matching(`"settlements recovered"`, id); len(lines) != 1 {
		t.Errorf("recovery log lines naming %s: %v, want one", id, lines)
	}
	f.walk(t, id, settlement.StatusPayOut)
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
	f.withdraw(t, withdrawalReq("WD-ACC", "0.4"))
	f.withdraw(t, withdrawalReq("WD-DEC", "0.5"))
	f.ledger.setFail(failOnce("wd:WD-ACC:hold:1:post", tradingDown))
	if err := confirm(f, f.venueCtx(), "WD-ACC", "ACCEPT", ""); status.Code(err) != codes.Unavailable {
		t.Fatalf("accept with trading down: %v", err)
	}
	f.ledger.setFail(failOnce("wd:WD-DEC:hold:1:void", tradingDown))
	if err := confirm(f, f.venueCtx(), "WD-DEC", "DECLINE", "no"); status.Code(err) != codes.Unavailable {
		t.Fatalf("decline with trading down: %v", err)
	}
	f.ledger.setFail(nil)
	f.clock.advance(grace + time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { f.sweeper(grace).Once(context.Background()) })
	}
	wg.Wait()
	f.wantBalances(t, "after racing sweeps, three pay-ins and a withdrawal of 0.4", map[string][3]string{
		btcWallet + " BTC": {"95.1", "99.6", "4.5"}, venueETH + " ETH": {"940", "1000", "60"},
	})
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
	f.ledger.setFail(func(id string) error {
		if id == "stl:"+first+":payin:1" { // the stale sweeper resumes first, then second
			once.Do(func() { f.sweeper(grace).Once(context.Background()) }) // another replica finishes second
		}
		return nil
	})
	f.sweeper(grace).Once(context.Background())
	if lines := f.logs.matching(`"settlement resumed by another"`, second); len(lines) != 1 {
		t.Errorf("lost claims on %s: %v, want the stale sweeper's one", second, lines)
	}
	f.wantBalances(t, "after two pay-ins", map[string][3]string{btcWallet + " BTC": {"97", "100", "3"}, venueETH + " ETH": {"960", "1000", "40"}})
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
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	decided := f.clock.Now().Add(-time.Hour)
	for i, st := range []string{withdrawal.StatusAccepted, withdrawal.StatusDeclined} {
		w := withdrawal.Withdrawal{TransferID: fmt.Sprintf("WD-PUT-%d", i), CompanyID: ztest, WalletID: btcWallet, Currency: "BTC",
			Amount: "0.4", DestinationAddress: btcAddress, Status: st, Version: 2, CreatedAt: decided, UpdatedAt: decided, DecidedAt: decided}
		if err := interchangestore.PutWithdrawal(context.Background(), f.db, w); err != nil {
			t.Fatal(err)
		}
	}
	sent := f.record()
	f.sweeper(grace).Once(context.Background())
	if got, ids := f.ledger.get(t, btcWallet, "BTC"), sent.take(); got != [3]string{"1", "1", "0"} || len(ids) > 0 {
		t.Errorf("after a sweep: client BTC %v, entries %v; want untouched", got, ids)
	}
}
