// Package events is the events service's domain: the company's log positions and the tokens
// that name them, and the order in which a batch of relayed events takes its positions. The
// envelope itself is platform/events; the store keeps the log, the server serves it.
package events

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"github.com/zcustody/suite/platform/apperr"
	pevents "github.com/zcustody/suite/platform/events"
)

// tokenPrefix versions the token format, so that it can change without breaking clients
// that kept an old one (an unknown prefix is refused with a clear error, never misread).
const tokenPrefix = "e1"

// Token names a position in one company's log: the sequence of the last event seen. It is
// opaque to clients: a base64url text that only this package reads.
func Token(companyID string, seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tokenPrefix + ":" + companyID + ":" + strconv.FormatInt(seq, 10)))
}

// ParseToken returns the position token names in companyID's log; an empty token is position
// zero (before the first event). A token of another company, or one this service did not
// make, is refused as field's format error.
func ParseToken(field, token, companyID string) (int64, error) {
	if token == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	parts := strings.Split(string(raw), ":")
	if err != nil || len(parts) != 3 || parts[0] != tokenPrefix {
		return 0, apperr.Invalid(apperr.CodeFormat, field, "%s is not a token this API issued", field)
	}
	seq, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || seq < 0 {
		return 0, apperr.Invalid(apperr.CodeFormat, field, "%s is not a token this API issued", field)
	}
	if parts[1] != companyID {
		return 0, apperr.Invalid(apperr.CodeFormat, field, "%s was issued for another company", field)
	}
	return seq, nil
}

// TooOld is the error for a token before the oldest event kept: the events right after it
// were deleted, so reading on from it would skip them silently.
func TooOld(field string) error {
	return apperr.OutOfRange(apperr.CodeLength, field, "%s is too old: the events after it are no longer kept; list again from the start (an empty %s)", field, field)
}

// Arrange orders a batch of events of one company for their positions: in the order they
// arrived, except that the events of one entity take the slots its events occupy in version
// order. A relay hands an entity's events over in version order, so this only matters when
// two appends of one entity raced; it keeps the log's order per entity true regardless.
func Arrange(batch []pevents.Event) []pevents.Event {
	slots := map[pevents.Entity][]int{}
	key := func(e pevents.Event) pevents.Entity { return pevents.Entity{Type: e.Entity.Type, ID: e.Entity.ID} }
	for i, e := range batch {
		slots[key(e)] = append(slots[key(e)], i)
	}
	out := make([]pevents.Event, len(batch))
	for _, idx := range slots {
		evs := make([]pevents.Event, len(idx))
		for j, i := range idx {
			evs[j] = batch[i]
		}
		slices.SortStableFunc(evs, func(a, b pevents.Event) int { return int(a.Entity.Version - b.Entity.Version) })
		for j, i := range idx {
			out[i] = evs[j]
		}
	}
	return out
}
