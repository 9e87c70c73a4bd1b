package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/zcustody/suite/services/internal/amount"
)

// expireSuffix ends the id of the void the recovery pass writes for an overdue hold.
const expireSuffix = ":expire"

// ExpiryID is the id of the void that expires hold.
func ExpiryID(hold string) string { return hold + expireSuffix }

// ErrPostExceedsHold refuses a partial post of more than its hold holds on one of its
// accounts (a 4xx): nothing is recorded, and the hold stays open.
var ErrPostExceedsHold = errors.New("post exceeds the hold")

// Resolve settles (Post) or releases (Void) the hold holdID in full, at most once, under the
// entry id. Of racing resolutions exactly one wins (one resolution document per hold); the
// others answer ErrHoldAlreadyPosted, ErrHoldAlreadyVoided or ErrHoldExpired, while the
// winner's own retries continue its entry. A hold that was refused, or is not a hold, is
// ErrHoldNotFound; a post after the hold's expiry is ErrHoldExpired. Neither can fail on
// funds: the hold reserved them.
func (j *Journal) Resolve(ctx context.Context, id, holdID string, kind Kind, code string) (Result, error) {
	return j.resolve(ctx, id, holdID, kind, code, nil)
}

// ResolvePartial posts the hold holdID for less than it holds and releases the rest in the
// same entry, as TigerBeetle's partial post does (a withdrawal whose amount sent plus network
// fee is less than was held). posted names, per account of the hold (holder, currency and
// side), the amount posted: at most what the hold holds on that account (more is
// ErrPostExceedsHold, and records nothing); an account it does not name posts nothing. The
// post entry's legs mirror the hold's, each recording what it releases from pending (Held:
// its hold leg's amount) and what it posts (Amount, an account's amount filled leg by leg in
// the hold's order); what it posts must balance per currency (ErrUnbalanced), and it posts
// something (a void releases everything). Counters: pending −held, posted +amount.
//
// Everything else is Resolve's post: one resolution per hold, refusals, retries. Amounts
// equal to the hold make exactly the entry Resolve's full post makes (same legs, same
// fingerprint). A retry under id with other amounts is an *ExistsError naming the first
// leg that differs (legs[i].amount). The claim keeps the amounts, so the entry of a claim
// cut short can be rebuilt (finishResolution).
func (j *Journal) ResolvePartial(ctx context.Context, id, holdID string, posted []Leg, code string) (Result, error) {
	if len(posted) == 0 {
		return Result{}, fmt.Errorf("%w: a partial post names the amounts it posts", ErrInvalidEntry)
	}
	return j.resolve(ctx, id, holdID, Post, code, posted)
}

// resolve is Resolve, or ResolvePartial when posted names the amounts posted.
func (j *Journal) resolve(ctx context.Context, id, holdID string, kind Kind, code string, posted []Leg) (Result, error) {
	if kind != Post && kind != Void {
		return Result{}, fmt.Errorf("%w: a hold is resolved by post or void", ErrInvalidEntry)
	}
	ctx, cancel := context.WithTimeout(ctx, MaxRun)
	defer cancel()
	hold, err := j.appliedHold(ctx, holdID)
	if errors.Is(err, errNoSuchHold) && kind == Void {
		return j.blockHold(ctx, id, holdID, code)
	}
	if err != nil {
		return Result{}, err
	}
	e := Entry{ID: id, Kind: kind, HoldRef: holdID, Legs: mirror(hold), Code: code, BusinessKey: hold.BusinessKey}
	if posted != nil {
		if e.Legs, posted, err = partialLegs(hold, posted); err != nil {
			return Result{}, err
		}
	}
	if err := e.validate(j.cfg.MaxLegs); err != nil {
		return Result{}, err
	}
	// The hold is claimed only once e's id is known to be free or e's own: a claim under an id
	// another entry holds could never get its entry, and would lock the hold.
	if stored, found, err := j.lookup(ctx, id); err != nil {
		return Result{}, err
	} else if found && stored.Fingerprint != e.fingerprint() {
		return Result{}, j.refuseTakenID(ctx, e, stored)
	}
	if err := j.claimHold(ctx, e, hold, posted); err != nil {
		return Result{}, err
	}
	stored, fresh, err := j.storedOrNew(ctx, e)
	if err == nil && !fresh && stored.Fingerprint != e.fingerprint() {
		return Result{}, j.refuseTakenID(ctx, e, stored) // another entry took the id meanwhile
	}
	var res Result
	if err != nil || !fresh {
		res, err = j.continueStored(ctx, e, stored, err)
	} else {
		err = j.runHeld(ctx, e, stored.Runner, StateRecorded, nil)
	}
	if err != nil {
		return Result{}, err
	}
	return res, j.closeHold(ctx, holdID)
}

// account is a (holder, currency) pair on one side of an entry.
type account struct {
	holder, currency string
	side             Side
}

// partialLegs are the legs of a partial post of hold for posted: the hold's legs in order,
// each releasing its whole amount and posting its share of its account's amount (filled leg
// by leg, in the hold's order). It also returns posted in its canonical form (one amount per
// account, ordered), which the claim keeps.
func partialLegs(hold Entry, posted []Leg) ([]Leg, []Leg, error) {
	held := map[account]amount.Amount{}
	for _, l := range hold.Legs {
		k := account{l.Holder, l.Currency, l.Side}
		held[k] = held[k].Add(l.Amount)
	}
	want := make(map[account]amount.Amount, len(posted))
	canon := make([]Leg, 0, len(posted))
	for i, l := range posted {
		k := account{l.Holder, l.Currency, l.Side}
		h, ok := held[k]
		_, twice := want[k]
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%w: posted[%d]: %s %s %s is no account of hold %s", ErrInvalidEntry, i, l.Side, l.Holder, l.Currency, hold.ID)
		case twice:
			return nil, nil, fmt.Errorf("%w: posted[%d]: %s %s %s is named twice", ErrInvalidEntry, i, l.Side, l.Holder, l.Currency)
		case l.Amount.Sign() < 0 || !l.Held.IsZero():
			return nil, nil, fmt.Errorf("%w: posted[%d]: an amount posted is zero or positive", ErrInvalidEntry, i)
		case l.Amount.Cmp(h) > 0:
			return nil, nil, fmt.Errorf("%w: posted[%d]: %s %s posts %s of %s held by %s", ErrPostExceedsHold, i, l.Holder, l.Currency, l.Amount, h, hold.ID)
		}
		want[k] = l.Amount
		canon = append(canon, Leg{Holder: l.Holder, Currency: l.Currency, Side: l.Side, Amount: l.Amount})
	}
	slices.SortFunc(canon, func(a, b Leg) int {
		return cmp.Or(cmp.Compare(a.Holder, b.Holder), cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Side, b.Side))
	})
	legs := make([]Leg, 0, len(hold.Legs))
	for _, l := range hold.Legs {
		k := account{l.Holder, l.Currency, l.Side}
		take := want[k]
		if take.Cmp(l.Amount) > 0 {
			take = l.Amount
		}
		want[k] = want[k].Sub(take)
		leg := Leg{Holder: l.Holder, Currency: l.Currency, Side: l.Side, Amount: take}
		if !take.Equal(l.Amount) {
			leg.Held = l.Amount // the rest goes back: a partial post's leg
		}
		legs = append(legs, leg)
	}
	return legs, canon, nil
}

// finishResolution writes the entry of the open resolution r as its claim names it: in full,
// or, for a partial post, for the amounts its claim keeps. It is the recovery pass's step for
// a resolution cut short (finishResolutions): Resolve would rebuild a partial post's entry as
// a full post, which its claim refuses (an *ExistsError), and the hold would stay claimed.
func (j *Journal) finishResolution(ctx context.Context, r resolutionDoc) (Result, error) {
	if r.Kind != Post || len(r.Posted) == 0 {
		return j.Resolve(ctx, r.By, r.HoldID, r.Kind, r.Code)
	}
	posted, err := fromLegDocs(r.By, r.Posted)
	if err != nil {
		return Result{}, err
	}
	return j.resolve(ctx, r.By, r.HoldID, Post, r.Code, posted)
}

// appliedHold returns the hold holdID once it is applied (finishing one still being
// applied); a refused hold, or an entry that is no hold, is ErrHoldNotFound.
func (j *Journal) appliedHold(ctx context.Context, holdID string) (Entry, error) {
	d, found, err := j.lookup(ctx, holdID)
	if err != nil {
		return Entry{}, err
	}
	if !found {
		return Entry{}, fmt.Errorf("%w: %s", errNoSuchHold, holdID)
	}
	if d.Kind != Pending {
		return Entry{}, fmt.Errorf("%w: %s", ErrHoldNotFound, holdID)
	}
	hold, err := d.entry()
	if err != nil {
		return Entry{}, err
	}
	switch d.State {
	case StateRecorded, StateCompensating:
		_, err = j.takeOver(ctx, hold, d, true)
	case StateRejected:
		err = ErrInsufficient
	}
	if errors.Is(err, ErrInsufficient) {
		return Entry{}, fmt.Errorf("%w: %s was refused", ErrHoldNotFound, holdID)
	}
	return hold, err
}

// errNoSuchHold is a hold id nothing was ever recorded under (an ErrHoldNotFound).
var errNoSuchHold = fmt.Errorf("%w: never recorded", ErrHoldNotFound)

// blocked is the fingerprint of a hold id that a void took before the hold arrived.
const blocked = "blocked"

// blockHold answers the void id of a hold that was never recorded: the hold's id is taken by a
// rejected entry without legs, so a slow runner of the hold can never place it after its
// release (it meets ErrEntryExists). If the hold arrives first, the void goes on as usual.
func (j *Journal) blockHold(ctx context.Context, id, holdID, code string) (Result, error) {
	now := j.now()
	doc := entryDoc{ID: holdID, Kind: Pending, Fingerprint: blocked, State: StateRejected, Code: code, BusinessKey: "blocked by " + id,
		CreatedAt: now, UpdatedAt: now}
	_, err := j.entries.InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return j.Resolve(ctx, id, holdID, Void, code)
	}
	if err != nil {
		return Result{}, fmt.Errorf("block hold %s: %w", holdID, err)
	}
	return Result{}, fmt.Errorf("%w: %s (its id is now taken)", ErrHoldNotFound, holdID)
}

// refuseTakenID answers a resolution e whose id another entry (stored) holds: the
// ExistsError naming the first field that differs. An open claim of the hold under e's id is
// released, unless stored itself resolves this hold (then the claim is its own): no entry can
// ever complete it, and it would lock the hold for good.
func (j *Journal) refuseTakenID(ctx context.Context, e Entry, stored entryDoc) error {
	prev, err := stored.entry()
	if err != nil {
		return err
	}
	if stored.HoldRef != e.HoldRef {
		if _, err := j.resolutions.DeleteOne(ctx, bson.D{{Key: "_id", Value: e.HoldRef}, {Key: "by", Value: e.ID}, {Key: "state", Value: "open"}}); err != nil {
			return fmt.Errorf("release claim of %s by %s: %w", e.HoldRef, e.ID, err)
		}
	}
	return &ExistsError{ID: e.ID, Field: e.firstDifference(prev)}
}

// claimHold inserts the hold's resolution for e, or finds it: e's own (a retry) goes on,
// another's is the refusal of its kind. A post after the hold's expiry is refused before.
// posted, on a partial post, are its amounts per account (kept on the claim).
func (j *Journal) claimHold(ctx context.Context, e Entry, hold Entry, posted []Leg) error {
	if e.Kind == Post && !hold.ExpiresAt.IsZero() && !j.now().Before(hold.ExpiresAt) {
		if r, found, err := j.resolution(ctx, hold.ID); err != nil || (found && r.By == e.ID) {
			return err
		}
		return fmt.Errorf("%w: %s", ErrHoldExpired, hold.ID)
	}
	_, err := j.resolutions.InsertOne(ctx, resolutionDoc{HoldID: hold.ID, By: e.ID, Kind: e.Kind, Code: e.Code, Fingerprint: e.fingerprint(),
		Posted: toLegDocs(posted), State: "open", At: j.now()})
	if err == nil {
		return nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("resolve hold %s: %w", hold.ID, err)
	}
	r, _, err := j.resolution(ctx, hold.ID)
	switch {
	case err != nil:
		return err
	case r.By == e.ID && (r.Fingerprint == "" || r.Fingerprint == e.fingerprint()):
		return nil
	case r.By == e.ID:
		return &ExistsError{ID: e.ID, Field: claimDifference(r, e, hold)}
	case strings.HasSuffix(r.By, expireSuffix):
		return fmt.Errorf("%w: %s", ErrHoldExpired, hold.ID)
	case r.Kind == Post:
		return fmt.Errorf("%w: %s by %s", ErrHoldAlreadyPosted, hold.ID, r.By)
	}
	return fmt.Errorf("%w: %s by %s", ErrHoldAlreadyVoided, hold.ID, r.By)
}

func (j *Journal) resolution(ctx context.Context, holdID string) (resolutionDoc, bool, error) {
	var r resolutionDoc
	err := j.resolutions.FindOne(ctx, bson.D{{Key: "_id", Value: holdID}}).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return resolutionDoc{}, false, nil
	}
	if err != nil {
		return resolutionDoc{}, false, fmt.Errorf("read resolution of %s: %w", holdID, err)
	}
	return r, true, nil
}

// closeHold records the resolution done (its entry is applied) and takes the hold off the
// expiry index.
func (j *Journal) closeHold(ctx context.Context, holdID string) error {
	if _, err := j.resolutions.UpdateOne(ctx, bson.D{{Key: "_id", Value: holdID}, {Key: "state", Value: "open"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: "done"}}}}); err != nil {
		return fmt.Errorf("close resolution of %s: %w", holdID, err)
	}
	return j.unexpire(ctx, holdID)
}

// unexpire takes a hold off the expiry index.
func (j *Journal) unexpire(ctx context.Context, holdID string) error {
	if _, err := j.entries.UpdateOne(ctx, bson.D{{Key: "_id", Value: holdID}, {Key: "openUntil", Value: bson.D{{Key: "$exists", Value: true}}}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "openUntil", Value: ""}}}}); err != nil {
		return fmt.Errorf("close hold %s: %w", holdID, err)
	}
	return nil
}

// HoldState says where a hold stands: "" (no such applied hold), "open", "post" or "void"
// (resolved, or being resolved, by that kind) and the resolving entry id.
func (j *Journal) HoldState(ctx context.Context, holdID string) (state, by string, err error) {
	d, found, err := j.lookup(ctx, holdID)
	if err != nil || !found || d.Kind != Pending || d.State != StateApplied {
		return "", "", err
	}
	r, resolved, err := j.resolution(ctx, holdID)
	if err != nil || !resolved {
		return "open", "", err
	}
	return string(r.Kind), r.By, nil
}

// claimDifference names what differs between a claim and a resolution under the same id:
// the claim's entry is rebuilt from the hold (and a partial post's amounts) to name the leg.
func claimDifference(r resolutionDoc, e Entry, hold Entry) string {
	switch {
	case r.Kind != e.Kind:
		return "kind"
	case r.Code != e.Code:
		return "code"
	}
	claimed := e
	claimed.Legs = mirror(hold)
	if len(r.Posted) > 0 {
		posted, err := fromLegDocs(r.By, r.Posted)
		if err != nil {
			return "legs"
		}
		if claimed.Legs, _, err = partialLegs(hold, posted); err != nil {
			return "legs"
		}
	}
	if f := e.firstDifference(claimed); f != "" {
		return f
	}
	return "legs"
}
