package fault_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/fault"
	"github.com/zcustody/suite/platform/config"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	interchangeapp "github.com/zcustody/suite/services/interchange/app"
)

const withdrawalConfirmPath = "/v3/api/interchange/withdrawal/confirm"

// TestSweeperCompletesWhatACrashCutShort kills interchange (its database link cut first, its
// calls cut after 300 ms) while two money steps are half done: a withdrawal ACCEPTed through
// the gateway, held and decided but not posted, and a settlement's pay-in claimed, its hold
// applied by trading but the answer lost. After the restart nobody asks again, neither
// the company nor the settlement engine: interchange's recovery sweeper completes the
// withdrawal once its grace has passed, and the pay-in once the dead process's lease (SETTLEMENT_LEASE, 2 s here)
// and the grace have. Balances end as if the calls had finished, and stay so (moved once).
func TestSweeperCompletesWhatACrashCutShort(t *testing.T) {
	t.Parallel()
	s := newRecoverySuite(t)
	f := newVenueFixture(t, s, "10", "1", "0", "100")
	engine := newSettlementEngine(t, s)
	requestID := "RECOVER-" + uuid.NewString()[:8]
	var created struct {
		SettlementTrackingID string `json:"settlementTrackingId"`
	}
	body := instructionBody(requestID, f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "1.5")})
	mustOK(t, call(f.operatorClient(t), http.MethodPost, settlementCreatePath, mustJSON(t, body)), &created)
	id := created.SettlementTrackingID
	engine.mustAdvance(t, id, "SETTLEMENT_INITIATED", "SETTLEMENT_INITIATED")
	transfer := "WD-" + uuid.NewString()[:12]
	if _, err := engine.client.CreateWithdrawal(engine.ctx(), &interchangev1.CreateWithdrawalRequest{TransferId: transfer,
		CompanyId: demo.CompanyZTEST, WalletId: f.btc, Currency: "BTC", Amount: "0.25",
		DestinationAddress: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}); err != nil {
		t.Fatal(err)
	}

	// The post of the withdrawal's hold never reaches trading; the pay-in's hold does, but
	// its answer never comes back.
	relay := s.relay("interchange", "trading")
	blocked := make(chan string, 2)
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		entry, _ := entryOf(c)
		switch entry {
		case "wd:" + transfer + ":hold:1:post":
		case "stl:" + id + ":payin:1":
			if err := forward(); err != nil {
				return err
			}
		default:
			return forward()
		}
		blocked <- entry
		<-ctx.Done()
		return ctx.Err()
	})
	confirmed := make(chan response, 1)
	operator := f.operatorClient(t)
	go func() {
		accept := mustJSON(t, map[string]string{"transferId": transfer, "withdrawalConfirmation": "ACCEPT"})
		confirmed <- call(operator, http.MethodPost, withdrawalConfirmPath, accept)
	}()
	payIn := engine.advanceAsync(id, "SETTLEMENT_PAY_IN")
	for range 2 {
		select {
		case m := <-blocked:
			t.Logf("held back: %s", m)
		case <-time.After(10 * time.Second):
			t.Fatal("the settle and the credit did not reach the relay within 10s")
		}
	}
	s.own["interchange"].Cut()
	if err := s.stack.StopService("interchange"); err != nil {
		t.Logf("interchange ended with %v (killed)", err)
	}
	if got := <-payIn; got.err == nil {
		t.Errorf("the pay-in cut by the crash answered %q, want an error", got.status)
	}
	if got := <-confirmed; got.err == nil && got.status == http.StatusOK {
		t.Errorf("the ACCEPT cut by the crash answered 200, want an error")
	}
	stuck := map[string]amounts{
		"client BTC": {"8.25", "10", "1.75", "0"}, "venue BTC": {"0", "0", "0", "0"},
		"client ETH": {"1", "1", "0", "0"}, "venue ETH": {"100", "100", "0", "0"},
	}
	if diff := cmp.Diff(stuck, f.balances(t)); diff != "" {
		t.Errorf("balances after the crash: 0.25 and 1.5 held (-want +got):\n%s", diff)
	}

	relay.SetHook(nil)
	if err := s.own["interchange"].Restore(); err != nil {
		t.Fatal(err)
	}
	restartAt := time.Now()
	if err := s.stack.StartService(t.Context(), "interchange"); err != nil {
		t.Fatal(err)
	}
	// The withdrawal's 0.25 has left; PAY_IN's 1.5 stays held in the clearing account until
	// PAY_OUT.
	want := map[string]amounts{
		"client BTC": {"8.25", "9.75", "1.5", "0"}, "venue BTC": {"0", "0", "0", "0"},
		"client ETH": stuck["client ETH"], "venue ETH": stuck["venue ETH"],
	}
	waitFor(t, 10*time.Second, "the sweeper posts the withdrawal", func() bool {
		return f.balances(t)["client BTC"] == want["client BTC"]
	})
	t.Logf("withdrawal settled %v after the restart, nobody asking again", time.Since(restartAt).Round(time.Millisecond))
	waitFor(t, 10*time.Second, "the sweeper finishes the pay-in", func() bool {
		return cmp.Equal(want, f.balances(t)) && f.settlementStatus(t, f.operatorClient(t), requestID) == "SETTLEMENT_PAY_IN"
	})
	t.Logf("pay-in finished %v after the restart (the dead process's lease ran out first)", time.Since(restartAt).Round(time.Millisecond))
	for _, msg := range []string{`"withdrawals recovered"`, `"settlements recovered"`} {
		if !s.logs.has(msg) {
			t.Errorf("no %s in interchange's log", msg)
		}
	}
	time.Sleep(time.Second) // several more sweeps
	if diff := cmp.Diff(want, f.balances(t)); diff != "" {
		t.Errorf("balances after more sweeps: moved twice? (-want +got):\n%s", diff)
	}
	f.reconciled(t, s)
}

// newRecoverySuite starts the stack of newSuite with interchange on a database link of its
// own, its calls to trading through a relay, a stop that is a kill (300 ms for the calls in
// flight), a short lease (2 s) and a short recovery sweep: every 200 ms, with a grace of 1 s.
func newRecoverySuite(t *testing.T) *suite {
	t.Helper()
	return newSuite(t, setup{
		ownLink: []string{"interchange"},
		relays:  [][2]string{{"interchange", "trading"}},
		service: func(name string, c *config.Common) {
			if name == "interchange" {
				c.ShutdownTimeout = 300 * time.Millisecond
			}
		},
		interchange: func(c *interchangeapp.Config) {
			c.SweepInterval, c.RecoveryGrace, c.SettlementLease = 200*time.Millisecond, time.Second, 2*time.Second
		},
	})
}

// has reports whether a logged line contains text.
func (b *logBuffer) has(text string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Contains(b.buf.String(), text)
}
