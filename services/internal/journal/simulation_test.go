package journal_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
)

// TestSimulation is a model-based randomized simulation of the journal, in the spirit of
// TigerBeetle's VOPR: one seed drives a few hundred operations (deposits, transfers, holds,
// posts and voids, resubmissions, multi-party entries, expiring holds and clock jumps), run
// one by one against exact predictions, in concurrent batches on overlapping wallets, and
// cut short by tiny deadlines (a runner that crashes mid-step). Recovery passes converge
// what crashed runners left; after every batch an in-memory oracle folds the legs of the
// entries the journal says are applied and compares them with every account, and the
// reconciliation must be clean.
//
// Everything random comes from the seed (JOURNAL_SEED, default simDefaultSeed); a failure
// names it and the last operations. A seed always starts with the same operations; the
// interleaving of a concurrent batch and the point where a deadline cuts a call are up to
// the scheduler and the database (and later operations depend on their outcomes), so a
// failure in a concurrent batch may take a few runs of its seed to come back.
func TestSimulation(t *testing.T) {
	t.Parallel()
	seed := simSeed(t)
	t.Logf("seed=%d (replay: JOURNAL_SEED=%d go test -run TestSimulation ./services/internal/journal/)", seed, seed)
	s := newSim(t, seed)
	start := time.Now()
	s.fund()
	for s.step < simOps {
		s.batch()
	}
	s.finish()
	t.Logf("seed=%d: %d operations in %d batches (%d concurrent, %d with crashes), %d recovery passes, %d clock jumps, max markers %d, %s",
		seed, s.step, s.batches, s.concurrent, s.crashy, s.recoveries, s.jumps, s.maxMarkers, time.Since(start).Round(time.Millisecond))
	t.Logf("seed=%d: time in calls %s, in checks %s, in recovery %s; recovered %+v", seed, s.inOps.Round(time.Millisecond),
		s.inChecks.Round(time.Millisecond), s.inRecovery.Round(time.Millisecond), s.recovered)
	t.Logf("seed=%d outcomes: %s", seed, s.outcomes())
	t.Logf("seed=%d journal: %s", seed, s.summary())
}

const (
	simDefaultSeed = 20261124
	simOps         = 300
	// simRecoverPasses bounds the passes a recovery takes to converge (each takes at most
	// journal.RecoveryBatch of each kind).
	simRecoverPasses = 8
)

var (
	simWallets  = []string{"W1", "W2", "W3", "W4", "W5", "W6"}
	simClearing = []string{"clr:S1", "clr:S2", "clr:S3"}
	simSystem   = []string{"sys:external", "sys:withdrawals"}
	simHolders  = slices.Concat(simWallets, simClearing, simSystem)
)

// simCurrency is a currency of the simulation and the decimals of its smallest unit.
type simCurrency struct {
	code   string
	places int32
}

var simCurrencies = []simCurrency{{"BTC", 8}, {"ETH", 18}}

func simCurrencyOf(code string) simCurrency {
	for _, c := range simCurrencies {
		if c.code == code {
			return c
		}
	}
	panic("unknown currency " + code)
}

// units is n smallest units of c.
func (c simCurrency) units(n int64) amount.Amount {
	return amount.FromDecimal(decimal.New(n, -c.places))
}

func simSeed(t *testing.T) uint64 {
	v := os.Getenv("JOURNAL_SEED")
	if v == "" {
		return simDefaultSeed
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("JOURNAL_SEED=%q: %v", v, err)
	}
	return seed
}

// seededTB names the seed in every failure the fixture's helpers report.
type seededTB struct {
	*testing.T
	seed uint64
}

func (s seededTB) Fatalf(format string, args ...any) {
	s.T.Helper()
	s.T.Fatalf("seed=%d: "+format, append([]any{s.seed}, args...)...)
}

func (s seededTB) Errorf(format string, args ...any) {
	s.T.Helper()
	s.T.Errorf("seed=%d: "+format, append([]any{s.seed}, args...)...)
}

func (s seededTB) Fatal(args ...any) {
	s.T.Helper()
	s.T.Fatal(append([]any{fmt.Sprintf("seed=%d:", s.seed)}, args...)...)
}

func (s seededTB) Error(args ...any) {
	s.T.Helper()
	s.T.Error(append([]any{fmt.Sprintf("seed=%d:", s.seed)}, args...)...)
}

// simAcct is an account: a (holder, currency) pair.
type simAcct struct{ holder, cur string }

// simOp is one call to the journal and what it answered.
type simOp struct {
	step  int
	label string
	// rec is the entry of a Record; otherwise the op is a Resolve of hold by id, or a
	// recovery pass.
	rec      *journal.Entry
	id, hold string
	kind     journal.Kind
	recover  bool
	altered  bool // a resubmission with other fields: must be an *ExistsError
	nonHold  bool // a resolution of an entry that is no hold
	timeout  time.Duration
	res      journal.Result
	err      error
	crashed  bool // cut short by its deadline: its outcome is uncertain
	took     time.Duration
}

func (o *simOp) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%03d %-14s ", o.step, o.label)
	switch {
	case o.recover:
		b.WriteString("Recover(now)")
	case o.rec != nil:
		e := o.rec
		fmt.Fprintf(&b, "Record %s %s [", e.ID, e.Kind)
		for i, l := range e.Legs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %s %s %s", l.Holder, l.Side, l.Amount, l.Currency)
		}
		b.WriteString("]")
		if !e.ExpiresAt.IsZero() {
			fmt.Fprintf(&b, " expires %s", e.ExpiresAt.Format("15:04:05"))
		}
	default:
		fmt.Fprintf(&b, "Resolve %s %s of %s", o.id, o.kind, o.hold)
	}
	if o.timeout > 0 {
		fmt.Fprintf(&b, " (deadline %s)", o.timeout)
	}
	return b.String()
}

func (o *simOp) outcome() string {
	switch {
	case o.crashed:
		return fmt.Sprintf("crashed after %s: %v", o.took.Round(time.Millisecond), o.err)
	case o.err != nil:
		return o.err.Error()
	case o.res.Replayed:
		return "replayed"
	}
	return "ok"
}

// outcomeClass is the outcome's name in the statistics.
func (o *simOp) outcomeClass() string {
	var exists *journal.ExistsError
	switch {
	case o.crashed:
		return "crashed"
	case o.err == nil && o.res.Replayed:
		return "replayed"
	case o.err == nil:
		return "ok"
	case errors.As(o.err, &exists):
		return "exists"
	case errors.Is(o.err, journal.ErrInsufficient):
		return "insufficient"
	case errors.Is(o.err, journal.ErrHoldAlreadyPosted):
		return "posted"
	case errors.Is(o.err, journal.ErrHoldAlreadyVoided):
		return "voided"
	case errors.Is(o.err, journal.ErrHoldExpired):
		return "expired"
	case errors.Is(o.err, journal.ErrHoldNotFound):
		return "notfound"
	}
	return "error"
}

// simWant is a predicted answer and what the call leaves: the entry applied (or refused
// and stored rejected), or the hold id blocked.
type simWant struct {
	err    error // nil, or the sentinel the error must match
	field  string
	replay bool
	effect simEffectKind
}

type simEffectKind int

const (
	simNothing simEffectKind = iota
	simApplied
	simRejected
	simBlocked
)

func (w simWant) String() string {
	switch {
	case w.err == nil && w.replay:
		return "a replay"
	case w.err == nil:
		return "success"
	case w.field != "":
		return fmt.Sprintf("ExistsError naming %s", w.field)
	}
	return w.err.Error()
}

func (w simWant) matches(o *simOp) bool {
	var exists *journal.ExistsError
	switch {
	case w.err == nil:
		return o.err == nil && o.res.Replayed == w.replay
	case w.field != "":
		return errors.As(o.err, &exists) && exists.Field == w.field
	}
	return errors.Is(o.err, w.err)
}

type sim struct {
	t    *testing.T
	f    *fixture
	seed uint64
	rng  *rand.Rand
	ctx  context.Context

	step, batches, concurrent, crashy, recoveries, jumps, maxMarkers int
	// recovered sums what the recovery passes did; inOps, inChecks and inRecovery the time
	// spent in each part.
	recovered                   journal.Recovery
	inOps, inChecks, inRecovery time.Duration
	// synced is the number of holds generated before the last sync.
	synced int

	// entries is every entry id the simulation made up, as the journal stores it (resolutions
	// mirror their hold's legs; expiry voids are added when the recovery pass writes them).
	entries map[string]journal.Entry
	// records lists the ids of recorded entries, holds those of holds, in generation order;
	// attempts the resolution ids tried on each hold.
	records, holds []string
	attempts       map[string][]string
	// state is each entry's state as of the last sync ("" when the journal has no such
	// entry), advanced by the predictions of a sequential batch; resolvedBy the applied
	// resolution of each hold.
	state      map[string]journal.State
	resolvedBy map[string]string
	// blocked holds the hold ids a void took before anything was recorded under them
	// (rejected entries without legs: the hold can no longer be placed).
	blocked map[string]bool
	// live is the oracle's counters of every account: the fold of the applied entries.
	live map[simAcct]journal.Counters
	// hot is the few wallets a concurrent batch works on (nil otherwise).
	hot []string

	trail []string
	stats map[string]int
}

func newSim(t *testing.T, seed uint64) *sim {
	s := &sim{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 1)), ctx: context.Background(),
		entries: map[string]journal.Entry{}, attempts: map[string][]string{}, state: map[string]journal.State{},
		resolvedBy: map[string]string{}, blocked: map[string]bool{}, live: map[simAcct]journal.Counters{}, stats: map[string]int{}}
	s.f = newFixture(seededTB{T: t, seed: seed}, simWallets...)
	// A short marker list makes holders prune (and copy history rows) every few entries
	// instead of every 32, which is where runners and pruning meet. (Not shorter than 8:
	// the markers of entries rejected within RejectedRetention stay, and a holder whose list
	// they fill takes no update until they may go.)
	s.maxMarkers = []int{8, 16, journal.DefaultMaxMarkers}[s.rng.IntN(3)]
	s.f.j = journal.New(journal.Config{DB: s.f.db, Policy: policy, Collections: []string{"wallets"}, MaxMarkers: s.maxMarkers,
		Now: func() time.Time { return s.f.now }})
	return s
}

// fatalf stops the simulation naming the seed, the step and the last operations.
func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	recent := s.trail[max(0, len(s.trail)-40):]
	s.t.Fatalf("seed=%d step=%d (replay with JOURNAL_SEED=%d): %s\nlast operations:\n  %s", s.seed, s.step, s.seed,
		fmt.Sprintf(format, args...), strings.Join(recent, "\n  "))
}

// failed stops the simulation on an error a call should not have answered; for
// ErrTooManyConflicts it shows the holders' marker lists (a full one takes no update).
func (s *sim) failed(err error, format string, args ...any) {
	s.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if errors.Is(err, journal.ErrTooManyConflicts) {
		msg += "\nmarkers (max " + strconv.Itoa(s.maxMarkers) + "):" + s.markers()
	}
	s.fatalf("%s", msg)
}

// markers lists the entries whose markers every holder carries (diagnostics only).
func (s *sim) markers() string {
	var b strings.Builder
	for _, col := range []string{"wallets", s.f.j.SystemCollection()} {
		cur, err := s.f.db.Collection(col).Find(s.ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "ledgerMarkers.k", Value: 1}}))
		if err != nil {
			return err.Error()
		}
		var docs []struct {
			ID      string `bson:"_id"`
			Markers []struct {
				K string `bson:"k"`
			} `bson:"ledgerMarkers"`
		}
		if err := cur.All(s.ctx, &docs); err != nil {
			return err.Error()
		}
		for _, d := range docs {
			fmt.Fprintf(&b, "\n  %s:", d.ID)
			for _, m := range d.Markers {
				fmt.Fprintf(&b, " %s(%s)", m.K, s.state[strings.TrimSuffix(m.K, "~")])
			}
		}
	}
	return b.String()
}

func (s *sim) note(format string, args ...any) {
	s.trail = append(s.trail, fmt.Sprintf(format, args...))
}

// summary counts the entries by final state and the holds by how they ended.
func (s *sim) summary() string {
	n := map[string]int{}
	for id, st := range s.state {
		e := s.entries[id]
		n[string(e.Kind)+" "+string(st)]++
		if e.Kind == journal.Pending && st == journal.StateApplied {
			switch by := s.resolvedBy[id]; {
			case by == "":
				n["holds open"]++
			case strings.HasSuffix(by, ":expire"):
				n["holds expired"]++
			default:
				n["holds "+string(s.entries[by].Kind)+"ed"]++
			}
		}
	}
	keys := slices.Sorted(maps.Keys(n))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n[k]))
	}
	return strings.Join(parts, " ")
}

func (s *sim) outcomes() string {
	keys := slices.Sorted(maps.Keys(s.stats))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, s.stats[k]))
	}
	return strings.Join(parts, " ")
}

// ---- generation ----

func (s *sim) pick(xs []string) string { return xs[s.rng.IntN(len(xs))] }

func (s *sim) wallet() string {
	if s.hot != nil {
		return s.pick(s.hot)
	}
	return s.pick(simWallets)
}

func (s *sim) otherWallet(not string) string {
	for {
		if w := s.wallet(); w != not {
			return w
		}
		if s.hot != nil && s.rng.IntN(3) == 0 {
			if w := s.pick(simWallets); w != not {
				return w
			}
		}
	}
}

func (s *sim) currency() simCurrency { return simCurrencies[s.rng.IntN(len(simCurrencies))] }

// randomAmount is up to whole units of c, in its smallest units.
func (s *sim) randomAmount(c simCurrency, whole int64) amount.Amount {
	unit := decimal.New(1, c.places).IntPart()
	return c.units(s.rng.Int64N(whole*unit) + 1)
}

// spend is an amount to take from an account with avail available: mostly a part of it,
// sometimes all of it, sometimes one smallest unit more.
func (s *sim) spend(c simCurrency, avail amount.Amount) amount.Amount {
	if avail.Sign() <= 0 {
		return s.randomAmount(c, 1)
	}
	switch s.rng.IntN(10) {
	case 0:
		return avail
	case 1:
		return avail.Add(c.units(1))
	}
	frac := decimal.NewFromFloat(0.05 + s.rng.Float64()*1.1)
	a := amount.FromDecimal(avail.Decimal().Mul(frac).Truncate(c.places))
	if a.Sign() <= 0 {
		return c.units(1)
	}
	return a
}

func (s *sim) available(h, cur string) amount.Amount { return s.live[simAcct{h, cur}].Available() }

func simEntry(id string, kind journal.Kind, code string, legs ...journal.Leg) journal.Entry {
	return journal.Entry{ID: id, Kind: kind, Code: "sim." + code, BusinessKey: id, Legs: legs}
}

func leg(h string, c simCurrency, side journal.Side, a amount.Amount) journal.Leg {
	return journal.Leg{Holder: h, Currency: c.code, Side: side, Amount: a}
}

// newRecord registers a new entry to record.
func (s *sim) newRecord(o *simOp, e journal.Entry) *simOp {
	s.entries[e.ID] = e
	s.records = append(s.records, e.ID)
	if e.Kind == journal.Pending {
		s.holds = append(s.holds, e.ID)
	}
	o.rec = &e
	return o
}

// genOp makes up the next operation from the oracle's view.
func (s *sim) genOp(concurrent bool) *simOp {
	s.step++
	o := &simOp{step: s.step}
	id := func(label string) string { o.label = label; return fmt.Sprintf("s%03d-%s", s.step, label) }
	r := s.rng.IntN(100)
	switch {
	case r < 16 || len(s.records) == 0:
		c, w := s.currency(), s.wallet()
		a := s.randomAmount(c, 5)
		return s.newRecord(o, simEntry(id("deposit"), journal.Single, "deposit",
			leg("sys:external", c, journal.Debit, a), leg(w, c, journal.Credit, a)))
	case r < 34:
		c, from := s.currency(), s.wallet()
		to := s.otherWallet(from)
		a := s.spend(c, s.available(from, c.code))
		return s.newRecord(o, simEntry(id("transfer"), journal.Single, "transfer",
			leg(from, c, journal.Debit, a), leg(to, c, journal.Credit, a)))
	case r < 52:
		c, from := s.currency(), s.wallet()
		to := s.pick(append(slices.Clone(simClearing), "sys:withdrawals"))
		a := s.spend(c, s.available(from, c.code))
		e := simEntry(id("hold"), journal.Pending, "hold", leg(from, c, journal.Debit, a), leg(to, c, journal.Credit, a))
		if s.rng.IntN(5) < 2 {
			e.ExpiresAt = s.f.now.Add(time.Duration(60+s.rng.IntN(540)) * time.Second)
		}
		return s.newRecord(o, e)
	case r < 70 && len(s.holds) > 0:
		s.genResolve(o)
		return o
	case r < 78:
		// The same entry again: a retry answers the stored outcome (or, for an id refused
		// before anything was recorded, tries again).
		o.label = "resubmit"
		e := s.entries[s.pick(s.records)]
		o.rec = &e
		return o
	case r < 82:
		var stored []string
		for _, rid := range s.records {
			if s.state[rid] != "" && len(s.entries[rid].Legs) == 2 {
				stored = append(stored, rid)
			}
		}
		if len(stored) == 0 {
			break
		}
		e := s.entries[s.pick(stored)]
		c := simCurrencyOf(e.Legs[0].Currency)
		e.Legs = slices.Clone(e.Legs)
		e.Legs[0].Amount = e.Legs[0].Amount.Add(c.units(1))
		e.Legs[1].Amount = e.Legs[1].Amount.Add(c.units(1))
		o.label, o.rec, o.altered = "resubmit-diff", &e, true
		return o
	case r < 84:
		var resolved []string
		for _, h := range s.holds {
			if by := s.resolvedBy[h]; by != "" && !strings.HasSuffix(by, ":expire") {
				resolved = append(resolved, h)
			}
		}
		if len(resolved) == 0 {
			break
		}
		h := s.pick(resolved)
		o.label, o.hold, o.id, o.altered = "resolve-diff", h, s.resolvedBy[h], true
		o.kind = journal.Post
		if s.entries[o.id].Kind == journal.Post {
			o.kind = journal.Void
		}
		return o
	case r < 89:
		c, clr := s.currency(), s.pick(simClearing)
		a := s.spend(c, s.available(clr, c.code))
		return s.newRecord(o, simEntry(id("payout"), journal.Single, "payout",
			leg(clr, c, journal.Debit, a), leg("sys:withdrawals", c, journal.Credit, a)))
	case r < 93:
		// Two payers: the second may lack the funds once the first is applied.
		c, p1 := s.currency(), s.wallet()
		p2 := s.otherWallet(p1)
		a1, a2 := s.spend(c, s.available(p1, c.code)), s.spend(c, s.available(p2, c.code))
		to, kind := s.pick(simClearing), journal.Pending
		if s.rng.IntN(2) == 0 {
			to, kind = s.otherWallet(p1), journal.Single
		}
		return s.newRecord(o, simEntry(id("split"), kind, "split",
			leg(p1, c, journal.Debit, a1), leg(p2, c, journal.Debit, a2), leg(to, c, journal.Credit, a1.Add(a2))))
	case r < 96:
		a := s.wallet()
		b := s.otherWallet(a)
		x, y := simCurrencies[0], simCurrencies[1]
		ax, by := s.spend(x, s.available(a, x.code)), s.spend(y, s.available(b, y.code))
		return s.newRecord(o, simEntry(id("swap"), journal.Single, "swap",
			leg(a, x, journal.Debit, ax), leg(b, x, journal.Credit, ax), leg(b, y, journal.Debit, by), leg(a, y, journal.Credit, by)))
	case r < 98:
		var transfers []string
		for _, rid := range s.records {
			if s.entries[rid].Kind == journal.Single {
				transfers = append(transfers, rid)
			}
		}
		if len(transfers) == 0 {
			break
		}
		o.label, o.nonHold, o.kind = "resolve-nonhold", true, journal.Post
		o.hold = s.pick(transfers)
		o.id = o.hold + ":post"
		return o
	case concurrent:
		o.label, o.recover = "recover", true
		return o
	}
	s.step--
	return s.genOp(concurrent)
}

// genResolve posts or voids a hold: mostly an open one under a new resolution id, sometimes
// a retry of an earlier resolution id, sometimes a hold resolved already.
func (s *sim) genResolve(o *simOp) {
	var open, overdue []string // applied and unresolved (or too new to know); past their expiry
	for i, h := range s.holds {
		if s.resolvedBy[h] == "" && (s.state[h] == journal.StateApplied || i >= s.synced) {
			open = append(open, h)
			if s.state[h] == journal.StateApplied && expired(s.entries[h], s.f.now) {
				overdue = append(overdue, h)
			}
		}
	}
	h := s.pick(s.holds)
	switch r := s.rng.IntN(10); {
	case len(overdue) > 0 && r < 4:
		// Racing the recovery pass that expires it.
		h = s.pick(overdue)
	case len(open) > 0 && r < 8:
		h = s.pick(open)
	}
	o.hold = h
	if tried := s.attempts[h]; len(tried) > 0 && s.rng.IntN(10) < 3 {
		o.label, o.id = "resolve-retry", s.pick(tried)
		o.kind = s.entries[o.id].Kind
		return
	}
	o.label, o.kind = "resolve", journal.Post
	if s.rng.IntN(2) == 0 {
		o.kind = journal.Void
	}
	hold := s.entries[h]
	o.id = fmt.Sprintf("%s:%s%d", h, o.kind, len(s.attempts[h]))
	s.attempts[h] = append(s.attempts[h], o.id)
	s.entries[o.id] = journal.Entry{ID: o.id, Kind: o.kind, HoldRef: h, Legs: hold.Legs, Code: "sim." + string(o.kind), BusinessKey: hold.BusinessKey}
}

// ---- running ----

func (s *sim) run(o *simOp) {
	ctx := s.ctx
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	start := time.Now()
	switch {
	case o.recover:
		_, o.err = s.f.j.Recover(ctx, s.f.now)
	case o.rec != nil:
		o.res, o.err = s.f.j.Record(ctx, *o.rec)
	default:
		o.res, o.err = s.f.j.Resolve(ctx, o.id, o.hold, o.kind, "sim."+string(o.kind))
	}
	o.took = time.Since(start)
	// The driver gives up at the deadline, or before it when the time left is shorter than
	// a round trip; either way the call stopped wherever it was.
	deadline, cut := ctx.Deadline()
	o.crashed = o.err != nil && cut && !journalAnswer(o.err) &&
		(!time.Now().Before(deadline) || errors.Is(o.err, context.DeadlineExceeded) || mongo.IsTimeout(o.err))
}

// journalAnswer reports whether err is one of the journal's own answers (judged as such
// even when a deadline passed meanwhile), not a failure to reach the database in time.
func journalAnswer(err error) bool {
	for _, e := range []error{journal.ErrInvalidEntry, journal.ErrUnbalanced, journal.ErrAccountNotFound, journal.ErrInsufficient,
		journal.ErrEntryExists, journal.ErrHoldNotFound, journal.ErrHoldAlreadyPosted, journal.ErrHoldAlreadyVoided,
		journal.ErrHoldExpired, journal.ErrTooManyConflicts, journal.ErrInvariant} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// simBatch is a concurrent batch: its calls, the clock they ran at and the oracle's view
// before them.
type simBatch struct {
	ops      []*simOp
	now      time.Time
	before   map[string]journal.State
	beforeBy map[string]string
	crashed  bool
}

// batch runs a few operations one by one against exact predictions, or concurrently (some
// cut short, then recovered); the clock may jump and a recovery pass run; then the journal
// is checked against the oracle (reconciliation is slow on the embedded database: once a
// batch).
func (s *sim) batch() {
	s.batches++
	var b *simBatch
	strict := false
	if r := s.rng.IntN(100); r < 40 {
		s.sequential(8 + s.rng.IntN(6))
		strict = true
	} else {
		b = s.concurrentBatch(6+s.rng.IntN(3), r >= 70)
	}
	// Time passes after a batch: a little over the margin within which reconciliation takes
	// an entry as possibly moving (with a frozen clock every entry would be one).
	s.f.now = s.f.now.Add(61 * time.Second)
	recover := s.batches%8 == 0
	if r := s.rng.IntN(100); r < 25 {
		// Mostly a few minutes (holds expire); now and then more than an hour.
		d := time.Duration(10+s.rng.IntN(290)) * time.Second
		if r < 3 {
			d = time.Hour + time.Duration(1+s.rng.IntN(20))*time.Minute
		}
		s.f.now = s.f.now.Add(d)
		s.jumps++
		s.note("--- clock +%s: %s", d, s.f.now.Format("15:04:05"))
		recover = recover || s.rng.IntN(10) < 5
	}
	if recover {
		s.recoverAll(false)
	}
	// A recovery pass may expire holds: new entries the predictions know nothing of.
	s.check(strict && !recover, b)
	if b != nil && b.crashed {
		s.checkHoldStates(b.ops)
	}
}

// fund deposits into every wallet in every currency, one by one.
func (s *sim) fund() {
	for _, w := range simWallets {
		for _, c := range simCurrencies {
			s.step++
			o := &simOp{step: s.step}
			a := s.randomAmount(c, 5)
			s.newRecord(o, simEntry(fmt.Sprintf("s%03d-fund", s.step), journal.Single, "deposit",
				leg("sys:external", c, journal.Debit, a), leg(w, c, journal.Credit, a)))
			o.label = "fund"
			s.runPredicted(o)
		}
	}
	s.check(true, nil)
}

func (s *sim) sequential(n int) {
	for range n {
		if s.step >= simOps {
			return
		}
		s.runPredicted(s.genOp(false))
	}
}

// runPredicted runs o alone and checks its answer against the oracle's prediction.
func (s *sim) runPredicted(o *simOp) {
	want := s.predict(o)
	start := time.Now()
	s.run(o)
	s.inOps += time.Since(start)
	s.stats[o.label+":"+o.outcomeClass()]++
	s.note("%s -> %s", o.describe(), o.outcome())
	if !want.matches(o) {
		s.failed(o.err, "%s answered %q, the oracle expected %s", o.describe(), o.outcome(), want)
	}
	s.applyPrediction(o, want)
}

func (s *sim) concurrentBatch(n int, crashes bool) *simBatch {
	s.concurrent++
	if crashes {
		s.crashy++
	}
	s.hot = slices.Clone(simWallets)
	s.rng.Shuffle(len(s.hot), func(i, j int) { s.hot[i], s.hot[j] = s.hot[j], s.hot[i] })
	s.hot = s.hot[:2+s.rng.IntN(2)]
	before := maps.Clone(s.state)
	beforeBy := maps.Clone(s.resolvedBy)
	var ops []*simOp
	for range n {
		if s.step >= simOps {
			break
		}
		var o *simOp
		if len(ops) > 0 && s.rng.IntN(100) < 15 {
			// The same entry twice at once: two runners of one step.
			prev := ops[s.rng.IntN(len(ops))]
			if prev.rec != nil && !prev.altered {
				s.step++
				o = &simOp{step: s.step, label: "resubmit-now", rec: prev.rec}
			}
		}
		if o == nil {
			o = s.genOp(true)
		}
		if crashes && s.rng.IntN(100) < 45 {
			// Log-uniform between 0.5 and 60 ms: cut anywhere in a call.
			o.timeout = time.Duration(500 * math.Pow(120, s.rng.Float64()) * float64(time.Microsecond))
		}
		ops = append(ops, o)
	}
	s.hot = nil
	now := s.f.now
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for _, o := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			s.run(o)
		}()
	}
	// Reconciliation needs no quiet moment: one run beside the calls must be clean too.
	var report journal.Report
	var reportErr error
	reconciling := s.rng.IntN(2) == 0
	if reconciling {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			report, reportErr = s.f.j.Reconcile(s.ctx)
		}()
	}
	start := time.Now()
	close(gate)
	wg.Wait()
	s.inOps += time.Since(start)
	crashed := false
	s.note("--- concurrent batch at %s:", now.Format("15:04:05"))
	for _, o := range ops {
		s.stats[o.label+":"+o.outcomeClass()]++
		s.note("  %s -> %s", o.describe(), o.outcome())
		crashed = crashed || o.crashed
	}
	for _, o := range ops {
		// What leaves work behind without a crash is no answer at all.
		if !o.crashed && o.err != nil && (!journalAnswer(o.err) || errors.Is(o.err, journal.ErrTooManyConflicts) || errors.Is(o.err, journal.ErrInvariant)) {
			s.failed(o.err, "%s answered %q", o.describe(), o.outcome())
		}
	}
	if reconciling {
		s.note("  (reconciliation beside them: %d in flight, %d violations)", report.InFlight, len(report.Violations))
		switch {
		case reportErr != nil:
			s.failed(reportErr, "reconciliation beside a batch: %v", reportErr)
		case !report.Clean():
			s.fatalf("reconciliation beside a batch found differences:\n%s", strings.Join(report.Violations, "\n"))
		}
		s.stats["reconcile-beside:clean"]++
	}
	if crashed {
		// Let writes a cut connection left on their way land before the recovery pass; a
		// recovery pass of a replica that spares recent work may come first.
		time.Sleep(30 * time.Millisecond)
		s.recoverAll(s.rng.IntN(2) == 0)
	}
	return &simBatch{ops: ops, now: now, before: before, beforeBy: beforeBy, crashed: crashed}
}

// recoverAll runs recovery passes until one finds nothing left to do. A graceful pass first
// runs with the cutoff a periodic pass uses (it spares what is younger than the clock).
func (s *sim) recoverAll(graceful bool) {
	s.recoveries++
	defer func(start time.Time) { s.inRecovery += time.Since(start) }(time.Now())
	add := func(r journal.Recovery) {
		s.recovered.Applied += r.Applied
		s.recovered.Rejected += r.Rejected
		s.recovered.Resolved += r.Resolved
		s.recovered.Expired += r.Expired
	}
	if graceful {
		r, err := s.f.j.Recover(s.ctx, s.f.now)
		add(r)
		s.note("--- recovery pass (cutoff now): %+v, %v", r, err)
		if err != nil {
			s.failed(err, "recovery pass (cutoff now): %v", err)
		}
	}
	// Later on: the leases of runners that crashed have run out (a crashed runner never drops
	// its lease; its entry waits for the lease's end, which the business clock need not reach).
	if _, err := s.f.db.Collection("journal_entries").UpdateMany(s.ctx,
		bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: bson.A{journal.StateRecorded, journal.StateCompensating}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "leaseUntil", Value: s.f.now.Add(-time.Second)}}}}); err != nil {
		s.failed(err, "expire leases: %v", err)
	}
	for range simRecoverPasses {
		r, err := s.f.j.Recover(s.ctx, s.f.now.Add(time.Hour))
		add(r)
		s.note("--- recovery pass: %+v, %v", r, err)
		if err != nil {
			s.failed(err, "recovery pass: %v", err)
		}
		if r.Applied+r.Rejected+r.Resolved+r.Expired == 0 {
			return
		}
	}
	s.fatalf("recovery did not converge in %d passes", simRecoverPasses)
}

// ---- the oracle ----

// simEffect is what one leg does to its account's counters.
func simEffect(k journal.Kind, l journal.Leg) journal.Counters {
	a, debit := l.Amount, l.Side == journal.Debit
	var d journal.Counters
	switch {
	case k == journal.Single && debit:
		d.DebitsPosted = a
	case k == journal.Single:
		d.CreditsPosted = a
	case k == journal.Pending && debit:
		d.DebitsPending = a
	case k == journal.Pending:
		d.CreditsPending = a
	case k == journal.Post && debit:
		d.DebitsPending, d.DebitsPosted = a.Neg(), a
	case k == journal.Post:
		d.CreditsPending, d.CreditsPosted = a.Neg(), a
	case k == journal.Void && debit:
		d.DebitsPending = a.Neg()
	case k == journal.Void:
		d.CreditsPending = a.Neg()
	}
	return d
}

func simDeltas(e journal.Entry) map[simAcct]journal.Counters {
	out := map[simAcct]journal.Counters{}
	for _, l := range e.Legs {
		k := simAcct{l.Holder, l.Currency}
		out[k] = out[k].Add(simEffect(e.Kind, l))
	}
	return out
}

// refused reports whether e lowers a constrained account's available balance below zero.
func (s *sim) refused(e journal.Entry) bool {
	for k, d := range simDeltas(e) {
		if policy(k.holder).Constrained && d.Available().Sign() < 0 && s.live[k].Add(d).Available().Sign() < 0 {
			return true
		}
	}
	return false
}

func expired(hold journal.Entry, now time.Time) bool {
	return !hold.ExpiresAt.IsZero() && !now.Before(hold.ExpiresAt)
}

// predict is the answer of a call made with nothing else running, from the oracle's state.
func (s *sim) predict(o *simOp) simWant {
	if o.rec != nil {
		e := *o.rec
		switch st := s.state[e.ID]; {
		case s.blocked[e.ID]:
			// The void's entry in its place differs first by its code.
			return simWant{err: journal.ErrEntryExists, field: "code"}
		case st != "" && o.altered:
			return simWant{err: journal.ErrEntryExists, field: "legs[0].amount"}
		case st == journal.StateApplied:
			return simWant{replay: true}
		case st == journal.StateRejected:
			return simWant{err: journal.ErrInsufficient}
		case st != "":
			s.fatalf("entry %s is %s between batches", e.ID, st)
		case s.refused(e):
			// A refusal for lack of funds is recorded: the id stays refused.
			return simWant{err: journal.ErrInsufficient, effect: simRejected}
		}
		return simWant{effect: simApplied}
	}
	hold, ok := s.entries[o.hold]
	switch {
	case !o.nonHold && ok && s.state[o.hold] == "" && o.kind == journal.Void:
		// A void of a hold never recorded takes its id.
		return simWant{err: journal.ErrHoldNotFound, effect: simBlocked}
	case o.nonHold || !ok || hold.Kind != journal.Pending || s.state[o.hold] != journal.StateApplied:
		return simWant{err: journal.ErrHoldNotFound}
	}
	by := s.resolvedBy[o.hold]
	switch {
	case o.kind == journal.Post && expired(hold, s.f.now):
		if by != o.id {
			return simWant{err: journal.ErrHoldExpired}
		}
	case by == "" || by == o.id:
	case strings.HasSuffix(by, ":expire"):
		return simWant{err: journal.ErrHoldExpired}
	case s.entries[by].Kind == journal.Post:
		return simWant{err: journal.ErrHoldAlreadyPosted}
	default:
		return simWant{err: journal.ErrHoldAlreadyVoided}
	}
	if by == o.id {
		if s.entries[o.id].Kind != o.kind {
			return simWant{err: journal.ErrEntryExists, field: "kind"}
		}
		return simWant{replay: true}
	}
	return simWant{effect: simApplied}
}

// applyPrediction folds what a call left into the oracle.
func (s *sim) applyPrediction(o *simOp, w simWant) {
	id := o.id
	if o.rec != nil {
		id = o.rec.ID
	}
	switch w.effect {
	case simNothing:
		return
	case simRejected:
		s.state[id] = journal.StateRejected
		return
	case simBlocked:
		s.state[o.hold], s.blocked[o.hold] = journal.StateRejected, true
		return
	}
	e := s.entries[id]
	s.state[id] = journal.StateApplied
	if o.rec == nil {
		s.resolvedBy[o.hold] = id
	}
	for k, d := range simDeltas(e) {
		s.live[k] = s.live[k].Add(d)
	}
}

type simStored struct {
	ID          string        `bson:"_id"`
	State       journal.State `bson:"state"`
	Kind        journal.Kind  `bson:"kind"`
	HoldRef     string        `bson:"holdRef"`
	BusinessKey string        `bson:"businessKey"`
}

// sync reads every entry's state from the journal and rebuilds the oracle from it: the
// resolution of each hold and the counters of every account. strict says the oracle's
// predictions must match the states read.
func (s *sim) sync(strict bool) {
	cur, err := s.f.db.Collection("journal_entries").Find(s.ctx, bson.D{},
		options.Find().SetProjection(bson.D{{Key: "state", Value: 1}, {Key: "kind", Value: 1}, {Key: "holdRef", Value: 1}, {Key: "businessKey", Value: 1}}))
	if err != nil {
		s.fatalf("read entries: %v", err)
	}
	var docs []simStored
	if err := cur.All(s.ctx, &docs); err != nil {
		s.fatalf("read entries: %v", err)
	}
	states := make(map[string]journal.State, len(docs))
	blocked := map[string]bool{}
	for _, d := range docs {
		e, known := s.entries[d.ID]
		if !known {
			hold, isHold := s.entries[strings.TrimSuffix(d.ID, ":expire")]
			if !strings.HasSuffix(d.ID, ":expire") || !isHold || hold.Kind != journal.Pending {
				s.fatalf("the journal holds entry %s, which nobody recorded", d.ID)
			}
			e = journal.Entry{ID: d.ID, Kind: journal.Void, HoldRef: hold.ID, Legs: hold.Legs}
			s.entries[d.ID] = e
		}
		if d.Kind != e.Kind || d.HoldRef != e.HoldRef {
			s.fatalf("entry %s is stored as %s of %q, recorded as %s of %q", d.ID, d.Kind, d.HoldRef, e.Kind, e.HoldRef)
		}
		if d.State != journal.StateApplied && d.State != journal.StateRejected {
			s.fatalf("entry %s is still %s when no call is running and recovery is done", d.ID, d.State)
		}
		states[d.ID] = d.State
		if strings.HasPrefix(d.BusinessKey, "blocked by ") {
			if d.State != journal.StateRejected || d.Kind != journal.Pending {
				s.fatalf("blocked hold id %s is a %s entry, %s", d.ID, d.Kind, d.State)
			}
			blocked[d.ID] = true
		}
	}
	for id := range s.blocked {
		if !blocked[id] {
			s.fatalf("hold id %s was blocked by a void, now it is not", id)
		}
	}
	if strict {
		for id := range blocked {
			if !s.blocked[id] {
				s.fatalf("hold id %s is blocked, the oracle predicted no void of it", id)
			}
		}
	}
	s.blocked = blocked
	for id, was := range s.state {
		if now := states[id]; now != was {
			s.fatalf("entry %s went from %s to %q", id, was, now)
		}
	}
	if strict {
		for id, now := range states {
			if was := s.state[id]; now != was {
				s.fatalf("entry %s is %q, the oracle predicted %q", id, now, was)
			}
		}
	}
	s.state = states
	resolvedBy := map[string]string{}
	live := map[simAcct]journal.Counters{}
	for _, id := range slices.Sorted(maps.Keys(states)) {
		if states[id] != journal.StateApplied {
			continue
		}
		e := s.entries[id]
		if e.Kind == journal.Post || e.Kind == journal.Void {
			if s.state[e.HoldRef] != journal.StateApplied {
				s.fatalf("%s %s is applied on hold %s, which is %q", e.Kind, id, e.HoldRef, s.state[e.HoldRef])
			}
			if prev := resolvedBy[e.HoldRef]; prev != "" {
				s.fatalf("hold %s is resolved twice: by %s and by %s", e.HoldRef, prev, id)
			}
			resolvedBy[e.HoldRef] = id
		}
		for k, d := range simDeltas(e) {
			live[k] = live[k].Add(d)
		}
	}
	for h, by := range s.resolvedBy {
		if resolvedBy[h] != by {
			s.fatalf("hold %s was resolved by %s, now by %q", h, by, resolvedBy[h])
		}
	}
	if strict {
		for k, c := range live {
			if !c.Equal(s.live[k]) {
				s.fatalf("%s %s: the fold of applied entries is %s, the oracle predicted %s", k.holder, k.cur, c, s.live[k])
			}
		}
	}
	s.resolvedBy, s.live = resolvedBy, live
}

// check syncs the oracle, judges a concurrent batch's answers against the final states, and
// compares every account with the oracle; the reconciliation must be clean.
func (s *sim) check(strict bool, b *simBatch) {
	defer func(start time.Time) { s.inChecks += time.Since(start) }(time.Now())
	s.sync(strict)
	s.synced = len(s.holds)
	if b != nil {
		for _, o := range b.ops {
			s.judge(o, b)
		}
	}
	for _, h := range simHolders {
		acc, err := s.f.j.Accounts(s.ctx, h)
		if errors.Is(err, journal.ErrAccountNotFound) && !strings.HasPrefix(h, "W") {
			acc, err = nil, nil
		}
		if err != nil {
			s.fatalf("accounts of %s: %v", h, err)
		}
		for _, c := range simCurrencies {
			k := simAcct{h, c.code}
			got, want := acc[c.code], s.live[k]
			if !got.Equal(want) {
				s.fatalf("%s %s: counters %s, the oracle folds %s from the applied entries", h, c.code, got, want)
			}
			if policy(h).Constrained && got.Available().Sign() < 0 {
				s.fatalf("%s %s: available %s is negative", h, c.code, got.Available())
			}
		}
		for cur := range acc {
			if !slices.ContainsFunc(simCurrencies, func(c simCurrency) bool { return c.code == cur }) {
				s.fatalf("%s has an account in %s, which nobody used", h, cur)
			}
		}
	}
	s.checkCommitments()
	s.f.reconciled()
}

// checkCommitments checks, from the entries alone (not from counters), that no wallet ever
// committed more than came in: the transfers out and the holds not voided (open or posted)
// never exceed the deposits, transfers in and posted holds in.
func (s *sim) checkCommitments() {
	in, out := map[simAcct]amount.Amount{}, map[simAcct]amount.Amount{}
	for id, st := range s.state {
		e := s.entries[id]
		if st != journal.StateApplied || e.Kind == journal.Post || e.Kind == journal.Void {
			continue
		}
		resolution := s.entries[s.resolvedBy[id]].Kind
		for _, l := range e.Legs {
			k := simAcct{l.Holder, l.Currency}
			switch {
			case l.Side == journal.Debit && (e.Kind == journal.Single || resolution != journal.Void):
				out[k] = out[k].Add(l.Amount)
			case l.Side == journal.Credit && (e.Kind == journal.Single || resolution == journal.Post):
				in[k] = in[k].Add(l.Amount)
			}
		}
	}
	for k, o := range out {
		if policy(k.holder).Constrained && o.Cmp(in[k]) > 0 {
			s.fatalf("%s %s committed %s (transfers out, holds not voided) with only %s in", k.holder, k.cur, o, in[k])
		}
	}
}

// judge checks what a call of a concurrent batch answered against the final states: any
// interleaving may win, but every answer must be one the outcome agrees with.
func (s *sim) judge(o *simOp, b *simBatch) {
	ops, before, beforeBy := b.ops, b.before, b.beforeBy
	if o.crashed {
		return
	}
	bad := func(why string, args ...any) {
		s.t.Helper()
		s.failed(o.err, "%s answered %q: %s", o.describe(), o.outcome(), fmt.Sprintf(why, args...))
	}
	var exists *journal.ExistsError
	if o.recover {
		if o.err != nil {
			bad("a recovery pass beside runners must not fail")
		}
		return
	}
	if o.rec != nil {
		id := o.rec.ID
		was, final := before[id], s.state[id]
		others := 0 // other calls of the same entry in the batch
		for _, p := range ops {
			if p != o && p.rec != nil && !p.altered && p.rec.ID == id {
				others++
			}
		}
		// A refusal is recorded, so every answer is the entry's final outcome; a hold id a
		// void took answers ErrEntryExists.
		switch {
		case s.blocked[id]:
			if !errors.As(o.err, &exists) {
				bad("the hold id was taken by a void: want an ExistsError")
			}
		case o.altered:
			if !errors.As(o.err, &exists) || exists.Field != "legs[0].amount" {
				bad("want an ExistsError naming legs[0].amount")
			}
		case errors.As(o.err, &exists):
			bad("the same fields are no different entry")
		case o.err == nil:
			switch {
			case final != journal.StateApplied:
				bad("the entry ends %q", final)
			case was == journal.StateApplied && !o.res.Replayed:
				bad("the entry was applied before: want a replay")
			case was == "" && o.res.Replayed && others == 0:
				bad("nobody applied it before")
			}
		case errors.Is(o.err, journal.ErrInsufficient):
			if final != journal.StateRejected {
				bad("the entry ends %q", final)
			}
		default:
			bad("unexpected error")
		}
		return
	}
	hold := s.entries[o.hold]
	by, wasBy := s.resolvedBy[o.hold], beforeBy[o.hold]
	expiredNow := hold.Kind == journal.Pending && expired(hold, b.now)
	switch {
	case o.nonHold:
		if !errors.Is(o.err, journal.ErrHoldNotFound) {
			bad("want ErrHoldNotFound")
		}
	case o.altered:
		if !errors.As(o.err, &exists) || exists.Field != "kind" {
			bad("want an ExistsError naming the kind")
		}
	case errors.As(o.err, &exists):
		bad("the same fields are no different entry")
	case o.err == nil:
		switch {
		case s.state[o.id] != journal.StateApplied || by != o.id:
			bad("the hold ends resolved by %q, %s is %q", by, o.id, s.state[o.id])
		case wasBy != "" && wasBy != o.id:
			bad("the hold was resolved by %s before", wasBy)
		case o.kind == journal.Post && expiredNow && wasBy != o.id:
			bad("a post after the hold's expiry")
		case before[o.id] == journal.StateApplied && !o.res.Replayed:
			bad("the resolution was applied before: want a replay")
		}
	case errors.Is(o.err, journal.ErrHoldNotFound):
		if before[o.hold] == journal.StateApplied {
			bad("the hold was applied before the batch")
		}
		if o.kind == journal.Void && s.state[o.hold] == "" {
			bad("a void of a hold never recorded must take its id")
		}
	case errors.Is(o.err, journal.ErrHoldAlreadyPosted):
		if by == "" || by == o.id || s.entries[by].Kind != journal.Post || strings.HasSuffix(by, ":expire") {
			bad("the hold ends resolved by %q", by)
		}
	case errors.Is(o.err, journal.ErrHoldAlreadyVoided):
		if by == "" || by == o.id || s.entries[by].Kind != journal.Void || strings.HasSuffix(by, ":expire") {
			bad("the hold ends resolved by %q", by)
		}
	case errors.Is(o.err, journal.ErrHoldExpired):
		if !(o.kind == journal.Post && expiredNow) && !strings.HasSuffix(by, ":expire") {
			bad("the hold is not expired and ends resolved by %q", by)
		}
	default:
		bad("unexpected error")
	}
}

// checkHoldStates compares what the journal says of each hold the operations touched with
// the oracle: after recovery, a hold claimed by a resolution carries that resolution applied.
func (s *sim) checkHoldStates(ops []*simOp) {
	seen := map[string]bool{}
	for _, o := range ops {
		h := o.hold
		if o.rec != nil && o.rec.Kind == journal.Pending {
			h = o.rec.ID
		}
		if h == "" || seen[h] || o.nonHold {
			continue
		}
		seen[h] = true
		s.checkHoldState(h)
	}
}

func (s *sim) checkHoldState(h string) {
	state, by, err := s.f.j.HoldState(s.ctx, h)
	if err != nil {
		s.fatalf("hold state of %s: %v", h, err)
	}
	wantState, wantBy := "", ""
	if s.state[h] == journal.StateApplied {
		wantState = "open"
		if rb := s.resolvedBy[h]; rb != "" {
			wantState, wantBy = string(s.entries[rb].Kind), rb
		}
	}
	if state != wantState || by != wantBy {
		s.fatalf("hold %s (%s, expires %v) is %q by %q after recovery; the applied entries say %q by %q",
			h, s.state[h], s.entries[h].ExpiresAt, state, by, wantState, wantBy)
	}
}

// finish converges everything, then checks every hold and every account's history.
func (s *sim) finish() {
	time.Sleep(30 * time.Millisecond)
	s.recoverAll(s.rng.IntN(2) == 0)
	s.check(false, nil)
	for _, h := range s.holds {
		s.checkHoldState(h)
		if hold := s.entries[h]; s.state[h] == journal.StateApplied && expired(hold, s.f.now) && s.resolvedBy[h] == "" {
			s.fatalf("hold %s expired at %s and is still open after recovery at %s", h, hold.ExpiresAt.Format("15:04:05"), s.f.now.Format("15:04:05"))
		}
	}
	for _, h := range simHolders {
		s.checkHistory(h)
	}
}

// checkHistory pages through a holder's statement: ordered postings whose deltas fold
// to each recorded balance after and to the counters, each applied entry once, each
// rejected one undone.
func (s *sim) checkHistory(h string) {
	var rows []journal.Posting
	after := int64(0)
	for {
		page, err := s.f.j.History(s.ctx, journal.HistoryQuery{Holder: h, AfterSeq: after, Limit: 50})
		if err != nil {
			s.fatalf("history of %s: %v", h, err)
		}
		if len(page) == 0 {
			break
		}
		rows = append(rows, page...)
		after = page[len(page)-1].Seq
	}
	fold := map[string]journal.Counters{}
	keys := map[string]int{}
	seq := int64(0)
	for _, p := range rows {
		// A posting of two currencies is two rows of one sequence number; a block (an
		// entry's compensation marker written where it was refused) changes nothing and has
		// no row, hence gaps.
		switch {
		case p.Seq > seq:
			seq = p.Seq
			keys[p.Entry]++
		case p.Seq < seq:
			s.fatalf("%s's history goes back from posting %d to %d", h, seq, p.Seq)
		}
		fold[p.Currency] = fold[p.Currency].Add(p.Delta)
		if !fold[p.Currency].Equal(p.After) {
			s.fatalf("%s %s posting %d (%s): after %s, the fold of the history is %s", h, p.Currency, p.Seq, p.Entry, p.After, fold[p.Currency])
		}
	}
	for _, c := range simCurrencies {
		if want := s.live[simAcct{h, c.code}]; !fold[c.code].Equal(want) {
			s.fatalf("%s %s: the history folds to %s, the oracle to %s", h, c.code, fold[c.code], want)
		}
	}
	for id, st := range s.state {
		touches := slices.ContainsFunc(s.entries[id].Legs, func(l journal.Leg) bool { return l.Holder == h })
		own, undo := keys[id], keys[id+"~"]
		switch {
		case !touches && own+undo > 0:
			s.fatalf("%s's history carries %s, which has no leg there", h, id)
		case st == journal.StateApplied && touches && (own != 1 || undo != 0):
			s.fatalf("%s's history carries applied entry %s %d times and its compensation %d times", h, id, own, undo)
		case st == journal.StateRejected && (own > 1 || undo > 1 || own > undo):
			s.fatalf("%s's history carries rejected entry %s %d times and its compensation %d times", h, id, own, undo)
		}
		delete(keys, id)
		delete(keys, id+"~")
	}
	if len(keys) > 0 {
		s.fatalf("%s's history carries entries the journal does not hold: %v", h, slices.Sorted(maps.Keys(keys)))
	}
}
