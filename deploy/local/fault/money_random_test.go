package fault_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/fault"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	interchangeapp "github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/trading"
)

const (
	// moneySeedDefault is the seed when MONEY_SEED is not set.
	moneySeedDefault = 20261121
	// moneyDefaultN is the number of settlements when MONEY_N is not set (withdrawals: half).
	// The embedded database runs one command at a time, about 2.5 settlement transitions a
	// second under this load, and Reconcile then takes half a minute: 40 keep the test under
	// about 90 s on two cores (60 take about 2.5 minutes).
	moneyDefaultN = 40
	// moneyWorkers run the plan concurrently.
	moneyWorkers = 4
	// moneyCallLimit bounds one call of the plan, as the stack's gateway bounds a request.
	moneyCallLimit = 15 * time.Second
	// moneyStepLimit bounds one step of the plan (a transition, a decision, a deposit): long
	// enough to wait out a kill, a restart and a dead process's lease. A transition whose
	// runner still renews its lease is working, however slowly the database answers (the
	// embedded one slows down as the plan grows): its bound runs from the last renewal, up
	// to moneyStepCap in all.
	moneyStepLimit = 2 * moneyCallLimit
	// moneyStepCap bounds a transition however often its lease is renewed: a runner that
	// renews forever and never finishes is stuck.
	moneyStepCap = 10 * moneyStepLimit
	// moneyFinalLimit bounds each wait of the final phase.
	moneyFinalLimit = 30 * time.Second

	settlementSearchPath = "/v3/api/interchange/settlement/search"
	walletHistoryPath    = "/v3/api/trading/wallets/history"

	moneyReceived  = "SETTLEMENT_RECEIVED"
	moneyInitiated = "SETTLEMENT_INITIATED"
	moneyAwaiting  = "SETTLEMENT_AWAITING_FUNDS"
	moneyPayIn     = "SETTLEMENT_PAY_IN"
	moneyPayOut    = "SETTLEMENT_PAY_OUT"
	moneyComplete  = "SETTLEMENT_COMPLETE"
	moneyRejected  = "SETTLEMENT_REJECTED"
	moneyFailed    = "SETTLEMENT_FAILED"

	moneyWDPending  = "PENDING_CONFIRMATION"
	moneyWDAccepted = "ACCEPTED"
	moneyWDDeclined = "DECLINED"
)

// TestRandomMoneyUnderFaults is a randomized concurrency test of the money flows of
// interchange over trading's journal, with services killed and restarted while the work is
// in flight, ending in reconciliation. Every random choice of the plan comes from one seed
// (MONEY_SEED, logged first, and in every failure; MONEY_N scales the plan: N settlements
// and N/2 withdrawals, moneyDefaultN by default, several hundred for a soak). The
// interleaving of the workers is the scheduler's: a seed replays the plan, not the races.
//
// A venue of its own holds three ZTEST wallets in BTC and three in ETH, and the venue's
// settlement wallets, all funded by deposits (generously: about one settlement in ten has a
// leg larger than its payer holds, one withdrawal in eight more than its wallet). Four
// workers run a shuffled plan:
//   - settlements of receivables and payables (net settlements equal to the sum of their
//     legs), created through the gateway by the venue's operator (endpoint 3) or instructed
//     for ZTEST by the settlement engine, advanced along random legal paths: PAY_IN that ends AWAITING_FUNDS (then topped up and
//     tried again, or FAILED), FAILED before and after PAY_OUT (a reversal, refused when a
//     payee spent its share), REJECTED; some transitions are asked twice at once, and PAY_OUT
//     races FAILED;
//   - withdrawals, created by the engine (holding the amount, or refused with 409 and
//     declined when the wallet lacks it) and decided through the gateway by the venue's
//     operator: ACCEPT, DECLINE, both at once, or ACCEPT twice at once;
//   - deposits into the wallets.
//
// Meanwhile interchange and trading are each killed once (a third kill of either at random),
// at random points of the plan: a crash (the database link cut first, then the process
// stopped with 300 ms for its calls) or a stop, down for a random while; and a relay drops
// a few of interchange's journal calls to trading, or their answers after trading applied
// them. Calls refused meanwhile (503, Unavailable, 409) are asked again later, backing off.
// Interchange runs with a lease of 5 s and sweeps every second with a grace of 1 s;
// trading's journal recovery runs every second with a grace of 5 s (the stack's).
//
// Then: the sweepers finish what was cut short (no settlement left pending), every
// settlement is driven to a final state, every withdrawal decided and its money step done,
// no journal entry in flight. Checked: trading's Reconcile reports no violation; every
// wallet's ledger balance is exactly its deposits, minus its legs of the COMPLETE
// settlements (the venue's plus), minus its ACCEPTED withdrawals, and nothing is held; per
// currency the wallets add up to deposits minus accepted withdrawals; no balance is ever
// negative (sampled throughout); each wallet's statement (the history extension) folds to
// its balance, shows one withdrawal.post of the amount for each accepted withdrawal and
// none for the others, and nets every settlement and withdrawal to its effect; every answer
// a caller got agrees with the final record, and every settlement's history is a chain of
// legal transitions.
func TestRandomMoneyUnderFaults(t *testing.T) {
	// Not parallel: no other test of this package starts a stack while this one kills and
	// restarts services, so none can take a stopped service's port before it is back.
	seed := moneySeed(t)
	t.Logf("seed=%d", seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed=%d: run again with MONEY_SEED=%d", seed, seed)
		}
	})
	nSettle, nWithdraw := moneyScale(t, seed)
	begin := time.Now()
	rng := rand.New(rand.NewPCG(seed, 1))

	s := newSuite(t, setup{
		ownLink: []string{"interchange", "trading"},
		relays:  [][2]string{{"interchange", "trading"}},
		service: func(name string, c *config.Common) {
			// The embedded database runs one command at a time: a ping every 200 ms from each of
			// the five services would queue behind the money calls (and flap their health).
			c.HealthInterval = 2 * time.Second
			if name == "interchange" || name == "trading" {
				c.ShutdownTimeout = 300 * time.Millisecond // a stop is a kill for calls longer than that
			}
		},
		interchange: func(c *interchangeapp.Config) {
			// A runner renews its lease every third of it: 5 s keeps the renewals (a guarded
			// write, which the embedded database runs alone) few, and a dead runner's transition
			// is still resumed within a step's bound.
			c.SweepInterval, c.RecoveryGrace, c.SettlementLease = time.Second, time.Second, 5*time.Second
		},
	})
	r := newMoneyRun(t, s, seed, rng)
	plan := r.plan(rng, nSettle, nWithdraw)
	kills := moneyKills(rng)
	t.Logf("seed=%d: %d wallets, %d settlements, %d withdrawals, %d deposits, kills %s; stack up in %v",
		seed, len(r.wallets), len(plan.settlements), len(plan.withdrawals), len(plan.deposits), moneyKillsString(kills),
		time.Since(begin).Round(time.Millisecond))

	// Faults on interchange's journal calls to trading while the plan runs.
	relay := s.relay("interchange", "trading")
	relayRng := rand.New(rand.NewPCG(rng.Uint64(), 1))
	var relayMu sync.Mutex
	var dropped, lost atomic.Int64
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		if _, ok := entryOf(c); !ok {
			return forward()
		}
		relayMu.Lock()
		x := relayRng.IntN(100)
		relayMu.Unlock()
		switch {
		case x < 2:
			dropped.Add(1)
			return status.Error(codes.Unavailable, "fault: the call never reached trading")
		case x < 5:
			if err := forward(); err != nil {
				return err
			}
			lost.Add(1)
			return status.Error(codes.Unavailable, "fault: trading applied it, the answer was lost")
		}
		return forward()
	})

	work := time.Now()
	ctx, stop := context.WithCancel(t.Context())
	var watchers sync.WaitGroup
	defer func() { stop(); watchers.Wait() }() // also when the final phase stops the test
	watchers.Go(func() { r.monitor(ctx) })
	watchers.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Second):
			}
			t.Logf("seed=%d: %v: %d/%d operations done; calls met: %s", seed, time.Since(work).Round(time.Second), r.done.Load(), len(plan.ops), r.countsString())
		}
	})
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		r.chaos(ctx, kills, len(plan.ops))
	}()
	ops := make(chan func())
	var workers sync.WaitGroup
	for range moneyWorkers {
		workers.Go(func() {
			for op := range ops {
				if !t.Failed() { // once something failed, the rest of the plan only delays the report
					op()
				}
				r.done.Add(1)
			}
		})
	}
	for _, op := range plan.ops {
		ops <- op
	}
	close(ops)
	workers.Wait()
	<-chaosDone // every kill happened (their thresholds are below the plan's end), every service is back
	relay.SetHook(nil)
	t.Logf("seed=%d: plan ran in %v; relay dropped %d journal calls and lost %d answers; calls met: %s; latency (median/p90/max): %s",
		seed, time.Since(work).Round(time.Millisecond), dropped.Load(), lost.Load(), r.countsString(), r.latencyString())

	final := time.Now()
	r.finish(plan)
	t.Logf("seed=%d: final phase %v", seed, time.Since(final).Round(time.Millisecond))
	r.check(plan)
	t.Logf("seed=%d: whole test %v", seed, time.Since(begin).Round(time.Millisecond))
}

// moneySeed reads MONEY_SEED, or the default.
func moneySeed(t *testing.T) uint64 {
	t.Helper()
	v := os.Getenv("MONEY_SEED")
	if v == "" {
		return moneySeedDefault
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("MONEY_SEED=%q is not an unsigned integer: %v", v, err)
	}
	return seed
}

// moneyScale reads MONEY_N: the number of settlements; withdrawals are half as many.
func moneyScale(t *testing.T, seed uint64) (settlements, withdrawals int) {
	t.Helper()
	v := os.Getenv("MONEY_N")
	if v == "" {
		v = strconv.Itoa(moneyDefaultN)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("seed=%d: MONEY_N=%q is not a positive integer", seed, v)
	}
	return n, max(n/2, 1)
}

// moneyWallet is a wallet of the fixture.
type moneyWallet struct {
	name, company, id, currency string
	venue                       bool
}

// moneyLeg is one leg of a planned settlement: signed, seen from the wallet.
type moneyLeg struct {
	wallet *moneyWallet
	amount *big.Rat
}

// moneySettlement is a planned settlement and what its callers saw.
type moneySettlement struct {
	requestID  string
	viaGateway bool
	legs       []moneyLeg
	body       []byte                                 // endpoint 3's body, the same on every retry
	instr      *interchangev1.CreateSettlementRequest // the same, for InstructSettlement
	rng        *rand.Rand
	tracking   string

	mu      sync.Mutex
	answers []string // statuses AdvanceSettlement answered
	final   string
}

// moneyWithdrawal is a planned withdrawal and what its callers saw.
type moneyWithdrawal struct {
	transferID string
	wallet     *moneyWallet
	amount     *big.Rat
	mode       int // 0 ACCEPT, 1 DECLINE, 2 ACCEPT racing DECLINE, 3 ACCEPT twice at once
	rng        *rand.Rand
	created    bool

	mu    sync.Mutex
	ok    map[string]bool // decisions answered 200
	short bool            // the creation was refused for lack of funds (nothing held)
	final string
}

// moneyDeposit is a deposit not yet confirmed (retried with its id until it is).
type moneyDeposit struct {
	id     string
	wallet *moneyWallet
	amount *big.Rat
}

type moneyPlan struct {
	settlements []*moneySettlement
	withdrawals []*moneyWithdrawal
	deposits    []moneyDeposit
	ops         []func()
}

// moneyKill is one kill of the chaos: the service, a crash or a stop, the share of the plan
// done when it comes, a delay after that, and how long the service stays down.
type moneyKill struct {
	service     string
	crash       bool
	at          float64
	delay, down time.Duration
}

func moneyKills(rng *rand.Rand) []moneyKill {
	services := []string{"interchange", "trading"}
	rng.Shuffle(len(services), func(i, j int) { services[i], services[j] = services[j], services[i] })
	if rng.IntN(2) == 0 {
		services = append(services, []string{"interchange", "trading"}[rng.IntN(2)])
	}
	out := make([]moneyKill, len(services))
	n := float64(len(services))
	for i, svc := range services {
		out[i] = moneyKill{service: svc, crash: rng.IntN(10) < 7, at: 0.9 * (float64(i) + 0.1 + 0.65*rng.Float64()) / n,
			delay: time.Duration(rng.IntN(400)) * time.Millisecond, down: time.Duration(200+rng.IntN(1800)) * time.Millisecond}
	}
	return out
}

func moneyKillsString(kills []moneyKill) string {
	var parts []string
	for _, k := range kills {
		how := "stop"
		if k.crash {
			how = "crash"
		}
		parts = append(parts, fmt.Sprintf("%s %s at %.0f%% down %v", how, k.service, 100*k.at, k.down))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// moneyRun is the state of one run.
type moneyRun struct {
	t        *testing.T
	seed     uint64
	s        *suite
	f        venueFixture
	gw       *signing.Client // ZTEST's, the client's
	operator *signing.Client // the venue's operator's
	engine   settlementEngine
	ledger   tradingv1.TradingLedgerServiceClient
	sign     func() context.Context // a fresh settlement engine principal
	ic       *mongo.Database        // interchange's database, read directly
	tr       *mongo.Database        // trading's

	wallets []*moneyWallet
	clients map[string][]*moneyWallet // ZTEST wallets by currency
	venue   map[string]*moneyWallet   // the venue's settlement wallet by currency

	mu          sync.Mutex
	deposited   map[string]*big.Rat // wallet id → confirmed deposits
	unconfirmed []moneyDeposit
	counts      map[string]int
	latency     map[string][]time.Duration // answered calls by kind
	depositSeq  int

	done atomic.Int64 // plan operations finished
}

func newMoneyRun(t *testing.T, s *suite, seed uint64, rng *rand.Rand) *moneyRun {
	t.Helper()
	r := &moneyRun{t: t, seed: seed, s: s, gw: s.client(demo.CompanyZTEST, company), clients: map[string][]*moneyWallet{},
		venue: map[string]*moneyWallet{}, deposited: map[string]*big.Rat{}, counts: map[string]int{},
		latency: map[string][]time.Duration{}}
	key, err := principal.LoadPrivateKey(filepath.Join(s.dir, "keys", "settlement-engine.pem"))
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	signer := principal.NewSigner("settlement-engine", key, time.Minute)
	r.sign = func() context.Context {
		ctx, err := signer.OutgoingContext(t.Context(), principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
		if err != nil {
			panic(err)
		}
		return ctx
	}
	// Reconnect within half a second of a restart (gRPC's default backoff grows to minutes).
	dial := func(addr string) *grpc.ClientConn {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6,
				Jitter: 0.2, MaxDelay: 500 * time.Millisecond}, MinConnectTimeout: time.Second}))
		if err != nil {
			t.Fatalf("seed=%d: %v", seed, err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	// No WaitForReady: a call while the service is down fails at once, and the plan asks again.
	r.engine = settlementEngine{client: interchangev1.NewSettlementEngineServiceClient(dial(s.stack.Services["interchange"])), ctx: r.sign}
	r.ledger = tradingv1.NewTradingLedgerServiceClient(dial(s.stack.Services["trading"]))
	client, err := mongodb.Connect(t.Context(), s.direct)
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	r.ic, r.tr = client.Database("interchange"), client.Database("trading")

	// The fixture: three ZTEST wallets per currency at a venue of its own, and the venue's
	// settlement wallets, funded by deposits.
	opening := func(cur string, lo int) *big.Rat { return moneyDraw(rng, moneyPlaces(cur), lo+rng.IntN(lo)) }
	btc, eth := opening("BTC", 20), opening("ETH", 200)
	vBTC, vETH := opening("BTC", 30), opening("ETH", 300)
	r.f = newVenueFixture(t, s, moneyString(btc), moneyString(eth), moneyString(vBTC), moneyString(vETH))
	r.operator = r.f.operatorClient(t)
	r.add(&moneyWallet{name: "client BTC 1", company: demo.CompanyZTEST, id: r.f.btc, currency: "BTC"}, btc)
	r.add(&moneyWallet{name: "client ETH 1", company: demo.CompanyZTEST, id: r.f.eth, currency: "ETH"}, eth)
	for i := 2; i <= 3; i++ {
		for _, cur := range []string{"BTC", "ETH"} {
			a := opening(cur, map[string]int{"BTC": 20, "ETH": 200}[cur])
			r.add(&moneyWallet{name: fmt.Sprintf("client %s %d", cur, i), company: demo.CompanyZTEST, id: r.f.put(t, cur, moneyString(a)), currency: cur}, a)
		}
	}
	for cur, a := range map[string]*big.Rat{"BTC": vBTC, "ETH": vETH} {
		r.add(&moneyWallet{name: "venue " + cur, company: trading.VenueCompanyID(r.f.venue), id: trading.VenueWalletID(r.f.venue, cur),
			currency: cur, venue: true}, a)
	}
	slices.SortFunc(r.wallets, func(a, b *moneyWallet) int { return strings.Compare(a.name, b.name) })
	return r
}

func (r *moneyRun) add(w *moneyWallet, opening *big.Rat) {
	r.wallets = append(r.wallets, w)
	if w.venue {
		r.venue[w.currency] = w
	} else {
		r.clients[w.currency] = append(r.clients[w.currency], w)
	}
	r.deposited[w.id] = new(big.Rat).Set(opening)
}

// errorf reports a failure with the seed.
func (r *moneyRun) errorf(format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("seed=%d: "+format, append([]any{r.seed}, args...)...)
}

func (r *moneyRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed=%d: "+format, append([]any{r.seed}, args...)...)
}

func (r *moneyRun) count(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[what]++
}

func (r *moneyRun) took(what string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latency[what] = append(r.latency[what], d)
}

// latencyString is the median, 90th percentile and maximum of each kind of answered call.
func (r *moneyRun) latencyString() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.latency)) {
		ds := slices.Clone(r.latency[k])
		slices.Sort(ds)
		q := func(f float64) time.Duration { return ds[int(f*float64(len(ds)-1))].Round(time.Millisecond) }
		parts = append(parts, fmt.Sprintf("%s ×%d %v/%v/%v", k, len(ds), q(0.5), q(0.9), q(1)))
	}
	return strings.Join(parts, ", ")
}

func (r *moneyRun) countsString() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.counts[k]))
	}
	return strings.Join(parts, ", ")
}

// plan draws the settlements, withdrawals and deposits, and their order.
func (r *moneyRun) plan(rng *rand.Rand, nSettle, nWithdraw int) *moneyPlan {
	p := &moneyPlan{}
	for i := range nSettle {
		st := &moneySettlement{requestID: fmt.Sprintf("MR-%d-S%03d", r.seed, i), viaGateway: rng.IntN(5) < 2,
			rng: rand.New(rand.NewPCG(rng.Uint64(), 1))}
		for range 1 + rng.IntN(4) {
			cur := []string{"BTC", "ETH"}[rng.IntN(2)]
			w := r.clients[cur][rng.IntN(len(r.clients[cur]))]
			a := moneyLegAmount(rng, cur)
			if rng.IntN(2) == 0 {
				a.Neg(a) // a payable: the venue pays the wallet
			}
			st.legs = append(st.legs, moneyLeg{wallet: w, amount: a})
		}
		if rng.IntN(10) == 0 {
			// More than its payer holds: PAY_IN ends AWAITING_FUNDS (until a top-up).
			l := &st.legs[rng.IntN(len(st.legs))]
			huge := moneyDraw(rng, moneyPlaces(l.wallet.currency), map[string]int{"BTC": 60, "ETH": 600}[l.wallet.currency])
			if l.amount.Sign() < 0 {
				huge.Neg(huge)
			}
			l.amount = huge
		}
		var legs, nets []map[string]any
		sums := map[string]*big.Rat{}
		for _, l := range st.legs {
			legs = append(legs, legOf(l.wallet.id, l.wallet.currency, l.wallet.currency, moneyString(l.amount)))
			if sums[l.wallet.currency] == nil {
				sums[l.wallet.currency] = new(big.Rat)
			}
			sums[l.wallet.currency].Add(sums[l.wallet.currency], l.amount)
		}
		for _, cur := range []string{"BTC", "ETH"} {
			if sums[cur] != nil && rng.IntN(5) < 2 {
				nets = append(nets, map[string]any{"currency": cur, "ledger": cur, "amount": moneyString(sums[cur])})
			}
		}
		body := instructionBody(st.requestID, r.f.venue, legs, nets...)
		st.body = mustJSON(r.t, body)
		st.instr = &interchangev1.CreateSettlementRequest{}
		if err := protojson.Unmarshal(st.body, st.instr); err != nil {
			r.fatalf("instruction %s: %v", st.requestID, err)
		}
		p.settlements = append(p.settlements, st)
		p.ops = append(p.ops, func() { r.settle(st) })
	}
	for i := range nWithdraw {
		cur := []string{"BTC", "ETH"}[rng.IntN(2)]
		w := &moneyWithdrawal{transferID: fmt.Sprintf("MR-%d-W%03d", r.seed, i), wallet: r.clients[cur][rng.IntN(len(r.clients[cur]))],
			mode: rng.IntN(4), rng: rand.New(rand.NewPCG(rng.Uint64(), 1)), ok: map[string]bool{}}
		if rng.IntN(8) == 0 {
			w.amount = moneyDraw(rng, moneyPlaces(cur), map[string]int{"BTC": 60, "ETH": 600}[cur]) // more than the wallet holds
		} else {
			w.amount = moneyLegAmount(rng, cur)
		}
		p.withdrawals = append(p.withdrawals, w)
		p.ops = append(p.ops, func() { r.withdraw(w) })
	}
	for range max(nSettle/6, 2) {
		w := r.wallets[rng.IntN(len(r.wallets))]
		d := moneyDeposit{wallet: w, amount: moneyLegAmount(rng, w.currency)}
		p.deposits = append(p.deposits, d)
		p.ops = append(p.ops, func() { r.deposit(d.wallet, d.amount) })
	}
	rng.Shuffle(len(p.ops), func(i, j int) { p.ops[i], p.ops[j] = p.ops[j], p.ops[i] })
	return p
}

// moneyLegAmount draws a leg's size: up to about 2 BTC or 9 ETH, a fifth of them tiny (below
// a thousandth of a unit).
func moneyLegAmount(rng *rand.Rand, cur string) *big.Rat {
	places := moneyPlaces(cur)
	if rng.IntN(5) == 0 {
		a := moneyDraw(rng, places-3, 0)
		return a.Quo(a, big.NewRat(1000, 1))
	}
	whole := rng.IntN(9)
	if cur == "BTC" {
		whole = rng.IntN(5) / 4
	}
	return moneyDraw(rng, places, whole)
}

// moneyPlaces is the currency's base unit in decimals.
func moneyPlaces(cur string) int { return map[string]int{"BTC": 8, "ETH": 18}[cur] }

// moneyDraw draws whole plus a fraction of a random number of decimals, at most places;
// never zero.
func moneyDraw(rng *rand.Rand, places, whole int) *big.Rat {
	k := rng.IntN(places + 1)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
	frac := new(big.Int)
	if k > 0 {
		frac.SetUint64(rng.Uint64N(scale.Uint64()))
	}
	out := new(big.Rat).SetFrac(frac, scale)
	out.Add(out, big.NewRat(int64(whole), 1))
	if out.Sign() == 0 {
		out.SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil))
	}
	return out
}

// moneyString writes an exact amount canonically (no trailing zeros; all amounts have at
// most 18 decimals).
func moneyString(a *big.Rat) string {
	s := a.FloatString(18)
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func moneyParse(s string) (*big.Rat, bool) {
	if s == "" {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

// moneyFinal reports whether a settlement status is final.
func moneyFinal(st string) bool {
	return st == moneyComplete || st == moneyFailed || st == moneyRejected
}

// moneyRetryable reports whether a gRPC error is one the chaos explains (ask again later).
func moneyRetryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Canceled, codes.Unknown:
		return true
	}
	return false
}

// moneyRetryableHTTP reports whether a gateway answer is one the chaos explains: none, or
// 500 (a backend's database link cut), 502, 503 (a backend down) or 504.
func moneyRetryableHTTP(resp response) bool {
	switch {
	case resp.err != nil:
		return true
	case resp.status == http.StatusInternalServerError, resp.status == http.StatusBadGateway,
		resp.status == http.StatusServiceUnavailable, resp.status == http.StatusGatewayTimeout:
		return true
	}
	return false
}

// moneyBackoff is the wait before retry n of a step: 100 ms doubling up to 1 s, jittered
// (a retry against a service that is down costs the others nothing, one against a service
// whose peer is down costs it database commands).
func moneyBackoff(rng *rand.Rand, n int) time.Duration {
	d := min(time.Second, 100*time.Millisecond<<min(n, 4))
	return d/2 + time.Duration(rng.Int64N(int64(d/2)+1))
}

// --- settlements ---

// settle creates a settlement and drives it along a random legal path to a final state.
func (r *moneyRun) settle(st *moneySettlement) {
	if !r.create(st) {
		return
	}
	rng := st.rng
	cur, payIns, reverseRefused := moneyReceived, 0, false
	for !moneyFinal(cur) {
		var tos []string
		switch cur {
		case moneyReceived:
			tos = []string{moneyInitiated}
			if rng.IntN(12) == 0 {
				tos = []string{moneyRejected}
			}
		case moneyInitiated:
			switch rng.IntN(12) {
			case 0:
				tos = []string{moneyFailed}
			case 1:
				tos = []string{moneyAwaiting}
			default:
				tos = []string{moneyPayIn}
			}
		case moneyAwaiting:
			if payIns >= 3 || rng.IntN(4) == 0 {
				tos = []string{moneyFailed}
				break
			}
			if payIns > 0 && rng.IntN(2) == 0 {
				r.topUp(st)
			}
			tos = []string{moneyPayIn}
		case moneyPayIn:
			switch rng.IntN(10) {
			case 0:
				tos = []string{moneyFailed}
			case 1:
				tos = []string{moneyPayOut, moneyFailed} // racing: one wins, the other may follow
			default:
				tos = []string{moneyPayOut}
			}
		case moneyPayOut:
			tos = []string{moneyComplete}
			if !reverseRefused && rng.IntN(6) == 0 {
				tos = []string{moneyFailed}
			}
		default:
			r.errorf("settlement %s: unexpected status %s", st.requestID, cur)
			return
		}
		if len(tos) == 1 && rng.IntN(5) == 0 {
			tos = append(tos, tos[0]) // the same transition asked twice at once
		}
		if tos[0] == moneyPayIn {
			payIns++
		}
		next, ok := r.step(st, tos)
		if !ok {
			return
		}
		if cur == moneyPayOut && next == moneyPayOut {
			reverseRefused = true // FAILED refused: a payee no longer holds its share
		}
		cur = next
	}
	st.mu.Lock()
	st.final = cur
	st.mu.Unlock()
}

// create records the settlement, through the gateway or the engine, asking again with the
// same body until it is answered.
func (r *moneyRun) create(st *moneySettlement) bool {
	deadline := time.Now().Add(moneyStepLimit)
	for retries := 0; ; {
		if st.viaGateway {
			resp := call(r.operator, http.MethodPost, settlementCreatePath, st.body)
			if resp.err == nil && resp.status == http.StatusOK {
				var got struct {
					SettlementTrackingID string `json:"settlementTrackingId"`
				}
				if err := json.Unmarshal(resp.body, &got); err != nil || got.SettlementTrackingID == "" {
					r.errorf("create %s: body %s", st.requestID, resp.body)
					return false
				}
				st.tracking = got.SettlementTrackingID
				return true
			}
			r.count(fmt.Sprintf("create http %d", resp.status))
			if !moneyRetryableHTTP(resp) {
				r.errorf("create %s through the gateway: %d %s", st.requestID, resp.status, resp.body)
				return false
			}
		} else {
			ctx, cancel := context.WithTimeout(r.sign(), moneyCallLimit)
			resp, err := r.engine.client.InstructSettlement(ctx, &interchangev1.InstructSettlementRequest{CompanyId: demo.CompanyZTEST, Instruction: st.instr})
			cancel()
			if err == nil {
				st.tracking = resp.GetResult().GetSettlementTrackingId()
				return true
			}
			r.count("instruct " + status.Code(err).String())
			if !moneyRetryable(err) {
				r.errorf("InstructSettlement %s: %v", st.requestID, err)
				return false
			}
		}
		if time.Now().After(deadline) {
			r.errorf("settlement %s not created within %v", st.requestID, moneyStepLimit)
			return false
		}
		time.Sleep(moneyBackoff(st.rng, retries))
		retries++
	}
}

// moneySettlementDoc is what the test reads of a settlement in interchange's database.
type moneySettlementDoc struct {
	TrackingID string `bson:"trackingId"`
	RequestID  string `bson:"settlementRequestId"`
	Status     string `bson:"status"`
	Pending    *struct {
		To         string    `bson:"to"`
		LeaseUntil time.Time `bson:"leaseUntil"`
	} `bson:"pending"`
	History []struct {
		From string `bson:"from"`
		To   string `bson:"to"`
	} `bson:"history"`
}

// readSettlement reads a settlement by its key, <companyId>:<settlementRequestId>, the
// company being the one that instructed it (a read by _id: the embedded database scans a
// collection for any other filter).
func (r *moneyRun) readSettlement(st *moneySettlement) (moneySettlementDoc, error) {
	owner := demo.CompanyZTEST
	if st.viaGateway {
		owner = r.f.operator
	}
	var d moneySettlementDoc
	err := r.ic.Collection("settlements").FindOne(r.t.Context(), bson.D{{Key: "_id", Value: owner + ":" + st.requestID}}).Decode(&d)
	if err == nil && d.TrackingID != st.tracking {
		err = fmt.Errorf("settlement %s has tracking id %s, created as %s", st.requestID, d.TrackingID, st.tracking)
	}
	return d, err
}

// step asks for the transitions tos at once (a race when more than one) and returns the
// status the settlement ends in once a transition finished and none is pending; a
// transition cut short is asked again (409 while its lease lasts, then resumed).
func (r *moneyRun) step(st *moneySettlement, tos []string) (string, bool) {
	before, err := r.readSettlement(st)
	if err != nil {
		r.errorf("read settlement %s: %v", st.requestID, err)
		return "", false
	}
	begin := time.Now()
	deadline := begin.Add(moneyStepLimit)
	cur, last := before, before
	for round := 0; ; round++ {
		send := tos
		if round > 0 {
			if cur.Pending != nil {
				send = []string{cur.Pending.To}
			} else {
				send = tos[:1]
			}
		}
		var wg sync.WaitGroup
		for _, to := range send {
			wg.Go(func() { r.advance(st, to) })
		}
		wg.Wait()
		if cur, err = r.readSettlement(st); err != nil {
			r.errorf("read settlement %s: %v", st.requestID, err)
			return "", false
		}
		if cur.Pending == nil && len(cur.History) > len(before.History) {
			return cur.Status, true
		}
		if renewed(last, cur) {
			deadline = time.Now().Add(moneyStepLimit)
			if limit := begin.Add(moneyStepCap); deadline.After(limit) {
				deadline = limit
			}
		}
		last = cur
		if time.Now().After(deadline) {
			r.errorf("settlement %s (%s): %v from %s not finished within %v (%v since its lease was last seen renewed); now %s, pending %+v",
				st.requestID, st.tracking, tos, before.Status, time.Since(begin).Round(time.Second), moneyStepLimit, cur.Status, cur.Pending)
			return "", false
		}
		time.Sleep(moneyBackoff(st.rng, round))
	}
}

// renewed reports whether the settlement's pending transition was renewed (or taken over)
// between two reads: the same transition still pending, under a later lease.
func renewed(before, now moneySettlementDoc) bool {
	return before.Pending != nil && now.Pending != nil && before.Pending.To == now.Pending.To &&
		now.Pending.LeaseUntil.After(before.Pending.LeaseUntil)
}

// advance asks for one transition and records what it answered.
func (r *moneyRun) advance(st *moneySettlement, to string) {
	start := time.Now()
	got, err := r.engine.advance(st.tracking, to)
	if err == nil {
		r.took("advance", time.Since(start))
		st.mu.Lock()
		st.answers = append(st.answers, got)
		st.mu.Unlock()
		r.count("advance ok")
		return
	}
	c := status.Code(err)
	r.count("advance " + c.String())
	if !moneyRetryable(err) && c != codes.Aborted && c != codes.FailedPrecondition {
		r.errorf("advance %s (%s) to %s: %v", st.requestID, st.tracking, to, err)
	}
}

// topUp deposits into each payer of an AWAITING_FUNDS settlement what its legs ask of it.
func (r *moneyRun) topUp(st *moneySettlement) {
	need := map[*moneyWallet]*big.Rat{}
	for _, l := range st.legs {
		w, a := l.wallet, new(big.Rat).Set(l.amount)
		if a.Sign() < 0 {
			w, a = r.venue[w.currency], a.Neg(a)
		}
		if need[w] == nil {
			need[w] = new(big.Rat)
		}
		need[w].Add(need[w], a)
	}
	for _, w := range r.wallets {
		if a := need[w]; a != nil {
			r.deposit(w, a)
		}
	}
}

// --- withdrawals ---

// withdraw creates a withdrawal and decides it through the gateway.
func (r *moneyRun) withdraw(w *moneyWithdrawal) {
	if !r.createWithdrawal(w) {
		return
	}
	deadline := time.Now().Add(moneyStepLimit)
	for round := 0; ; round++ {
		var decisions []string
		switch {
		case round == 0:
			decisions = [][]string{{"ACCEPT"}, {"DECLINE"}, {"ACCEPT", "DECLINE"}, {"ACCEPT", "ACCEPT"}}[w.mode]
		default:
			decisions = []string{[]string{"ACCEPT", "DECLINE", "ACCEPT", "ACCEPT"}[w.mode]}
		}
		var wg sync.WaitGroup
		for _, d := range decisions {
			wg.Go(func() { r.confirm(w, d) })
		}
		wg.Wait()
		doc, err := r.readWithdrawal(w.transferID)
		if err != nil {
			r.errorf("read withdrawal %s: %v", w.transferID, err)
			return
		}
		if doc.Status != moneyWDPending {
			w.mu.Lock()
			w.final = doc.Status
			w.mu.Unlock()
			return
		}
		if time.Now().After(deadline) {
			r.errorf("withdrawal %s not decided within %v", w.transferID, moneyStepLimit)
			return
		}
		time.Sleep(moneyBackoff(w.rng, round))
	}
}

func (r *moneyRun) createWithdrawal(w *moneyWithdrawal) bool {
	address := map[string]string{"BTC": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "ETH": "0x52908400098527886e0f7030069857d2e4169ee7"}[w.wallet.currency]
	deadline := time.Now().Add(moneyStepLimit)
	for retries := 0; ; retries++ {
		ctx, cancel := context.WithTimeout(r.sign(), moneyCallLimit)
		_, err := r.engine.client.CreateWithdrawal(ctx, &interchangev1.CreateWithdrawalRequest{TransferId: w.transferID, CompanyId: demo.CompanyZTEST,
			WalletId: w.wallet.id, Currency: w.wallet.currency, Amount: moneyString(w.amount), DestinationAddress: address})
		cancel()
		if err == nil {
			w.created = true
			return true
		}
		r.count("create withdrawal " + status.Code(err).String())
		if status.Code(err) == codes.FailedPrecondition && strings.Contains(status.Convert(err).Message(), "insufficient funds") {
			w.short = true // declined at its creation; asked again, it stays refused
			return false
		}
		if !moneyRetryable(err) {
			r.errorf("CreateWithdrawal %s: %v", w.transferID, err)
			return false
		}
		if time.Now().After(deadline) {
			r.errorf("withdrawal %s not created within %v", w.transferID, moneyStepLimit)
			return false
		}
		time.Sleep(moneyBackoff(w.rng, retries))
	}
}

// confirm sends one decision through the gateway and records what it answered.
func (r *moneyRun) confirm(w *moneyWithdrawal, decision string) {
	body := map[string]string{"transferId": w.transferID, "withdrawalConfirmation": decision}
	if decision == "DECLINE" {
		body["reason"] = "fault test: declined"
	}
	resp := call(r.operator, http.MethodPost, withdrawalConfirmPath, mustJSON(r.t, body))
	if !moneyRetryableHTTP(resp) {
		r.took("confirm", resp.elapsed)
	}
	r.count(fmt.Sprintf("%s http %d", strings.ToLower(decision), resp.status))
	switch {
	case moneyRetryableHTTP(resp):
	case resp.status == http.StatusOK:
		w.mu.Lock()
		w.ok[decision] = true
		w.mu.Unlock()
	case resp.status == http.StatusConflict:
		if strings.Contains(string(resp.body), "insufficient funds") {
			r.errorf("%s %s: refused for lack of funds, though the amount is held from its creation: %s", decision, w.transferID, resp.body)
		}
	default:
		r.errorf("%s %s: %d %s", decision, w.transferID, resp.status, resp.body)
	}
}

// moneyWithdrawalDoc is what the test reads of a withdrawal in interchange's database.
type moneyWithdrawalDoc struct {
	Status      string    `bson:"status"`
	HoldAttempt int       `bson:"holdAttempt"`
	CompletedAt time.Time `bson:"completedAt"`
}

func (r *moneyRun) readWithdrawal(id string) (moneyWithdrawalDoc, error) {
	var d moneyWithdrawalDoc
	err := r.ic.Collection("withdrawals").FindOne(r.t.Context(), bson.D{{Key: "_id", Value: id}}).Decode(&d)
	return d, err
}

// --- deposits ---

// deposit credits a wallet through trading's ledger API, asking again with the same id
// until trading answers; one still unanswered at the step's limit is left to the final
// phase.
func (r *moneyRun) deposit(w *moneyWallet, a *big.Rat) {
	r.mu.Lock()
	r.depositSeq++
	d := moneyDeposit{id: fmt.Sprintf("MR-%d-D%04d", r.seed, r.depositSeq), wallet: w, amount: new(big.Rat).Set(a)}
	r.mu.Unlock()
	if !r.tryDeposit(d, time.Now().Add(moneyStepLimit)) {
		r.mu.Lock()
		r.unconfirmed = append(r.unconfirmed, d)
		r.mu.Unlock()
	}
}

func (r *moneyRun) tryDeposit(d moneyDeposit, deadline time.Time) bool {
	for retries := 0; ; retries++ {
		ctx, cancel := context.WithTimeout(r.sign(), moneyCallLimit)
		_, err := r.ledger.RecordDeposit(ctx, &tradingv1.RecordDepositRequest{DepositId: d.id, CompanyId: d.wallet.company,
			WalletId: d.wallet.id, Currency: d.wallet.currency, Amount: moneyString(d.amount)})
		cancel()
		if err == nil {
			r.mu.Lock()
			r.deposited[d.wallet.id].Add(r.deposited[d.wallet.id], d.amount)
			r.mu.Unlock()
			return true
		}
		r.count("deposit " + status.Code(err).String())
		switch status.Code(err) {
		case codes.InvalidArgument, codes.NotFound, codes.PermissionDenied, codes.Unauthenticated, codes.AlreadyExists:
			r.errorf("deposit %s into %s: %v", d.id, d.wallet.name, err)
			return true // refused: nothing was credited, nothing to ask again
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(min(time.Second, 100*time.Millisecond<<min(retries, 4)))
	}
}

// --- chaos and monitor ---

// chaos kills and restarts services at the planned points of the plan.
func (r *moneyRun) chaos(ctx context.Context, kills []moneyKill, total int) {
	for i, k := range kills {
		threshold := int64(k.at * float64(total))
		for r.done.Load() < threshold {
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		time.Sleep(k.delay)
		at := r.done.Load()
		start := time.Now()
		if k.crash {
			r.s.own[k.service].Cut()
		}
		if err := r.s.stack.StopService(k.service); err != nil {
			r.t.Logf("seed=%d: chaos %d: %s ended with %v", r.seed, i+1, k.service, err)
		}
		stopped := time.Since(start)
		time.Sleep(k.down - stopped) // down for k.down in all, or as long as the stop took
		if k.crash {
			if err := r.s.own[k.service].Restore(); err != nil {
				r.errorf("chaos %d: restore %s's link: %v", i+1, k.service, err)
				return
			}
		}
		restart := time.Now()
		if err := r.s.stack.StartService(context.WithoutCancel(ctx), k.service); err != nil {
			r.errorf("chaos %d: restart %s: %v", i+1, k.service, err)
			return
		}
		how := "stopped"
		if k.crash {
			how = "crashed"
		}
		r.t.Logf("seed=%d: chaos %d: %s %s at %d/%d operations done (its stop took %v), restarted %v after the kill, SERVING %v later",
			r.seed, i+1, k.service, how, at, total, stopped.Round(time.Millisecond), restart.Sub(start).Round(time.Millisecond),
			time.Since(restart).Round(time.Millisecond))
	}
}

// monitor samples every wallet's balances until ctx ends: none may ever be negative.
func (r *moneyRun) monitor(ctx context.Context) {
	for {
		start := time.Now()
		if err := r.ic.Client().Ping(ctx, nil); err == nil {
			r.took("db ping", time.Since(start))
		}
		for _, w := range r.wallets {
			b, err := r.balance(ctx, w)
			if err != nil {
				if ctx.Err() == nil {
					r.errorf("read %s: %v", w.name, err)
				}
				return
			}
			for k, v := range b {
				if v.Sign() < 0 {
					r.errorf("%s: balance %d (available, ledger, pending out, pending in) is negative: %s", w.name, k, moneyString(v))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(3 * time.Second):
		}
	}
}

// balance reads a wallet's available, ledger, pending out and pending in balances from
// trading's database.
func (r *moneyRun) balance(ctx context.Context, w *moneyWallet) ([4]*big.Rat, error) {
	var out [4]*big.Rat
	got, err := r.f.store.Wallet(ctx, w.company, w.id)
	if errors.Is(err, apperr.ErrNotFound) && w.venue {
		for i := range out {
			out[i] = new(big.Rat)
		}
		return out, nil
	}
	if err != nil {
		return out, err
	}
	if len(got.Balances) != 1 {
		return out, fmt.Errorf("%s has %d balances, want 1", w.id, len(got.Balances))
	}
	b := got.Balances[0]
	for i, s := range []string{b.Available, b.Ledger, b.PendingOut, b.PendingIn} {
		v, ok := moneyParse(s)
		if !ok {
			return out, fmt.Errorf("%s: balance %q is not a decimal", w.id, s)
		}
		out[i] = v
	}
	return out, nil
}

// --- the final phase ---

// finish confirms the deposits left unanswered, lets the sweepers finish what the kills
// cut short, drives every settlement to a final state, decides every withdrawal, and waits
// until every money step is done and no journal entry is in flight.
func (r *moneyRun) finish(p *moneyPlan) {
	r.t.Helper()
	r.mu.Lock()
	unconfirmed := r.unconfirmed
	r.unconfirmed = nil
	r.mu.Unlock()
	for _, d := range unconfirmed {
		if !r.tryDeposit(d, time.Now().Add(moneyFinalLimit)) {
			r.fatalf("deposit %s still unanswered after the chaos", d.id)
		}
	}
	// The sweepers resume what was left pending (nobody asks for it again).
	start := time.Now()
	for {
		pending, err := r.pendingSettlements()
		if err != nil {
			r.fatalf("read settlements: %v", err)
		}
		if len(pending) == 0 {
			break
		}
		if time.Since(start) > moneyFinalLimit {
			r.fatalf("settlements still pending %v after the chaos (the sweeper did not resume them): %v", moneyFinalLimit, pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Logf("seed=%d: no settlement pending %v after the plan", r.seed, time.Since(start).Round(time.Millisecond))
	// Every settlement to a final state.
	for _, st := range p.settlements {
		if st.tracking == "" {
			continue // skipped, or not created (reported)
		}
		for {
			d, err := r.readSettlement(st)
			if err != nil {
				r.fatalf("read settlement %s: %v", st.requestID, err)
			}
			if moneyFinal(d.Status) {
				st.final = d.Status
				break
			}
			to := map[string]string{moneyReceived: moneyRejected, moneyInitiated: moneyFailed, moneyAwaiting: moneyFailed,
				moneyPayIn: moneyPayOut, moneyPayOut: moneyComplete}[d.Status]
			if _, ok := r.step(st, []string{to}); !ok {
				r.fatalf("settlement %s cannot be finished", st.requestID)
			}
		}
	}
	r.t.Logf("seed=%d: final phase: every settlement final %v after the plan", r.seed, time.Since(start).Round(time.Millisecond))
	finalAt := time.Now()
	// Every withdrawal decided.
	for _, w := range p.withdrawals {
		if w.short {
			if d, err := r.readWithdrawal(w.transferID); err != nil || d.Status != moneyWDDeclined || d.CompletedAt.IsZero() {
				r.fatalf("withdrawal %s refused for lack of funds: %+v, %v; want DECLINED and its release done", w.transferID, d, err)
			}
		}
		if !w.created {
			continue // skipped, refused, or not created (reported)
		}
		deadline := time.Now().Add(moneyFinalLimit)
		for {
			d, err := r.readWithdrawal(w.transferID)
			if err != nil {
				r.fatalf("read withdrawal %s: %v", w.transferID, err)
			}
			if d.Status != moneyWDPending {
				w.final = d.Status
				break
			}
			if time.Now().After(deadline) {
				r.fatalf("withdrawal %s cannot be declined", w.transferID)
			}
			r.confirm(w, "DECLINE")
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Every decided withdrawal's money step done (by its call or the sweeper).
	waitFor(r.t, moneyFinalLimit, fmt.Sprintf("seed=%d: every decided withdrawal completed", r.seed), func() bool {
		for _, w := range p.withdrawals {
			if !w.created {
				continue
			}
			d, err := r.readWithdrawal(w.transferID)
			if err != nil || d.CompletedAt.IsZero() {
				time.Sleep(100 * time.Millisecond)
				return false
			}
		}
		return true
	})
	// No journal entry in flight (trading's recovery pass finishes those a kill cut short).
	// Counted directly: a Reconcile scans the whole journal, through a database that runs one
	// command at a time.
	entries := r.tr.Collection("journal_entries")
	waitFor(r.t, moneyFinalLimit, fmt.Sprintf("seed=%d: no journal entry in flight", r.seed), func() bool {
		n, err := entries.CountDocuments(r.t.Context(), bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{"recorded", "compensating"}}}}})
		if err == nil && n > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		return err == nil && n == 0
	})
	r.t.Logf("seed=%d: final phase: every withdrawal completed and no entry in flight %v after the settlements were final", r.seed,
		time.Since(finalAt).Round(time.Millisecond))
}

func (r *moneyRun) pendingSettlements() ([]string, error) {
	cur, err := r.ic.Collection("settlements").Find(r.t.Context(), bson.D{{Key: "venueId", Value: r.f.venue}})
	if err != nil {
		return nil, err
	}
	var docs []moneySettlementDoc
	if err := cur.All(r.t.Context(), &docs); err != nil {
		return nil, err
	}
	var out []string
	for _, d := range docs {
		if d.Pending != nil {
			out = append(out, fmt.Sprintf("%s %s→%s", d.RequestID, d.Status, d.Pending.To))
		}
	}
	return out, nil
}

func (r *moneyRun) reconcile() (*tradingv1.ReconcileResponse, error) {
	// Reconcile re-reads the history of every entry changed in the last minute, and the
	// embedded database scans for each: after a busy run it takes a while.
	ctx, cancel := context.WithTimeout(r.sign(), 2*time.Minute)
	defer cancel()
	return r.ledger.Reconcile(ctx, &tradingv1.ReconcileRequest{})
}

// moneyPosting is one row of a wallet's statement (the history extension).
type moneyPosting struct {
	Sequence         string `json:"sequence"`
	EntryID          string `json:"entryId"`
	Type             string `json:"type"`
	Reference        string `json:"reference"`
	AvailableChange  string `json:"availableChange"`
	LedgerChange     string `json:"ledgerChange"`
	PendingOutChange string `json:"pendingOutChange"`
	AvailableBalance string `json:"availableBalance"`
	LedgerBalance    string `json:"ledgerBalance"`
	PendingOut       string `json:"pendingOutBalance"`
}

// gatewayOK sends a request as c until it is answered 200 (the stack is quiet by now) and
// decodes the answer into v.
func (r *moneyRun) gatewayOK(c *signing.Client, path string, body any, v any) {
	r.t.Helper()
	deadline := time.Now().Add(moneyFinalLimit)
	for {
		resp := call(c, http.MethodPost, path, mustJSON(r.t, body))
		if resp.err == nil && resp.status == http.StatusOK {
			if err := json.Unmarshal(resp.body, v); err != nil {
				r.fatalf("%s: decode %s: %v", path, resp.body, err)
			}
			return
		}
		if time.Now().After(deadline) || !moneyRetryableHTTP(resp) {
			r.fatalf("%s %v: %d %s %v", path, body, resp.status, resp.body, resp.err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// statement reads a ZTEST wallet's whole statement through the gateway.
func (r *moneyRun) statement(w *moneyWallet) []moneyPosting {
	var all []moneyPosting
	cursor := ""
	for {
		var page struct {
			Items      []moneyPosting `json:"items"`
			NextCursor string         `json:"nextCursor"`
		}
		r.gatewayOK(r.gw, walletHistoryPath, map[string]any{"walletId": w.id, "paginationLimit": 1024, "cursor": cursor}, &page)
		all = append(all, page.Items...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
}

// entryRecord tells what trading's database holds of a journal entry: its state, and its
// history rows (the statement shows a posting without a row from the holder's marker).
func (r *moneyRun) entryRecord(entry string) string {
	var e struct {
		State string `bson:"state"`
	}
	err := r.tr.Collection("journal_entries").FindOne(r.t.Context(), bson.D{{Key: "_id", Value: strings.TrimSuffix(entry, "~")}}).Decode(&e)
	rows, herr := r.tr.Collection("journal_history").CountDocuments(r.t.Context(), bson.D{{Key: "entry", Value: entry}})
	return fmt.Sprintf("entry %s, %d history rows in all; %v", e.State, rows, errors.Join(err, herr))
}

// moneyRowOf is the type and reference of a statement row told by its entry id alone:
// dep:<depositId>, stl:<trackingId>:…, wd:<transferId>:hold:<n>[:post|:void].
func moneyRowOf(entry string) (typ, ref string) {
	parts := strings.Split(strings.TrimSuffix(entry, "~"), ":")
	if len(parts) < 2 {
		return "", entry
	}
	switch {
	case parts[0] == "dep":
		return "deposit", strings.Join(parts[1:], ":")
	case parts[0] == "wd" && parts[len(parts)-1] == "post":
		return "withdrawal.post", parts[1]
	}
	return parts[0], parts[1]
}

// check asserts the invariants once everything is final.
func (r *moneyRun) check(p *moneyPlan) {
	r.t.Helper()
	// Trading's journal reconciles.
	reconcileAt := time.Now()
	resp, err := r.reconcile()
	if err != nil {
		r.fatalf("reconcile: %v", err)
	}
	if v := resp.GetViolations(); len(v) > 0 {
		r.errorf("trading's journal does not reconcile:\n%s", strings.Join(v, "\n"))
	}
	r.t.Logf("seed=%d: reconciled %d holders, %d postings in %v", r.seed, resp.GetHolders(), resp.GetPostings(),
		time.Since(reconcileAt).Round(time.Millisecond))

	// Final statuses through the gateway agree with the record, and with every answer.
	// The operator's settlements are its own, the engine's ZTEST's: each reads its own.
	byRequest := map[string]string{}
	for _, c := range []*signing.Client{r.gw, r.operator} {
		for offset := 0; ; {
			var page struct {
				Total int `json:"total"`
				Items []struct {
					RequestID string `json:"settlementRequestId"`
					Status    string `json:"status"`
				} `json:"items"`
			}
			r.gatewayOK(c, settlementSearchPath, map[string]any{"venueIds": []string{r.f.venue}, "paginationLimit": 1024, "paginationOffset": offset}, &page)
			for _, it := range page.Items {
				byRequest[it.RequestID] = it.Status
			}
			offset += len(page.Items)
			if len(page.Items) == 0 || offset >= page.Total {
				break
			}
		}
	}
	finals := map[string]int{}
	for _, st := range p.settlements {
		if st.tracking == "" {
			continue
		}
		finals[st.final]++
		if got := byRequest[st.requestID]; got != st.final {
			r.errorf("settlement %s: status %q through the gateway, %q recorded", st.requestID, got, st.final)
		}
		d, err := r.readSettlement(st)
		if err != nil {
			r.fatalf("read settlement %s: %v", st.requestID, err)
		}
		reached := map[string]bool{}
		for i, h := range d.History {
			reached[h.To] = true
			switch {
			case i == 0 && (h.From != "" || h.To != moneyReceived):
				r.errorf("settlement %s: history starts %s→%s", st.requestID, h.From, h.To)
			case i > 0 && h.From != d.History[i-1].To:
				r.errorf("settlement %s: history %v breaks at step %d (%s→%s after %s)", st.requestID, d.History, i, h.From, h.To, d.History[i-1].To)
			case i > 0 && moneyFinal(h.From):
				r.errorf("settlement %s: moved on from final %s to %s", st.requestID, h.From, h.To)
			}
		}
		for _, a := range st.answers {
			if !reached[a] {
				r.errorf("settlement %s: AdvanceSettlement answered %s, which its history %v never reached", st.requestID, a, d.History)
			}
		}
	}
	decided := map[string]int{}
	for _, w := range p.withdrawals {
		decided[w.final]++
		if w.ok["ACCEPT"] && w.ok["DECLINE"] {
			r.errorf("withdrawal %s: both ACCEPT and DECLINE answered 200", w.transferID)
		}
		if (w.ok["ACCEPT"] && w.final != moneyWDAccepted) || (w.ok["DECLINE"] && w.final != moneyWDDeclined) {
			r.errorf("withdrawal %s: answered %v, ended %s", w.transferID, w.ok, w.final)
		}
	}
	r.t.Logf("seed=%d: settlements %v; withdrawals %v", r.seed, finals, decided)

	// Expected balances: deposits, minus each wallet's legs of the COMPLETE settlements (plus
	// for the venue), minus the ACCEPTED withdrawals.
	want := map[string]*big.Rat{}
	perCurrency := map[string]*big.Rat{"BTC": new(big.Rat), "ETH": new(big.Rat)}
	for _, w := range r.wallets {
		want[w.id] = new(big.Rat).Set(r.deposited[w.id])
		perCurrency[w.currency].Add(perCurrency[w.currency], r.deposited[w.id])
	}
	effect := map[[2]string]*big.Rat{} // (wallet, reference) → ledger change expected
	move := func(wallet, ref string, a *big.Rat) {
		want[wallet].Add(want[wallet], a)
		k := [2]string{wallet, ref}
		if effect[k] == nil {
			effect[k] = new(big.Rat)
		}
		effect[k].Add(effect[k], a)
	}
	for _, st := range p.settlements {
		if st.final != moneyComplete {
			continue
		}
		for _, l := range st.legs {
			move(l.wallet.id, st.tracking, new(big.Rat).Neg(l.amount))
			move(r.venue[l.wallet.currency].id, st.tracking, l.amount)
		}
	}
	accepted := map[string]*moneyWithdrawal{}
	for _, w := range p.withdrawals {
		if w.final == moneyWDAccepted {
			accepted[w.transferID] = w
			move(w.wallet.id, w.transferID, new(big.Rat).Neg(w.amount))
			perCurrency[w.wallet.currency].Sub(perCurrency[w.wallet.currency], w.amount)
		}
	}
	sums := map[string]*big.Rat{"BTC": new(big.Rat), "ETH": new(big.Rat)}
	balances := map[string][4]*big.Rat{}
	for _, w := range r.wallets {
		b, err := r.balance(r.t.Context(), w)
		if err != nil {
			r.fatalf("read %s: %v", w.name, err)
		}
		balances[w.id] = b
		sums[w.currency].Add(sums[w.currency], b[1])
		if b[1].Cmp(want[w.id]) != 0 {
			r.errorf("%s: ledger %s, want %s (deposits %s, COMPLETE legs, ACCEPTED withdrawals): off by %s", w.name,
				moneyString(b[1]), moneyString(want[w.id]), moneyString(r.deposited[w.id]), moneyString(new(big.Rat).Sub(b[1], want[w.id])))
		}
		if b[0].Cmp(b[1]) != 0 || b[2].Sign() != 0 || b[3].Sign() != 0 {
			r.errorf("%s: available %s, ledger %s, pending out %s, pending in %s once everything is final; want nothing held",
				w.name, moneyString(b[0]), moneyString(b[1]), moneyString(b[2]), moneyString(b[3]))
		}
		for k, v := range b {
			if v.Sign() < 0 {
				r.errorf("%s: balance %d is negative: %s", w.name, k, moneyString(v))
			}
		}
	}
	for cur, got := range sums {
		if got.Cmp(perCurrency[cur]) != 0 {
			r.errorf("%s: the wallets hold %s in all, want deposits minus accepted withdrawals %s", cur, moneyString(got), moneyString(perCurrency[cur]))
		}
	}

	// Each ZTEST wallet's statement: it folds to the balances, shows each accepted
	// withdrawal posted once, and nets every settlement and withdrawal to its effect.
	references := map[string]bool{}
	for _, st := range p.settlements {
		references[st.tracking] = true
	}
	for _, w := range p.withdrawals {
		references[w.transferID] = true
	}
	for _, w := range r.wallets {
		if w.venue {
			continue // the venue's wallets are VENUE-<venueId>'s, not readable as ZTEST
		}
		rows := r.statement(w)
		fold := [3]*big.Rat{new(big.Rat), new(big.Rat), new(big.Rat)} // available, ledger, pending out
		net := map[string]*big.Rat{}
		held := map[string]*big.Rat{}
		posts := map[string][]string{}
		deposits := new(big.Rat)
		for i, row := range rows {
			if row.Sequence != strconv.Itoa(i+1) {
				r.errorf("%s: statement row %d has sequence %s", w.name, i+1, row.Sequence)
			}
			var ch [3]*big.Rat
			for k, s := range []string{row.AvailableChange, row.LedgerChange, row.PendingOutChange} {
				v, ok := moneyParse(s)
				if !ok {
					r.fatalf("%s: statement row %+v: change %q", w.name, row, s)
				}
				ch[k] = v
				fold[k].Add(fold[k], v)
			}
			for k, s := range []string{row.AvailableBalance, row.LedgerBalance, row.PendingOut} {
				if v, ok := moneyParse(s); !ok || v.Cmp(fold[k]) != 0 {
					r.errorf("%s: statement row %d (%s) shows balance %s, its changes fold to %s", w.name, i+1, row.EntryID, s, moneyString(fold[k]))
				}
			}
			typ, ref := row.Type, row.Reference
			if typ == "" || ref == "" {
				// The row was never written: the statement shows the posting from the wallet's
				// marker, which carries neither. Counted by its entry id, reported.
				r.errorf("%s: statement row %d (entry %s) has type %q and reference %q: its history row is missing (%s)",
					w.name, i+1, row.EntryID, typ, ref, r.entryRecord(row.EntryID))
				typ, ref = moneyRowOf(row.EntryID)
			}
			if typ == "deposit" {
				deposits.Add(deposits, ch[1])
				continue
			}
			if !references[ref] {
				r.errorf("%s: statement row %+v refers to nothing of the plan", w.name, row)
				continue
			}
			if net[ref] == nil {
				net[ref], held[ref] = new(big.Rat), new(big.Rat)
			}
			net[ref].Add(net[ref], ch[1])
			held[ref].Add(held[ref], ch[2])
			if typ == "withdrawal.post" {
				posts[ref] = append(posts[ref], row.LedgerChange)
			}
		}
		b := balances[w.id]
		for k, name := range []string{"available", "ledger", "pending out"} {
			if fold[k].Cmp(b[k]) != 0 {
				r.errorf("%s: the statement folds to %s %s, the wallet shows %s", w.name, name, moneyString(fold[k]), moneyString(b[k]))
			}
		}
		if deposits.Cmp(r.deposited[w.id]) != 0 {
			r.errorf("%s: the statement's deposits add up to %s, %s were confirmed", w.name, moneyString(deposits), moneyString(r.deposited[w.id]))
		}
		for _, wd := range p.withdrawals {
			if wd.wallet != w {
				continue
			}
			want := []string{}
			if wd.final == moneyWDAccepted {
				want = []string{moneyString(new(big.Rat).Neg(wd.amount))}
			}
			if got := posts[wd.transferID]; !slices.Equal(got, want) {
				r.errorf("%s: withdrawal %s (%s, %s): withdrawal.post rows %v, want %v", w.name, wd.transferID, wd.final, moneyString(wd.amount), got, want)
			}
		}
		for ref := range references {
			wantNet := new(big.Rat)
			if e := effect[[2]string{w.id, ref}]; e != nil {
				wantNet = e
			}
			gotNet, gotHeld := new(big.Rat), new(big.Rat)
			if net[ref] != nil {
				gotNet, gotHeld = net[ref], held[ref]
			}
			if gotNet.Cmp(wantNet) != 0 || gotHeld.Sign() != 0 {
				r.errorf("%s: %s moved the ledger by %s and left %s held, want %s and nothing", w.name, ref, moneyString(gotNet), moneyString(gotHeld), moneyString(wantNet))
			}
		}
	}
	for _, text := range []string{"ledger disagrees", "panic in handler"} {
		if r.s.logs.has(text) {
			r.errorf("the stack logged %q", text)
		}
	}
	totals := []string{}
	for _, cur := range []string{"BTC", "ETH"} {
		totals = append(totals, cur+" "+moneyString(sums[cur]))
	}
	r.t.Logf("seed=%d: wallets hold %s; %d withdrawals accepted", r.seed, strings.Join(totals, ", "), len(accepted))
}
