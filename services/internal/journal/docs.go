package journal

import (
	"fmt"
	"time"

	"github.com/zcustody/suite/services/internal/amount"
)

// entryDoc is one entry in <prefix>_entries. Its money fields (kind, holdRef, legs) are
// never updated; state, reason and openUntil are.
type entryDoc struct {
	ID          string    `bson:"_id"`
	Kind        Kind      `bson:"kind"`
	HoldRef     string    `bson:"holdRef,omitempty"`
	Legs        []legDoc  `bson:"legs"`
	Fingerprint string    `bson:"fp"`
	State       State     `bson:"state"`
	Reason      *failure  `bson:"reason,omitempty"`
	Code        string    `bson:"code"`
	BusinessKey string    `bson:"businessKey"`
	ExpiresAt   time.Time `bson:"expiresAt,omitempty"`
	// Reverses is the entry a reversal reverses (Reverse); absent on every other entry.
	Reverses string `bson:"reverses,omitempty"`
	// OpenUntil is ExpiresAt while the hold is open (sparse index): the recovery pass finds
	// overdue holds without scanning resolved ones.
	OpenUntil time.Time `bson:"openUntil,omitempty"`
	CreatedAt time.Time `bson:"createdAt"`
	UpdatedAt time.Time `bson:"updatedAt"`
	// LeaseUntil is when the runner's lease on the entry runs out, Runner its token
	// (lease.go); kept until the entry is final, then left as they were.
	LeaseUntil time.Time `bson:"leaseUntil,omitempty"`
	Runner     string    `bson:"runner,omitempty"`
}

// failure is why an entry was rejected: the account that lacked funds.
type failure struct {
	Holder   string `bson:"holder"`
	Currency string `bson:"currency"`
}

type legDoc struct {
	Holder   string `bson:"h"`
	Currency string `bson:"cur"`
	Side     Side   `bson:"side"`
	Amount   string `bson:"amt"`
	// Held is a partial post's leg's release from pending (Leg.Held); absent elsewhere.
	Held string `bson:"held,omitempty"`
}

func toLegDocs(legs []Leg) []legDoc {
	if len(legs) == 0 {
		return nil
	}
	out := make([]legDoc, 0, len(legs))
	for _, l := range legs {
		d := legDoc{Holder: l.Holder, Currency: l.Currency, Side: l.Side, Amount: l.Amount.String()}
		if !l.Held.IsZero() {
			d.Held = l.Held.String()
		}
		out = append(out, d)
	}
	return out
}

func fromLegDocs(id string, docs []legDoc) ([]Leg, error) {
	out := make([]Leg, 0, len(docs))
	for _, l := range docs {
		a, err := amount.FromStored(l.Amount)
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", id, err)
		}
		leg := Leg{Holder: l.Holder, Currency: l.Currency, Side: l.Side, Amount: a}
		if l.Held != "" {
			if leg.Held, err = amount.FromStored(l.Held); err != nil {
				return nil, fmt.Errorf("entry %s: %w", id, err)
			}
		}
		out = append(out, leg)
	}
	return out, nil
}

func toEntryDoc(e Entry, now time.Time) entryDoc {
	d := entryDoc{ID: e.ID, Kind: e.Kind, HoldRef: e.HoldRef, Fingerprint: e.fingerprint(), State: StateRecorded, Code: e.Code,
		BusinessKey: e.BusinessKey, Reverses: e.Reverses, CreatedAt: now, UpdatedAt: now}
	if !e.ExpiresAt.IsZero() {
		d.ExpiresAt = e.ExpiresAt.UTC().Truncate(time.Millisecond)
		d.OpenUntil = d.ExpiresAt
	}
	d.Legs = toLegDocs(e.Legs)
	return d
}

func (d entryDoc) entry() (Entry, error) {
	e := Entry{ID: d.ID, Kind: d.Kind, HoldRef: d.HoldRef, Code: d.Code, BusinessKey: d.BusinessKey, Reverses: d.Reverses, reversal: d.Reverses != ""}
	if !d.ExpiresAt.IsZero() {
		e.ExpiresAt = d.ExpiresAt.UTC()
	}
	legs, err := fromLegDocs(d.ID, d.Legs)
	if err != nil {
		return Entry{}, err
	}
	if len(legs) > 0 {
		e.Legs = legs
	}
	return e, nil
}

// resolutionDoc is inserted once under the hold's id: of racing resolvers exactly one
// insert succeeds (a unique _id holds on every engine). State is "open" until its entry is
// applied, so the recovery pass finds resolutions cut short.
type resolutionDoc struct {
	HoldID string `bson:"_id"`
	By     string `bson:"by"`
	Kind   Kind   `bson:"kind"`
	Code   string `bson:"code"`
	// Fingerprint is the resolving entry's (absent on claims made before it was kept).
	Fingerprint string `bson:"fp,omitempty"`
	// Posted, on a partial post's claim, are the amounts posted per account as the caller
	// named them (ResolvePartial): the claim's entry can be rebuilt from the hold and them.
	Posted []legDoc  `bson:"posted,omitempty"`
	State  string    `bson:"state"`
	At     time.Time `bson:"at"`
}

// holderDoc is the journal's part of a holder document: the counters of its accounts by
// currency, the version that guards every update, the posting sequence and the markers of
// the entries applied and not yet pruned.
type holderDoc struct {
	ID       string                 `bson:"_id"`
	Accounts map[string]countersDoc `bson:"accounts"`
	Version  int64                  `bson:"ledgerVersion"`
	Seq      int64                  `bson:"ledgerSeq"`
	Markers  []markerDoc            `bson:"ledgerMarkers"`
	// Company owns the holder's accounts (a wallet's company; none for system accounts):
	// the events of its postings go to it.
	Company string `bson:"companyId,omitempty"`
}

// markerDoc says that entry K is applied to the holder as posting Seq, with what it changed;
// it becomes a history row before it is pruned.
type markerDoc struct {
	K        string       `bson:"k"`
	Seq      int64        `bson:"seq"`
	At       time.Time    `bson:"at"`
	Postings []postingDoc `bson:"p"`
}

// postingDoc is one account's change by an entry and its counters after it.
type postingDoc struct {
	Currency string      `bson:"cur"`
	Delta    countersDoc `bson:"d"`
	After    countersDoc `bson:"a"`
}

// historyDoc is one posting sequence number of a holder: an entry applied to it.
type historyDoc struct {
	ID          string       `bson:"_id"` // <holder>:<seq>
	Holder      string       `bson:"holder"`
	Seq         int64        `bson:"seq"`
	Entry       string       `bson:"entry"`
	Code        string       `bson:"code"`
	BusinessKey string       `bson:"businessKey"`
	At          time.Time    `bson:"at"`
	Postings    []postingDoc `bson:"p"`
}

func (d holderDoc) marker(k string) (markerDoc, bool) {
	for _, m := range d.Markers {
		if m.K == k {
			return m, true
		}
	}
	return markerDoc{}, false
}

// counters returns the account's counters (zero for a currency the holder never had).
func (d holderDoc) counters(currency string) (Counters, error) {
	c, ok := d.Accounts[currency]
	if !ok {
		return Counters{}, nil
	}
	out, err := c.counters()
	if err != nil {
		return Counters{}, fmt.Errorf("account %s %s: %w", d.ID, currency, err)
	}
	return out, nil
}

// compensation is the marker of an entry's undoing on a holder.
func compensation(id string) string { return id + "~" }

func historyID(holder string, seq int64) string { return fmt.Sprintf("%s:%d", holder, seq) }
