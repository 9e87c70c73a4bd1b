package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/zcustody/suite/services/internal/amount"
)

// Corrections, never edits. An applied entry is never changed; a mistake is corrected by a
// reversal: a new Single entry that names the entry it reverses (Entry.Reverses) and whose
// legs are the original's with their sides swapped, for at most the original's amounts. An
// entry may be reversed in parts by several reversals, and in total each of its accounts
// gets back at most what the original moved there.
//
// The total is guarded without multi-document transactions by one allowance document per
// original, <prefix>_reversals under the original's id, holding the claims of its reversals
// (each: the reversal's id, fingerprint and legs). A reversal is recorded in three steps:
//
//  1. its id is checked free or its own (as a resolution checks before claiming a hold);
//  2. it claims its amounts: the allowance document is read, the claims' totals plus the
//     new amounts are checked against the original per account, and the claim is appended
//     by one update guarded by the document's version (the first claim inserts the
//     document under the original's unique _id). Of two reversals that together exceed the
//     original, both read the same version; one write matches, the other matches nothing,
//     reads again, sees the first claim and is refused (ErrReversalExceeds). Nothing else
//     is needed: a single-document conditional update is atomic on every engine;
//  3. the reversal entry is recorded and applied like any entry (storedOrNew, then its
//     runner). It can fail on funds (the money it takes back may be spent): the entry is
//     then rejected for good (an id that failed stays failed) and its claim is released,
//     which is safe because a rejected entry never applies.
//
// A claim thus always precedes its entry, and an entry applied always has its claim: the
// claims' totals never fall below what was reversed, so the total reversed never exceeds
// the original. A claim can outlive its purpose (its entry rejected, or its runner stopped
// between claim and entry); it then holds back allowance, never money. A retry of the same
// id finishes or releases it, and a reversal that would otherwise be refused first clears
// claims whose entry was rejected, or that never got their entry within a lease, after
// blocking their id (a rejected entry without legs under it, as a void blocks a hold never
// placed), so that a late runner of such a claim can no longer record it.

// Errors of reversals, refusals a caller answers with a 4xx.
var (
	// ErrEntryNotFound: no entry is recorded under the id to reverse.
	ErrEntryNotFound = errors.New("entry not found")
	// ErrNotReversible: the entry is not an applied single or post entry.
	ErrNotReversible = errors.New("entry cannot be reversed")
	// ErrReversalExceeds: the reversals of an entry would give back more than it moved on
	// one of its accounts.
	ErrReversalExceeds = errors.New("reversal exceeds the original entry")
)

// MaxReversals bounds the reversals of one entry (the claims its allowance document keeps).
const MaxReversals = 100

// reversalsDoc is the allowance document of one original entry.
type reversalsDoc struct {
	ID      string          `bson:"_id"` // the original's id
	Version int64           `bson:"v"`
	Claims  []reversalClaim `bson:"claims"`
}

// reversalClaim is one reversal's claim on its original's allowance.
type reversalClaim struct {
	By string    `bson:"by"`
	FP string    `bson:"fp"`
	At time.Time `bson:"at"`
	// Legs are the reversal's own legs (sides already swapped).
	Legs []legDoc `bson:"legs"`
}

func (j *Journal) reversals() coll { return j.collection(j.cfg.Prefix + "_reversals") }

// Reverse records and applies, at most once under the entry id, the reversal of the entry
// originalID: a Single entry naming it (Reverses), with the original's legs, sides swapped,
// business key kept, and code as its code. amounts names, per account of the original
// (holder and currency, and the original's side when the account is on both), the amount
// given back; nil reverses the original in full. An account it does not name gives back
// nothing; what it gives back must balance per currency (ErrUnbalanced). Only applied
// Single and Post entries can be reversed (ErrNotReversible; ErrEntryNotFound for an id
// never recorded); a partial post gives back what it posted. In total across all its
// reversals, no account of the original gets back more than the original moved there
// (ErrReversalExceeds), however many reversals race. A lack of funds is recorded as for any
// entry (*InsufficientError), and frees the allowance it claimed. A retry under id answers
// the stored outcome; other fields under id are an *ExistsError.
func (j *Journal) Reverse(ctx context.Context, id, originalID string, amounts []Leg, code string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, MaxRun)
	defer cancel()
	e, orig, err := j.planReversal(ctx, id, originalID, amounts, code)
	if err != nil {
		return Result{}, err
	}
	// The allowance is claimed only once e's id is known to be free or e's own.
	if stored, found, err := j.lookup(ctx, id); err != nil {
		return Result{}, err
	} else if found {
		return j.continueReversal(ctx, e, stored)
	}
	if err := j.claimReversal(ctx, e, orig); err != nil {
		return Result{}, err
	}
	stored, fresh, err := j.storedOrNew(ctx, e)
	if err != nil {
		return Result{}, err
	}
	if !fresh {
		return j.continueReversal(ctx, e, stored)
	}
	err = j.runHeld(ctx, e, stored.Runner, StateRecorded, nil)
	if errors.Is(err, ErrInsufficient) {
		return Result{}, errors.Join(err, j.releaseReversal(ctx, orig.ID, e.ID))
	}
	return Result{}, err
}

// continueReversal answers a reversal whose id is taken: by another entry (refused, and a
// claim of e under the id released), or by e itself (its outcome; a rejection releases its
// claim).
func (j *Journal) continueReversal(ctx context.Context, e Entry, stored entryDoc) (Result, error) {
	if stored.Fingerprint != e.fingerprint() {
		var mine bool
		if claims, err := j.readReversals(ctx, e.Reverses); err == nil {
			c, ok := claims.claim(e.ID)
			mine = ok && c.FP == e.fingerprint()
		}
		var release error
		if mine {
			release = j.releaseReversal(ctx, e.Reverses, e.ID)
		}
		_, err := j.continueStored(ctx, e, stored, nil)
		return Result{}, errors.Join(err, release)
	}
	res, err := j.continueStored(ctx, e, stored, nil)
	if errors.Is(err, ErrInsufficient) {
		return Result{}, errors.Join(err, j.releaseReversal(ctx, e.Reverses, e.ID))
	}
	return res, err
}

// PlanReversal returns the reversal Reverse would record of originalID for amounts (its ID
// left empty), or its refusal, checked against the reversals claimed so far. It writes
// nothing: a service checks a request with it before anyone approves it.
func (j *Journal) PlanReversal(ctx context.Context, originalID string, amounts []Leg, code string) (Entry, error) {
	e, orig, err := j.planReversal(ctx, "", originalID, amounts, code)
	if err != nil {
		return Entry{}, err
	}
	doc, err := j.readReversals(ctx, orig.ID)
	if err != nil {
		return Entry{}, err
	}
	if err := checkAllowance(orig, doc.Claims, e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Reversible returns what of entry originalID may still be reversed, per account of the
// original (its holder, currency and side): its amount less what its reversals claimed.
func (j *Journal) Reversible(ctx context.Context, originalID string) ([]Leg, error) {
	orig, err := j.reversibleEntry(ctx, originalID)
	if err != nil {
		return nil, err
	}
	doc, err := j.readReversals(ctx, orig.ID)
	if err != nil {
		return nil, err
	}
	moved := perAccount(orig.Legs, false)
	given, err := claimed(doc.Claims)
	if err != nil {
		return nil, err
	}
	out := make([]Leg, 0, len(moved))
	for _, k := range sortedAccounts(moved) {
		out = append(out, Leg{Holder: k.holder, Currency: k.currency, Side: k.side, Amount: moved[k].Sub(given[k])})
	}
	return out, nil
}

// ReversalLinks returns, for the entries of ids that are reversals, the entry each reverses
// (a statement page names its rows' entries; one find by _id).
func (j *Journal) ReversalLinks(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := j.entries.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "reverses", Value: bson.D{{Key: "$exists", Value: true}}}}, options.Find().SetProjection(bson.D{{Key: "reverses", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read reversal links: %w", err)
	}
	var docs []entryDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read reversal links: %w", err)
	}
	for _, d := range docs {
		out[d.ID] = d.Reverses
	}
	return out, nil
}

// planReversal builds the reversal id of originalID for amounts (id empty: a plan) and
// returns the original with it.
func (j *Journal) planReversal(ctx context.Context, id, originalID string, amounts []Leg, code string) (Entry, Entry, error) {
	orig, err := j.reversibleEntry(ctx, originalID)
	if err != nil {
		return Entry{}, Entry{}, err
	}
	legs, err := reversalLegs(orig, amounts)
	if err != nil {
		return Entry{}, Entry{}, err
	}
	e := Entry{ID: id, Kind: Single, Legs: legs, Code: code, BusinessKey: orig.BusinessKey, Reverses: orig.ID, reversal: true}
	checked := e
	if checked.ID == "" {
		checked.ID = orig.ID // a plan has no id yet: the rest is checked
	}
	return e, orig, checked.validate(j.cfg.MaxLegs)
}

// reversibleEntry reads originalID once it is applied (finishing it if it is being
// applied): an applied Single or Post entry.
func (j *Journal) reversibleEntry(ctx context.Context, originalID string) (Entry, error) {
	d, found, err := j.lookup(ctx, originalID)
	switch {
	case err != nil:
		return Entry{}, err
	case !found:
		return Entry{}, fmt.Errorf("%w: %s", ErrEntryNotFound, originalID)
	case d.Kind != Single && d.Kind != Post:
		return Entry{}, fmt.Errorf("%w: %s is a %s entry; only single and post entries are reversed", ErrNotReversible, originalID, d.Kind)
	case d.Fingerprint == blocked:
		return Entry{}, fmt.Errorf("%w: %s was never recorded", ErrNotReversible, originalID)
	}
	orig, err := d.entry()
	if err != nil {
		return Entry{}, err
	}
	if d.State == StateRecorded || d.State == StateCompensating {
		_, err = j.takeOver(ctx, orig, d, true)
	}
	if d.State == StateRejected || errors.Is(err, ErrInsufficient) {
		return Entry{}, fmt.Errorf("%w: %s was refused, nothing of it was applied", ErrNotReversible, originalID)
	}
	return orig, err
}

// reversalLegs are the legs of a reversal of orig giving back amounts per account (all of
// it when amounts is nil): orig's legs in order, sides swapped, each giving back its share
// of its account's amount (filled leg by leg); legs that give back nothing are left out.
func reversalLegs(orig Entry, amounts []Leg) ([]Leg, error) {
	moved := perAccount(orig.Legs, false)
	want := moved
	if amounts != nil {
		var err error
		if want, err = requested(orig, moved, amounts); err != nil {
			return nil, err
		}
	}
	left := make(map[account]amount.Amount, len(want))
	for k, a := range want {
		left[k] = a
	}
	var legs []Leg
	for _, l := range orig.Legs {
		k := account{l.Holder, l.Currency, l.Side}
		take := left[k]
		if take.Cmp(l.Amount) > 0 {
			take = l.Amount
		}
		if take.Sign() <= 0 {
			continue
		}
		left[k] = left[k].Sub(take)
		legs = append(legs, Leg{Holder: l.Holder, Currency: l.Currency, Side: opposite(l.Side), Amount: take})
	}
	if len(legs) < 2 {
		return nil, fmt.Errorf("%w: a reversal gives back a positive amount on two accounts or more", ErrInvalidEntry)
	}
	return legs, nil
}

// requested reads amounts as amounts per account of orig (moved: what orig moved there).
func requested(orig Entry, moved map[account]amount.Amount, amounts []Leg) (map[account]amount.Amount, error) {
	want := make(map[account]amount.Amount, len(amounts))
	for i, l := range amounts {
		k, err := accountOf(orig, moved, i, l)
		if err != nil {
			return nil, err
		}
		if _, twice := want[k]; twice {
			return nil, fmt.Errorf("%w: amounts[%d]: %s %s is named twice", ErrInvalidEntry, i, l.Holder, l.Currency)
		}
		switch {
		case l.Amount.Sign() < 0 || !l.Held.IsZero():
			return nil, fmt.Errorf("%w: amounts[%d]: an amount given back is zero or positive", ErrInvalidEntry, i)
		case l.Amount.Cmp(moved[k]) > 0:
			return nil, fmt.Errorf("%w: amounts[%d]: %s %s gives back %s of the %s entry %s moved", ErrReversalExceeds, i, l.Holder, l.Currency,
				l.Amount, moved[k], orig.ID)
		}
		want[k] = l.Amount
	}
	return want, nil
}

// accountOf names the account of orig amounts[i] means: its holder and currency, and its
// side when orig has the account on both sides (an empty side matches either).
func accountOf(orig Entry, moved map[account]amount.Amount, i int, l Leg) (account, error) {
	var found []account
	for _, side := range []Side{Debit, Credit} {
		k := account{l.Holder, l.Currency, side}
		if _, ok := moved[k]; ok && (l.Side == "" || l.Side == side) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return account{}, fmt.Errorf("%w: amounts[%d]: %s %s is no account of entry %s", ErrInvalidEntry, i, l.Holder, l.Currency, orig.ID)
	case 1:
		return found[0], nil
	}
	return account{}, fmt.Errorf("%w: amounts[%d]: %s %s is on both sides of entry %s: name the side", ErrInvalidEntry, i, l.Holder, l.Currency, orig.ID)
}

func opposite(s Side) Side {
	if s == Debit {
		return Credit
	}
	return Debit
}

// perAccount sums legs' amounts per account; swapped keys a reversal's legs by the
// original's side.
func perAccount(legs []Leg, swapped bool) map[account]amount.Amount {
	out := map[account]amount.Amount{}
	for _, l := range legs {
		side := l.Side
		if swapped {
			side = opposite(side)
		}
		if l.Amount.Sign() > 0 { // a partial post's leg that posted nothing moved nothing
			k := account{l.Holder, l.Currency, side}
			out[k] = out[k].Add(l.Amount)
		}
	}
	return out
}

func sortedAccounts(m map[account]amount.Amount) []account {
	keys := make([]account, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b account) int {
		return cmp.Or(cmp.Compare(a.holder, b.holder), cmp.Compare(a.currency, b.currency), cmp.Compare(a.side, b.side))
	})
	return keys
}

// claimed totals the claims per account of the original (its side).
func claimed(claims []reversalClaim) (map[account]amount.Amount, error) {
	out := map[account]amount.Amount{}
	for _, c := range claims {
		legs, err := fromLegDocs(c.By, c.Legs)
		if err != nil {
			return nil, err
		}
		for k, a := range perAccount(legs, true) {
			out[k] = out[k].Add(a)
		}
	}
	return out, nil
}

// checkAllowance refuses e if, with claims, some account of orig would get back more than
// orig moved there.
func checkAllowance(orig Entry, claims []reversalClaim, e Entry) error {
	given, err := claimed(claims)
	if err != nil {
		return err
	}
	moved, adds := perAccount(orig.Legs, false), perAccount(e.Legs, true)
	for _, k := range sortedAccounts(adds) {
		if total := given[k].Add(adds[k]); total.Cmp(moved[k]) > 0 {
			return fmt.Errorf("%w: %s %s would get back %s in all of %s's reversals, more than the %s it moved (%s reversed already)",
				ErrReversalExceeds, k.holder, k.currency, total, orig.ID, moved[k], given[k])
		}
	}
	if len(claims) >= MaxReversals {
		return fmt.Errorf("%w: %s has %d reversals already", ErrReversalExceeds, orig.ID, len(claims))
	}
	return nil
}

func (d reversalsDoc) claim(by string) (reversalClaim, bool) {
	i := slices.IndexFunc(d.Claims, func(c reversalClaim) bool { return c.By == by })
	if i < 0 {
		return reversalClaim{}, false
	}
	return d.Claims[i], true
}

func (j *Journal) readReversals(ctx context.Context, originalID string) (reversalsDoc, error) {
	var d reversalsDoc
	err := j.reversals().FindOne(ctx, bson.D{{Key: "_id", Value: originalID}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return reversalsDoc{ID: originalID}, nil
	}
	if err != nil {
		return reversalsDoc{}, fmt.Errorf("read reversals of %s: %w", originalID, err)
	}
	return d, nil
}

// writeReversals replaces the claims of d if the document is still at d's version (inserts
// it at version 1 when d.Version is 0); it reports whether it wrote.
func (j *Journal) writeReversals(ctx context.Context, d reversalsDoc, claims []reversalClaim) (bool, error) {
	if claims == nil {
		claims = []reversalClaim{}
	}
	col := j.reversals()
	if d.Version == 0 {
		_, err := col.InsertOne(ctx, reversalsDoc{ID: d.ID, Version: 1, Claims: claims})
		if mongo.IsDuplicateKeyError(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("claim reversal of %s: %w", d.ID, err)
		}
		return true, nil
	}
	res, err := col.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: "v", Value: d.Version}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: d.Version + 1}, {Key: "claims", Value: claims}}}})
	if err != nil {
		return false, fmt.Errorf("claim reversal of %s: %w", d.ID, err)
	}
	return res.MatchedCount == 1, nil
}

// claimReversal appends e's claim to its original's allowance, or finds it there (a retry):
// one version-guarded write, after checking the claims' totals with e's against the
// original. A claim of e's id with other amounts is an *ExistsError.
func (j *Journal) claimReversal(ctx context.Context, e Entry, orig Entry) error {
	mine := reversalClaim{By: e.ID, FP: e.fingerprint(), At: j.now(), Legs: toLegDocs(e.Legs)}
	for attempt := range j.cfg.MaxAttempts {
		d, err := j.readReversals(ctx, orig.ID)
		if err != nil {
			return err
		}
		if c, ok := d.claim(e.ID); ok {
			if c.FP == mine.FP {
				return nil
			}
			return &ExistsError{ID: e.ID, Field: claimedDifference(c, e)}
		}
		claims := d.Claims
		if err := checkAllowance(orig, claims, e); err != nil {
			if !errors.Is(err, ErrReversalExceeds) {
				return err
			}
			// Claims that hold allowance for nothing go first; then check again.
			var cerr error
			if claims, cerr = j.liveClaims(ctx, claims); cerr != nil {
				return cerr
			}
			if len(claims) == len(d.Claims) {
				return err
			}
			if err := checkAllowance(orig, claims, e); err != nil {
				return err
			}
		}
		ok, err := j.writeReversals(ctx, d, append(slices.Clip(claims), mine))
		if err != nil || ok {
			return err
		}
		j.conflicts.Add(1)
		backoff(ctx, attempt)
	}
	return fmt.Errorf("claim reversal %s of %s: %w", e.ID, orig.ID, ErrTooManyConflicts)
}

// claimedDifference names the first field in which e differs from the reversal claimed
// under its id.
func claimedDifference(c reversalClaim, e Entry) string {
	legs, err := fromLegDocs(c.By, c.Legs)
	if err != nil {
		return "legs"
	}
	prev := e
	prev.Legs = legs
	if f := e.firstDifference(prev); f != "" {
		return f
	}
	return "code" // the legs agree: the code or the business key differs
}

// liveClaims returns claims less those that hold allowance for nothing: a claim whose id
// was rejected (for lack of funds: it never applies) or taken by another entry, and a claim
// whose entry never came within a lease, once its id is blocked (a rejected entry without
// legs, so a late runner of it can no longer record it).
func (j *Journal) liveClaims(ctx context.Context, claims []reversalClaim) ([]reversalClaim, error) {
	live := make([]reversalClaim, 0, len(claims))
	for _, c := range claims {
		d, found, err := j.lookup(ctx, c.By)
		if err != nil {
			return nil, err
		}
		if !found && j.now().Sub(c.At) > j.cfg.Lease {
			if d, found, err = j.blockReversal(ctx, c); err != nil {
				return nil, err
			}
		}
		switch {
		case !found:
			live = append(live, c) // its runner may be about to record it
		case d.Fingerprint != c.FP, d.State == StateRejected:
			// never applies: its allowance is free
		default:
			live = append(live, c)
		}
	}
	return live, nil
}

// blockReversal takes the id of claim c, whose entry never came, with a rejected entry
// without legs; it returns what is under the id afterwards (the claim's own entry if it came
// meanwhile).
func (j *Journal) blockReversal(ctx context.Context, c reversalClaim) (entryDoc, bool, error) {
	now := j.now()
	doc := entryDoc{ID: c.By, Kind: Single, Fingerprint: blocked, State: StateRejected, Code: "blocked",
		BusinessKey: "reversal claim cut short", CreatedAt: now, UpdatedAt: now}
	if _, err := j.entries.InsertOne(ctx, doc); err != nil && !mongo.IsDuplicateKeyError(err) {
		return entryDoc{}, false, fmt.Errorf("block reversal %s: %w", c.By, err)
	}
	return j.lookup(ctx, c.By)
}

// releaseReversal removes id's claim from originalID's allowance (its entry is rejected, or
// another entry holds its id: it never applies). Idempotent.
func (j *Journal) releaseReversal(ctx context.Context, originalID, id string) error {
	for attempt := range j.cfg.MaxAttempts {
		d, err := j.readReversals(ctx, originalID)
		if err != nil {
			return err
		}
		if _, ok := d.claim(id); !ok {
			return nil
		}
		rest := slices.DeleteFunc(slices.Clone(d.Claims), func(c reversalClaim) bool { return c.By == id })
		ok, err := j.writeReversals(ctx, d, rest)
		if err != nil || ok {
			return err
		}
		backoff(ctx, attempt)
	}
	return fmt.Errorf("release reversal %s of %s: %w", id, originalID, ErrTooManyConflicts)
}
