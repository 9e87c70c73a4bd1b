// Package journalcost measures what a journal entry of trading's ledger costs (DESIGN.md §9:
// an entry costs one update per account it touches). It records PAY_IN's hold as interchange
// sends it (services/interchange/settlement/funds.go, holdPayIn: each payer's share debited,
// the settlement's clearing account credited with the total, one entry) with one leg, with N
// legs on one wallet and with one leg on each of N wallets, and times N single account updates
// on those N wallets for comparison.
//
// Everything runs in the bench's process against the bench's database server, through
// trading's real ledger handler (services/trading/server.Ledger.RecordEntry, the method
// interchange calls over gRPC, without the transport) over trading's real store and journal.
// The handler is the way in because the journal's types are internal to the services module:
// the bench cannot build a journal.Entry for store.RecordEntry itself. The store works on a
// database of its own (Database), emptied at the start of each run: the holds it leaves open
// and its wallets stay out of the services' trading database, and on the embedded FerretDB,
// where every update reads the whole collection, its wallets collection holds only its own
// N+1 wallets.
package journalcost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
	tradingserver "github.com/zcustody/suite/services/trading/server"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// The scenario's data: its own database, wallets at a venue of their own, one currency.
const (
	// Database is the scenario's database (a trading store's collections), on the bench's
	// server.
	Database = "bench_journal"
	Venue    = "BENCH-JOURNAL"
	Currency = "BTC"
	// DefaultLegs is N, the legs of the large entries (BENCH_LEGS).
	DefaultLegs = 1000
	// MaxLegs is the largest N: a PAY_IN on N wallets has N debit legs and the clearing credit,
	// and an entry has at most trading.MaxLegsPerEntry legs.
	MaxLegs = trading.MaxLegsPerEntry - 1
	// Reps is how many times each small entry is measured (after one unmeasured warm-up
	// each), and at most how many times the large pair is.
	Reps = 5
	// LargeBudget bounds the repetitions of the large pair (the PAY_IN on N wallets and the N
	// single updates): another pair is measured only while the pairs so far took less. On the
	// embedded database one pair takes minutes, so it is measured once.
	LargeBudget = 30 * time.Second
)

// Amounts, in whole BTC: each leg of a PAY_IN holds share; the single wallet and each of the N
// wallets are funded with enough for every repetition.
const (
	share      = 1
	fundOneBy  = Reps + 1 // repetitions of each small entry, warm-up included
	fundEachBy = Reps
)

// Result is one run of the scenario.
type Result struct {
	// Legs is N.
	Legs int
	// Funding is the one entry that funded the N wallets: N credits from world:deposits
	// (setup, not a target; another N-account entry, for scale).
	Funding Measurement
	// OneLeg: PAY_IN with one wallet leg and the clearing credit.
	OneLeg Measurement
	// OneWallet: PAY_IN with N debit legs on the same wallet and the clearing credit (the
	// journal aggregates the legs into one update of that wallet).
	OneWallet Measurement
	// Wallets: PAY_IN with one debit leg on each of the N wallets and the clearing credit.
	Wallets Measurement
	// Updates: N single account updates on those N wallets, one after another; UpdateWrites
	// the part of each run spent in the version-guarded UpdateOne calls (the rest is the reads).
	Updates      Measurement
	UpdateWrites []time.Duration
}

// Measurement is one operation's measured runs.
type Measurement struct {
	// Runs holds one duration per measured run.
	Runs []time.Duration
	// Commands are the database commands of one run (the last; every run sends the same).
	Commands Commands
}

// Median is the median of the runs.
func (m Measurement) Median() time.Duration { return Median(m.Runs) }

// add appends a run and its commands.
func (m *Measurement) add(d time.Duration, c Commands) {
	m.Runs = append(m.Runs, d)
	m.Commands = c
}

// Median is the median of ds (the mean of the middle two for an even count; 0 for none).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Commands are database commands by name and collection ("update wallets"; getMore has no
// collection), with how many were sent and their round trips' total time as the driver saw it.
type Commands map[string]Command

// Command is how many commands of one kind were sent, and their total time.
type Command struct {
	N    int
	Time time.Duration
}

// Count is how many commands named name were sent, on any collection.
func (c Commands) Count(name string) int {
	n := 0
	for key, cmd := range c {
		if key == name || strings.HasPrefix(key, name+" ") {
			n += cmd.N
		}
	}
	return n
}

// Keys lists the commands, the most frequent first (then by name).
func (c Commands) Keys() []string {
	keys := slices.Collect(maps.Keys(c))
	slices.SortFunc(keys, func(a, b string) int {
		if c[a].N != c[b].N {
			return c[b].N - c[a].N
		}
		return strings.Compare(a, b)
	})
	return keys
}

// String lists the counts by command name, largest first: "find 2006, update 1002, insert 3".
func (c Commands) String() string {
	byName := Commands{}
	for key, cmd := range c {
		name, _, _ := strings.Cut(key, " ")
		byName[name] = Command{N: byName[name].N + cmd.N}
	}
	keys := byName.Keys()
	parts := make([]string, 0, len(keys))
	for _, name := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", name, byName[name].N))
	}
	return strings.Join(parts, ", ")
}

// counter records the commands the scenario's client sends (a command monitor).
type counter struct {
	mu      sync.Mutex
	pending map[int64]string // request id → key
	done    Commands
}

func newCounter() *counter { return &counter{pending: map[int64]string{}, done: Commands{}} }

func (c *counter) monitor() *event.CommandMonitor {
	finished := func(id int64, d time.Duration) {
		c.mu.Lock()
		defer c.mu.Unlock()
		key, ok := c.pending[id]
		if !ok {
			return
		}
		delete(c.pending, id)
		cmd := c.done[key]
		c.done[key] = Command{N: cmd.N + 1, Time: cmd.Time + d}
	}
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			key := e.CommandName
			if col, ok := e.Command.Lookup(e.CommandName).StringValueOK(); ok {
				key += " " + col
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			c.pending[e.RequestID] = key
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) { finished(e.RequestID, e.Duration) },
		Failed:    func(_ context.Context, e *event.CommandFailedEvent) { finished(e.RequestID, e.Duration) },
	}
}

// since returns the commands finished since the snapshot before.
func (c *counter) since(before Commands) Commands {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Commands{}
	for key, cmd := range c.done {
		if n := cmd.N - before[key].N; n > 0 {
			out[key] = Command{N: n, Time: cmd.Time - before[key].Time}
		}
	}
	return out
}

func (c *counter) snapshot() Commands { return c.since(nil) }

// Options configure a run.
type Options struct {
	// Legs is N (1 < N ≤ MaxLegs).
	Legs int
	// Say reports progress; nil is quiet.
	Say func(format string, args ...any)
}

// Run measures the scenario on the server at uri, in Database.
func Run(ctx context.Context, uri string, opts Options) (Result, error) {
	if opts.Legs < 2 || opts.Legs > MaxLegs {
		return Result{}, fmt.Errorf("journal scenario: want 2 ≤ legs ≤ %d, got %d", MaxLegs, opts.Legs)
	}
	if opts.Say == nil {
		opts.Say = func(string, ...any) {}
	}
	// The services' client options, and a monitor that records the commands.
	cmds := newCounter()
	client, err := mongo.Connect(mongodb.ClientOptions(uri).SetMonitor(cmds.monitor()))
	if err != nil {
		return Result{}, fmt.Errorf("journal scenario: connect: %w", err)
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	if err := client.Ping(ctx, nil); err != nil {
		return Result{}, fmt.Errorf("journal scenario: ping: %w", err)
	}
	db := client.Database(Database)
	if err := db.Drop(ctx); err != nil {
		return Result{}, fmt.Errorf("journal scenario: empty %s: %w", Database, err)
	}
	st := tradingstore.New(db)
	if err := st.EnsureIndexes(ctx); err != nil {
		return Result{}, err
	}
	r := &runner{n: opts.Legs, say: opts.Say, run: runID(), ledger: tradingserver.NewLedger(st), wallets: db.Collection("wallets"), cmds: cmds,
		ctx: principal.NewContext(ctx, principal.Principal{Kind: principal.KindSystem, System: tradingserver.MovementSystem,
			Issuer: tradingserver.MovementSystem})}
	return r.measure(db)
}

// runner holds one run's state.
type runner struct {
	n       int
	say     func(format string, args ...any)
	run     string // makes this run's entry ids and clearing accounts unique
	ledger  *tradingserver.Ledger
	wallets *mongo.Collection
	cmds    *counter
	// ctx carries interchange's principal, which the ledger API requires.
	ctx context.Context
}

func (r *runner) measure(db *mongo.Database) (Result, error) {
	res := Result{Legs: r.n}
	many := make([]string, r.n)
	wallets := []trading.Wallet{wallet(OneWalletID())}
	for i := range r.n {
		many[i] = ManyWalletID(i)
		wallets = append(wallets, wallet(many[i]))
	}
	r.say("journal: %d wallets at venue %s; funding them (one entry of %d credits from %s)", r.n+1, Venue, r.n, trading.WorldDeposits)
	if err := data.InsertWallets(r.ctx, db, wallets); err != nil {
		return res, err
	}
	if _, _, err := r.record(fund(r.entryID("fund-one"), []string{OneWalletID()}, fundOneBy*(r.n+1))); err != nil {
		return res, err
	}
	d, c, err := r.record(fund(r.entryID("fund-many"), many, fundEachBy*share))
	if err != nil {
		return res, err
	}
	res.Funding.add(d, c)
	r.say("journal: funded %d wallets in one entry in %s", r.n, d.Round(time.Millisecond))

	one := []string{OneWalletID()}
	sameN := slices.Repeat(one, r.n)
	// One unmeasured warm-up of each, then the two small entries alternately, so that any
	// drift (a growing entries collection) falls on both alike.
	for rep := range Reps + 1 {
		d1, c1, err := r.record(PayIn(r.trackingID("one", rep), one, share))
		if err != nil {
			return res, err
		}
		dn, cn, err := r.record(PayIn(r.trackingID("same", rep), sameN, share))
		if err != nil {
			return res, err
		}
		if rep == 0 {
			continue
		}
		res.OneLeg.add(d1, c1)
		res.OneWallet.add(dn, cn)
		r.say("journal: PAY_IN 1 leg %s; %d legs on one wallet %s", d1.Round(time.Millisecond), r.n, dn.Round(time.Millisecond))
	}

	// The baseline first in each pair: the PAY_IN adds a marker to every wallet, so the
	// documents the next baseline reads and writes are larger (not the other way round: the
	// baseline writes the same fields back).
	var spent time.Duration
	for rep := 0; rep < Reps && (rep == 0 || spent < LargeBudget); rep++ {
		du, writes, cu, err := r.updateEach(many)
		if err != nil {
			return res, err
		}
		res.Updates.add(du, cu)
		res.UpdateWrites = append(res.UpdateWrites, writes)
		r.say("journal: %d single account updates %s (of it the guarded updates %s)", r.n, du.Round(time.Millisecond), writes.Round(time.Millisecond))
		dw, cw, err := r.record(PayIn(r.trackingID("many", rep), many, share))
		if err != nil {
			return res, err
		}
		res.Wallets.add(dw, cw)
		r.say("journal: PAY_IN on %d wallets %s", r.n, dw.Round(time.Millisecond))
		spent += dw + du
	}
	return res, nil
}

// record sends one entry through trading's ledger handler and times it; anything but a fresh
// application is an error. It returns the time and the database commands sent.
func (r *runner) record(req *tradingv1.RecordEntryRequest) (time.Duration, Commands, error) {
	before := r.cmds.snapshot()
	start := time.Now()
	resp, err := r.ledger.RecordEntry(r.ctx, req)
	took := time.Since(start)
	cmds := r.cmds.since(before)
	if err != nil {
		return took, cmds, fmt.Errorf("journal scenario: entry %s (after %s): %w", req.GetEntryId(), took.Round(time.Millisecond), err)
	}
	if resp.GetOutcome() != tradingv1.EntryOutcome_ENTRY_OUTCOME_APPLIED {
		return took, cmds, fmt.Errorf("journal scenario: entry %s answered %s (account %s)", req.GetEntryId(), resp.GetOutcome(), resp.GetAccount())
	}
	return took, cmds, nil
}

// updateEach is the baseline: one account update per wallet, one after another, the simplest
// correct way without the journal: read the document's account and version by _id, then one
// version-guarded UpdateOne({_id, ledgerVersion: v}, {$set: the account, ledgerVersion: v+1}),
// which must match. It writes each account back as it read it (a real write: the version
// changes), so the balances stay what the journal recorded and the ledger still reconciles.
// It returns the whole time, the part spent in the UpdateOne calls, and the commands sent.
func (r *runner) updateEach(ids []string) (total, writes time.Duration, cmds Commands, err error) {
	before := r.cmds.snapshot()
	start := time.Now()
	for _, id := range ids {
		var doc struct {
			Accounts bson.Raw `bson:"accounts"`
			Version  int64    `bson:"ledgerVersion"`
		}
		err := r.wallets.FindOne(r.ctx, bson.D{{Key: "_id", Value: id}},
			options.FindOne().SetProjection(bson.D{{Key: "accounts", Value: 1}, {Key: "ledgerVersion", Value: 1}})).Decode(&doc)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("journal scenario: read %s: %w", id, err)
		}
		account, err := doc.Accounts.LookupErr(Currency)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("journal scenario: %s has no %s account: %w", id, Currency, err)
		}
		set := bson.D{{Key: "accounts." + Currency, Value: account}, {Key: "ledgerVersion", Value: doc.Version + 1}}
		w := time.Now()
		res, err := r.wallets.UpdateOne(r.ctx, bson.D{{Key: "_id", Value: id}, {Key: "ledgerVersion", Value: doc.Version}},
			bson.D{{Key: "$set", Value: set}})
		writes += time.Since(w)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("journal scenario: update %s: %w", id, err)
		}
		if res.MatchedCount != 1 {
			return 0, 0, nil, fmt.Errorf("journal scenario: update %s: %w", id, errConflict)
		}
	}
	total = time.Since(start)
	return total, writes, r.cmds.since(before), nil
}

// errConflict is a version-guarded update that matched nothing: something else wrote the
// wallet meanwhile (nothing should, while the scenario runs).
var errConflict = errors.New("the wallet's version moved under the update")

// PayIn is PAY_IN's hold as interchange builds it (holdPayIn): one debit leg of share per
// payer, in order (a wallet may repeat), then the settlement's clearing account credited with
// the total, under the settlement's PAY_IN entry id.
func PayIn(trackingID string, payers []string, share int) *tradingv1.RecordEntryRequest {
	legs := make([]*tradingv1.JournalLeg, 0, len(payers)+1)
	for _, w := range payers {
		legs = append(legs, &tradingv1.JournalLeg{CompanyId: data.Company, Account: w, Currency: Currency,
			Side: tradingv1.LegSide_LEG_SIDE_DEBIT, Amount: strconv.Itoa(share)})
	}
	legs = append(legs, &tradingv1.JournalLeg{Account: trading.ClearingPrefix + trackingID, Currency: Currency,
		Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: strconv.Itoa(share * len(payers))})
	return &tradingv1.RecordEntryRequest{EntryId: "stl:" + trackingID + ":payin:1", Kind: tradingv1.EntryKind_ENTRY_KIND_HOLD,
		Legs: legs, Code: "settlement.payin", BusinessKey: trackingID}
}

// fund credits each wallet with each from the world outside, in one entry.
func fund(id string, wallets []string, each int) *tradingv1.RecordEntryRequest {
	legs := []*tradingv1.JournalLeg{{Account: trading.WorldDeposits, Currency: Currency, Side: tradingv1.LegSide_LEG_SIDE_DEBIT,
		Amount: strconv.Itoa(each * len(wallets))}}
	for _, w := range wallets {
		legs = append(legs, &tradingv1.JournalLeg{CompanyId: data.Company, Account: w, Currency: Currency,
			Side: tradingv1.LegSide_LEG_SIDE_CREDIT, Amount: strconv.Itoa(each)})
	}
	return &tradingv1.RecordEntryRequest{EntryId: id, Kind: tradingv1.EntryKind_ENTRY_KIND_TRANSFER, Legs: legs,
		Code: "bench.fund", BusinessKey: id}
}

// OneWalletID is the wallet of the small entries; ManyWalletID(i) the i-th of the N wallets.
func OneWalletID() string       { return data.Company + "-TW-JS00000000" }
func ManyWalletID(i int) string { return fmt.Sprintf("%s-TW-JN%08d", data.Company, i) }

func wallet(id string) trading.Wallet {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return trading.Wallet{ID: id, VenueID: Venue, Name: "Bench journal wallet " + id, Status: trading.StatusActive,
		CompanyID: data.Company, Currency: Currency, CustomProperties: `{}`, CreatedBy: data.Maker, CreatedAt: created,
		UpdatedAt: created, Version: 1, RequestID: "BENCH-JOURNAL"}
}

// runID is unique per run (a re-run on the same MongoDB must not replay earlier entries):
// the time to the second and 8 random hex digits.
func runID() string {
	return time.Now().UTC().Format("20060102T150405") + "-" + uuid.NewString()[:8]
}

// trackingID is a settlement tracking id of this run; its clearing account is
// clearing:<trackingID> (at most 64 characters of [A-Za-z0-9._-]).
func (r *runner) trackingID(what string, rep int) string {
	return fmt.Sprintf("bench-%s-%s-%d", r.run, what, rep)
}

func (r *runner) entryID(what string) string { return "bench:" + r.run + ":" + what }
