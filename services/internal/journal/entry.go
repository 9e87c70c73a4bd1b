package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zcustody/suite/services/internal/amount"
)

// Kind is what an entry does to the counters of the accounts it names.
type Kind string

// Kinds of entry.
const (
	// Single posts at once: a debit leg adds to debitsPosted, a credit to creditsPosted.
	Single Kind = "single"
	// Pending is a hold: a debit leg adds to debitsPending, a credit to creditsPending.
	Pending Kind = "pending"
	// Post settles a hold: its legs mirror the hold's, moving each from pending to posted, in
	// full or, for a partial post (ResolvePartial), posting part of each leg and releasing
	// the rest in the same entry (Leg.Held).
	Post Kind = "post"
	// Void releases a hold: its legs mirror the hold's, removing each from pending.
	Void Kind = "void"
)

// Side of a leg.
type Side string

// Sides.
const (
	Debit  Side = "D"
	Credit Side = "C"
)

// Leg is one posting of an entry: an amount debited from or credited to one account, the
// (holder, currency) pair.
type Leg struct {
	Holder   string
	Currency string
	Side     Side
	Amount   amount.Amount
	// Held is set on the legs of a partial post only (ResolvePartial): what the leg releases
	// from pending (its hold leg's amount) when that is more than Amount, the part posted.
	// Held − Amount goes back to the account in the same entry. Zero everywhere else: a full
	// post releases what it posts, so its legs, and its fingerprint, are as they always were.
	Held amount.Amount
}

// released is what a Post leg takes off pending: Held on a partial post's leg, else Amount.
func (l Leg) released() amount.Amount {
	if l.Held.IsZero() {
		return l.Amount
	}
	return l.Held
}

// Entry is one immutable business event: two or more legs that balance per currency. Its
// ID is deterministic (built from the business key and the step), so a retried step is the
// same entry.
type Entry struct {
	ID   string
	Kind Kind
	// HoldRef is the hold a Post or Void resolves.
	HoldRef string
	Legs    []Leg
	// Code names the business flow (settlement.payin, withdrawal.hold…); BusinessKey the
	// business object (a settlement tracking id, a transfer id) for look-ups and history.
	Code        string
	BusinessKey string
	// ExpiresAt, on a hold, is when the recovery pass voids it if nobody resolved it; zero
	// means never.
	ExpiresAt time.Time
	// Reverses, on a reversal (a Single entry Reverse records), is the entry it reverses.
	Reverses string
	// reversal is set by Reverse only: an entry naming another it reverses is recorded there,
	// under the original's allowance, never through Record.
	reversal bool
}

// State of a recorded entry.
type State string

// States: recorded (being applied), applied (final), compensating (a limit refused it; its
// applied accounts are being restored), rejected (final: nothing of it remains).
const (
	StateRecorded     State = "recorded"
	StateApplied      State = "applied"
	StateCompensating State = "compensating"
	StateRejected     State = "rejected"
)

// Bounds of an entry.
const (
	MaxIDLength = 200
	MaxCode     = 64
	MaxKey      = 200
)

// validate checks the entry's shape and invariants 1 (balanced per currency) and the bounds.
func (e Entry) validate(maxLegs int) error {
	switch {
	case e.ID == "" || len(e.ID) > MaxIDLength:
		return fmt.Errorf("%w: id must be 1..%d characters", ErrInvalidEntry, MaxIDLength)
	case len(e.Code) > MaxCode || len(e.BusinessKey) > MaxKey:
		return fmt.Errorf("%w: code or business key too long", ErrInvalidEntry)
	case e.Kind != Single && e.Kind != Pending && e.Kind != Post && e.Kind != Void:
		return fmt.Errorf("%w: unknown kind %q", ErrInvalidEntry, e.Kind)
	case (e.Kind == Post || e.Kind == Void) != (e.HoldRef != ""):
		return fmt.Errorf("%w: a hold reference belongs to post and void entries only", ErrInvalidEntry)
	case e.Reverses != "" && (e.Kind != Single || !e.reversal):
		return fmt.Errorf("%w: a reversal is a single entry recorded by Reverse", ErrInvalidEntry)
	case len(e.Legs) < 2 || len(e.Legs) > maxLegs:
		return fmt.Errorf("%w: an entry has 2..%d legs, got %d", ErrInvalidEntry, maxLegs, len(e.Legs))
	}
	// A partial post balances twice per currency: what it posts, and what it releases.
	posted, released := map[string]amount.Amount{}, map[string]amount.Amount{}
	postsSome := false
	for i, l := range e.Legs {
		if l.Holder == "" || l.Currency == "" || (l.Side != Debit && l.Side != Credit) {
			return fmt.Errorf("%w: leg %d needs a holder, a currency, a side and a positive amount", ErrInvalidEntry, i)
		}
		if err := l.checkAmounts(e.Kind, i); err != nil {
			return err
		}
		postsSome = postsSome || l.Amount.Sign() > 0
		if l.Side == Debit {
			posted[l.Currency], released[l.Currency] = posted[l.Currency].Add(l.Amount), released[l.Currency].Add(l.released())
		} else {
			posted[l.Currency], released[l.Currency] = posted[l.Currency].Sub(l.Amount), released[l.Currency].Sub(l.released())
		}
	}
	if !postsSome {
		return fmt.Errorf("%w: a post posts a positive amount on some leg; a void releases a hold in full", ErrInvalidEntry)
	}
	for _, sums := range []map[string]amount.Amount{posted, released} {
		for _, cur := range slices.Sorted(maps.Keys(sums)) {
			if s := sums[cur]; !s.IsZero() {
				return fmt.Errorf("%w: %s debits and credits differ by %s", ErrUnbalanced, cur, s)
			}
		}
	}
	return nil
}

// checkAmounts checks leg i's amounts for an entry of kind k: a positive amount, or, on a
// partial post's leg, a posted amount between zero and the positive amount it releases.
func (l Leg) checkAmounts(k Kind, i int) error {
	switch {
	case l.Held.IsZero() && l.Amount.Sign() <= 0:
		return fmt.Errorf("%w: leg %d needs a holder, a currency, a side and a positive amount", ErrInvalidEntry, i)
	case l.Held.IsZero():
		return nil
	case k != Post:
		return fmt.Errorf("%w: leg %d: only a partial post releases an amount of its own (held)", ErrInvalidEntry, i)
	case l.Held.Sign() < 0 || l.Amount.Sign() < 0:
		return fmt.Errorf("%w: leg %d: negative amount", ErrInvalidEntry, i)
	case l.Amount.Cmp(l.Held) > 0:
		return fmt.Errorf("%w: leg %d posts %s of %s held", ErrPostExceedsHold, i, l.Amount, l.Held)
	}
	return nil
}

// fingerprint hashes what makes the entry this entry: kind, hold, legs in order, code,
// business key, expiry and the entry it reverses. A retry with the same id must carry the
// same fingerprint. Fields added later (a partial post's held amounts, a reversal's link)
// enter it only when set, so every entry recorded before keeps its fingerprint.
func (e Entry) fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s|%d", e.Kind, e.HoldRef, e.Code, e.BusinessKey, e.ExpiresAt.UnixMilli())
	if e.Reverses != "" {
		fmt.Fprintf(&b, "|reverses=%s", e.Reverses)
	}
	for _, l := range e.Legs {
		fmt.Fprintf(&b, "|%s,%s,%s,%s", l.Holder, l.Currency, l.Side, l.Amount)
		if !l.Held.IsZero() { // a partial post's leg: what it posts and what it releases
			fmt.Fprintf(&b, ",held=%s", l.Held)
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// firstDifference names the first field in which o differs from e ("" when none does).
func (e Entry) firstDifference(o Entry) string {
	switch {
	case e.Kind != o.Kind:
		return "kind"
	case e.HoldRef != o.HoldRef:
		return "holdRef"
	case e.Code != o.Code:
		return "code"
	case e.BusinessKey != o.BusinessKey:
		return "businessKey"
	case !e.ExpiresAt.Equal(o.ExpiresAt):
		return "expiresAt"
	case e.Reverses != o.Reverses:
		return "reverses"
	case len(e.Legs) != len(o.Legs):
		return "legs"
	}
	for i, l := range e.Legs {
		m := o.Legs[i]
		switch {
		case l.Holder != m.Holder:
			return fmt.Sprintf("legs[%d].holder", i)
		case l.Currency != m.Currency:
			return fmt.Sprintf("legs[%d].currency", i)
		case l.Side != m.Side:
			return fmt.Sprintf("legs[%d].side", i)
		case !l.Amount.Equal(m.Amount):
			return fmt.Sprintf("legs[%d].amount", i)
		case !l.Held.Equal(m.Held):
			return fmt.Sprintf("legs[%d].held", i)
		}
	}
	return ""
}

// Delta is the change of one account's four counters.
type Delta = Counters

// deltas aggregates the entry's legs per holder and currency: the one update each holder
// document takes.
func (e Entry) deltas() map[string]map[string]Delta {
	out := map[string]map[string]Delta{}
	for _, l := range e.Legs {
		per := out[l.Holder]
		if per == nil {
			per = map[string]Delta{}
			out[l.Holder] = per
		}
		per[l.Currency] = per[l.Currency].Add(legEffect(e.Kind, l))
	}
	return out
}

// legEffect is what one leg does to its account's counters.
func legEffect(k Kind, l Leg) Delta {
	a := l.Amount
	var d Delta
	switch {
	case k == Single && l.Side == Debit:
		d.DebitsPosted = a
	case k == Single:
		d.CreditsPosted = a
	case k == Pending && l.Side == Debit:
		d.DebitsPending = a
	case k == Pending:
		d.CreditsPending = a
	case k == Post && l.Side == Debit: // pending −held, posted +amount (the same on a full post)
		d.DebitsPending, d.DebitsPosted = l.released().Neg(), a
	case k == Post:
		d.CreditsPending, d.CreditsPosted = l.released().Neg(), a
	case k == Void && l.Side == Debit:
		d.DebitsPending = a.Neg()
	case k == Void:
		d.CreditsPending = a.Neg()
	}
	return d
}

// holdersInOrder lists the holders of deltas in the order they are applied: first those
// whose update can be refused (constrained accounts whose available balance falls), by id,
// then the rest by id. Refusals thus come before any money appears elsewhere.
func holdersInOrder(deltas map[string]map[string]Delta, constrained func(string) bool) []string {
	var fallible, rest []string
	for h, per := range deltas {
		if constrained(h) && anyReduces(per) {
			fallible = append(fallible, h)
		} else {
			rest = append(rest, h)
		}
	}
	sort.Strings(fallible)
	sort.Strings(rest)
	return append(fallible, rest...)
}

func anyReduces(per map[string]Delta) bool {
	for _, d := range per {
		if d.Available().Sign() < 0 {
			return true
		}
	}
	return false
}

// mirror returns the legs of a post or void of hold: the same accounts and sides.
func mirror(hold Entry) []Leg { return append([]Leg(nil), hold.Legs...) }
