package journal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// expireSuffix ends the id of the void the recovery pass writes for an overdue hold.
const expireSuffix = ":expire"

// ExpiryID is the id of the void that expires hold.
func ExpiryID(hold string) string { return hold + expireSuffix }

// Resolve settles (Post) or releases (Void) the hold holdID in full, at most once, under the
// entry id. Of racing resolutions exactly one wins (one resolution document per hold); the
// others answer ErrHoldAlreadyPosted, ErrHoldAlreadyVoided or ErrHoldExpired, while the
// winner's own retries continue its entry. A hold that was refused, or is not a hold, is
// ErrHoldNotFound; a post after the hold's expiry is ErrHoldExpired. Neither can fail on
// funds: the hold reserved them.
func (j *Journal) Resolve(ctx context.Context, id, holdID string, kind Kind, code string) (Result, error) {
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
	if err := j.claimHold(ctx, e, hold); err != nil {
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
func (j *Journal) claimHold(ctx context.Context, e Entry, hold Entry) error {
	if e.Kind == Post && !hold.ExpiresAt.IsZero() && !j.now().Before(hold.ExpiresAt) {
		if r, found, err := j.resolution(ctx, hold.ID); err != nil || (found && r.By == e.ID) {
			return err
		}
		return fmt.Errorf("%w: %s", ErrHoldExpired, hold.ID)
	}
	_, err := j.resolutions.InsertOne(ctx, resolutionDoc{HoldID: hold.ID, By: e.ID, Kind: e.Kind, Code: e.Code, Fingerprint: e.fingerprint(),
		State: "open", At: j.now()})
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
		return &ExistsError{ID: e.ID, Field: claimDifference(r, e)}
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

// claimDifference names what differs between a claim and a resolution under the same id.
func claimDifference(r resolutionDoc, e Entry) string {
	switch {
	case r.Kind != e.Kind:
		return "kind"
	case r.Code != e.Code:
		return "code"
	}
	return "legs"
}
