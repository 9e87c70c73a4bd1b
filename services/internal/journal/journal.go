// Package journal is the suite's double-entry ledger, one per service on its own database
// (trading's wallets, custody's wallets). Every balance change is an immutable entry whose
// legs balance per currency; an account is a (holder, currency) pair whose four counters
// (debits and credits, pending and posted) live in the holder's document together with a
// version, a posting sequence and a bounded list of markers of the entries applied there.
//
// Without multi-document transactions (the embedded database has none), an entry and the
// balances agree through this protocol (docs/decisions.md, "Journal"):
//
//  1. the entry is inserted under its deterministic id (a unique _id: a retry is the same
//     entry; the same id with other fields is refused; an id that failed stays failed);
//  2. its legs are aggregated per holder, and each holder document takes one
//     version-guarded update that changes its counters and pushes the entry's marker, so a
//     balance change and "entry E is applied here" are one atomic write; holders whose
//     available balance falls are updated first, so a refusal comes before any money
//     appears elsewhere, and is undone by compensating updates (marker E~);
//  3. the entry is marked applied; history rows are copied from the markers, which are
//     pruned only once their entry is final and their row exists.
//
// Holds are two-phase: a Pending entry reserves funds (limits are checked then); it is
// resolved at most once, by inserting one resolution document under the hold's id, then a
// Post or Void entry that mirrors its legs and can never fail on funds. Every step is
// idempotent, so a retry, a concurrent runner and the recovery pass (Recover) all converge.
package journal

import (
	"context"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Defaults of Config.
const (
	DefaultMaxLegs     = 2048
	DefaultMaxMarkers  = 64
	DefaultMaxAttempts = 200
	defaultPrefix      = "journal"
)

// HolderPolicy says where a holder's document lives and how its accounts behave.
type HolderPolicy struct {
	// Collection holds the holder's document (a wallet collection, or the journal's own
	// system accounts collection).
	Collection string
	// Create makes the document on first use (system and clearing accounts); otherwise a
	// missing holder refuses the entry (ErrAccountNotFound).
	Create bool
	// Constrained accounts never let their available balance fall below zero (customer
	// wallets, venue wallets, clearing accounts); unconstrained ones are the world outside
	// (deposits, withdrawals in flight).
	Constrained bool
}

// Config configures a journal.
type Config struct {
	DB *mongo.Database
	// Prefix names the journal's collections: <prefix>_entries, _resolutions, _history,
	// _accounts (the system accounts). Default "journal".
	Prefix string
	// Policy classifies a holder id.
	Policy func(holder string) HolderPolicy
	// Collections lists every collection holding account documents besides the journal's
	// own system accounts collection (for reconciliation).
	Collections []string
	// MaxLegs bounds an entry; MaxMarkers a holder's marker list; MaxAttempts the optimistic
	// retries of one holder update.
	MaxLegs, MaxMarkers, MaxAttempts int
	// Now is the clock.
	Now func() time.Time
	// Lease is how long a runner holds an entry without renewing it (DefaultLease when 0):
	// the recovery pass resumes an entry only once its lease has run out (lease.go).
	Lease time.Duration
	// Step, when set, is called around every database call of the journal (store.go): before
	// it, and after a write that returned without error. An error before is the call's
	// error; an error after replaces the write's answer (the write happened). The seeded
	// checker stops runners, loses answers and interleaves runners with it. Nil in service.
	Step func(ctx context.Context, op Op) error
	// EventEntity, when set, is the entity type of the events an applied entry stages for
	// each company whose accounts it changed (events.go); empty stages none.
	EventEntity string
}

// Journal records and applies entries.
type Journal struct {
	cfg                                  Config
	entries, resolutions, history, accts coll
	// Counts of Stats.
	runs, stateReads, holderWrites, conflicts atomic.Int64
}

// New returns a journal on cfg.DB; call EnsureIndexes before use.
func New(cfg Config) *Journal {
	if cfg.Prefix == "" {
		cfg.Prefix = defaultPrefix
	}
	if cfg.MaxLegs <= 0 {
		cfg.MaxLegs = DefaultMaxLegs
	}
	if cfg.MaxMarkers <= 0 {
		cfg.MaxMarkers = DefaultMaxMarkers
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	j := &Journal{cfg: cfg}
	j.entries, j.resolutions = j.collection(cfg.Prefix+"_entries"), j.collection(cfg.Prefix+"_resolutions")
	j.history, j.accts = j.collection(cfg.Prefix+"_history"), j.collection(cfg.Prefix+"_accounts")
	if j.cfg.Policy == nil {
		j.cfg.Policy = func(string) HolderPolicy { return HolderPolicy{Collection: j.accts.Name(), Create: true} }
	}
	return j
}

// SystemCollection is the collection of system accounts (policy Collection for them).
func (j *Journal) SystemCollection() string { return j.accts.Name() }

// Indexes are the indexes behind every query of the journal whose collections prefix names
// (Config.Prefix, "journal" when empty).
func Indexes(prefix string) []mongodb.Index {
	if prefix == "" {
		prefix = defaultPrefix
	}
	entries, resolutions, history := prefix+"_entries", prefix+"_resolutions", prefix+"_history"
	return []mongodb.Index{
		// Entries left recorded or compensating (few), for the recovery pass (whose runner's
		// lease ran out, oldest first) and for reconciliation.
		{Collection: entries, Name: "state_created", Keys: mongodb.Keys("state", "createdAt")},
		{Collection: entries, Name: "business_created", Keys: mongodb.Keys("businessKey", "createdAt")},
		// Entries changed lately, for reconciliation while entries move.
		{Collection: entries, Name: "updated", Keys: mongodb.Keys("updatedAt")},
		// Open holds with an expiry (the field is removed when the hold is resolved).
		{Collection: entries, Name: "open_until", Keys: mongodb.Keys("openUntil"), Sparse: true},
		{Collection: resolutions, Name: "state_at", Keys: mongodb.Keys("state", "at")},
		// A holder's statement, paged by its posting sequence, of every business object or
		// of one; an account's last posting at or before a time, for its balance then
		// (BalancesAt: per currency, read backwards by time then sequence).
		{Collection: history, Name: "holder_seq", Keys: mongodb.Keys("holder", "seq"), Unique: true},
		{Collection: history, Name: "holder_business_seq", Keys: mongodb.Keys("holder", "businessKey", "seq")},
		{Collection: history, Name: "holder_cur_at", Keys: mongodb.Keys("holder", "p.cur", "at", "seq")},
		{Collection: history, Name: "entry_holder", Keys: mongodb.Keys("entry", "holder")},
		// Applied entries whose events the relay has not handed over yet.
		outbox.Index(entries),
	}
}

// EnsureIndexes creates the journal's Indexes.
func (j *Journal) EnsureIndexes(ctx context.Context) error {
	return mongodb.EnsureIndexes(ctx, j.cfg.DB, Indexes(j.cfg.Prefix))
}

func (j *Journal) now() time.Time { return j.cfg.Now().UTC().Truncate(time.Millisecond) }

func (j *Journal) holderCollection(holder string) (coll, HolderPolicy) {
	p := j.cfg.Policy(holder)
	if p.Collection == "" {
		p.Collection = j.accts.Name()
	}
	return j.collection(p.Collection), p
}
