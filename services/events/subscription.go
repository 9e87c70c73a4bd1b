package events

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/webhook"
)

// Statuses of a webhook subscription.
const (
	// StatusPendingApproval: created by a maker, waiting for a checker; nothing is delivered.
	StatusPendingApproval = "PENDING_APPROVAL"
	// StatusActive: events are delivered (while Enabled).
	StatusActive = "ACTIVE"
	// StatusSuspended: the dispatcher stopped after a 410 or a sustained failure; deliveries
	// stay pending until a maker enables it again.
	StatusSuspended = "SUSPENDED"
)

// Kinds of four-eyes changes.
const (
	ChangeCreate = "CREATE"
	ChangeURL    = "URL"
	ChangeSecret = "SECRET"
	// ChangeTypes widens the event types (a narrowing needs no checker).
	ChangeTypes = "TYPES"
)

// SecretOverlap is how long the previous secret keeps signing after a rotation, so that a
// receiver can switch without losing a delivery.
const SecretOverlap = 24 * time.Hour

// MaxSubscriptions bounds a company's subscriptions, rejected ones aside: each one is a
// fan-out of every event. MaxKept bounds them all (rejected ones stay listed until deleted).
const (
	MaxSubscriptions = 20
	MaxKept          = 100
)

// Subscription is a company's webhook endpoint. Secrets and the signing seed are sealed at
// rest (webhook.Keyring); the plain secret is shown once, to the maker who asked for it.
type Subscription struct {
	ID        string
	CompanyID string
	URL       string
	// Types are the event types delivered; empty is every type.
	Types []string
	// Enabled is the company's own switch; Status the lifecycle.
	Enabled         bool
	Status          string
	SuspendedReason string
	SuspendedAt     time.Time
	// Secrets sign v1: the current one first, then the previous one until its Until.
	Secrets []SealedSecret
	// Seed is the sealed Ed25519 seed of v1a; PublicKey its whpk_ public key.
	Seed      webhook.Sealed
	PublicKey string
	// Pending is the four-eyes change waiting for a checker, if any.
	Pending *Change
	// Cursor is the position in the company's log up to which the dispatcher has made
	// deliveries for this subscription.
	Cursor int64
	// FailingSince is when the current run of nothing but failures began (zero: none).
	FailingSince time.Time
	// EventSeq is the subscription's own event sequence (webhook_subscription.* events).
	EventSeq int64
	// Missed, if set, is the last run of log positions the subscription never received:
	// retention deleted them while it was switched off or suspended.
	Missed               *Missed
	CreatedBy, UpdatedBy string
	CreatedAt, UpdatedAt time.Time
	Version              int64
}

// Missed is a run of log positions, From to To, skipped at At.
type Missed struct {
	From, To int64
	At       time.Time
}

// SealedSecret is one v1 secret, sealed, with the end of its overlap (zero: no end).
type SealedSecret struct {
	Sealed webhook.Sealed
	Until  time.Time
}

// Change is a URL or secret change (or the creation) waiting for a checker.
type Change struct {
	Kind string
	URL  string
	// Types are the proposed event types of a TYPES change (empty: every type).
	Types      []string
	Secret     webhook.Sealed
	ProposedBy string
	ProposedAt time.Time
}

// Delivering reports whether the dispatcher sends this subscription's events.
func (s Subscription) Delivering() bool { return s.Status == StatusActive && s.Enabled }

// Wants reports whether events of type typ go to s.
func (s Subscription) Wants(typ string) bool {
	return len(s.Types) == 0 || slices.Contains(s.Types, typ)
}

// SecretLabel and SeedLabel are the associated data a subscription's sealed values are bound
// to: a sealed value copied to another subscription, or from secret to seed, does not open.
func SecretLabel(id string) string { return id + "/secret" }

// SeedLabel: see SecretLabel.
func SeedLabel(id string) string { return id + "/seed" }

// URLRules are what a subscription URL must satisfy (the dispatcher's client settings).
type URLRules = webhook.ClientConfig

// CheckURL refuses a URL the dispatcher would not deliver to, as the field's error.
func CheckURL(field, raw string, rules URLRules) error {
	if len(raw) > 2048 {
		return apperr.Invalid(apperr.CodeLength, field, "%s is longer than 2048 characters", field)
	}
	if err := webhook.CheckURL(raw, rules); err != nil {
		return apperr.Invalid(apperr.CodeFormat, field, "%s: %v", field, err)
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return apperr.Invalid(apperr.CodeFormat, field, "%s must not carry credentials", field)
	}
	return nil
}

// NewSubscription makes a maker's subscription, waiting for a checker. It returns the plain
// secret, to be shown once.
func NewSubscription(company, rawURL string, types []string, by string, now time.Time, keys *webhook.Keyring) (Subscription, webhook.Secret, error) {
	id := "sub_" + uuid.Must(uuid.NewV7()).String()
	secret, err := webhook.NewSecret()
	if err != nil {
		return Subscription{}, nil, err
	}
	sealedSecret, err := keys.Seal(secret, SecretLabel(id))
	if err != nil {
		return Subscription{}, nil, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Subscription{}, nil, fmt.Errorf("webhook signing key: %w", err)
	}
	seed, err := keys.Seal(priv.Seed(), SeedLabel(id))
	if err != nil {
		return Subscription{}, nil, err
	}
	return Subscription{ID: id, CompanyID: company, URL: rawURL, Types: types, Enabled: true, Status: StatusPendingApproval,
		Secrets: []SealedSecret{{Sealed: sealedSecret}}, Seed: seed, PublicKey: webhook.PublicKey(pub),
		Pending:   &Change{Kind: ChangeCreate, URL: rawURL, ProposedBy: by, ProposedAt: now},
		CreatedBy: by, UpdatedBy: by, CreatedAt: now, UpdatedAt: now}, secret, nil
}

// ProposeURL records a maker's URL change for a checker.
func (s *Subscription) ProposeURL(rawURL, by string, now time.Time) error {
	if s.Pending != nil {
		return apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s already has a %s change waiting for a checker", s.ID, s.Pending.Kind)
	}
	s.Pending = &Change{Kind: ChangeURL, URL: rawURL, ProposedBy: by, ProposedAt: now}
	s.UpdatedBy, s.UpdatedAt = by, now
	return nil
}

// SetTypes changes the event types: a narrowing (a subset of what is delivered now) at once,
// a widening as a change for a checker, as it sends the approved endpoint more than was
// approved. While the creation waits, the types are the ones the checker is looking at and
// cannot change.
func (s *Subscription) SetTypes(types []string, by string, now time.Time) error {
	if s.Status == StatusPendingApproval {
		return apperr.Precondition(apperr.CodeConflict, "types", "subscription %s waits for a checker; its types cannot change before the decision", s.ID)
	}
	narrower := len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return !s.Wants(t) })
	if narrower {
		s.Types = types
		s.UpdatedBy, s.UpdatedAt = by, now
		return nil
	}
	if s.Pending != nil {
		return apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s already has a %s change waiting for a checker", s.ID, s.Pending.Kind)
	}
	s.Pending = &Change{Kind: ChangeTypes, Types: types, ProposedBy: by, ProposedAt: now}
	s.UpdatedBy, s.UpdatedAt = by, now
	return nil
}

// ProposeSecret makes a new secret for a checker to put in force; the plain secret is
// returned to be shown once.
func (s *Subscription) ProposeSecret(by string, now time.Time, keys *webhook.Keyring) (webhook.Secret, error) {
	if s.Pending != nil {
		return nil, apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s already has a %s change waiting for a checker", s.ID, s.Pending.Kind)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := keys.Seal(secret, SecretLabel(s.ID))
	if err != nil {
		return nil, err
	}
	s.Pending = &Change{Kind: ChangeSecret, Secret: sealed, ProposedBy: by, ProposedAt: now}
	s.UpdatedBy, s.UpdatedAt = by, now
	return secret, nil
}

// Decide applies (approve) or drops the waiting change as checker by, who must not be its
// maker. Approving a creation starts deliveries from head, the company's log position now:
// a new endpoint receives what happens from its approval on (the events search has the
// rest). A rejected creation leaves the subscription refused for good. seen, unless zero, is
// the proposal time of the change the checker saw: another change waiting is refused.
func (s *Subscription) Decide(approve bool, by string, now time.Time, head int64, seen time.Time) error {
	if s.Pending == nil {
		return apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s has no change waiting for a checker", s.ID)
	}
	if !seen.IsZero() && !s.Pending.ProposedAt.Equal(seen) {
		return apperr.Precondition(apperr.CodeConflict, "proposedAt", "the change waiting on subscription %s was proposed at %s, not %s: read it again",
			s.ID, apitime.Format(s.Pending.ProposedAt), apitime.Format(seen))
	}
	if s.Pending.ProposedBy == by {
		return apperr.ForbiddenField("submitter-id", "the maker of a change cannot approve or reject it (four eyes)")
	}
	change := *s.Pending
	s.Pending = nil
	s.UpdatedBy, s.UpdatedAt = by, now
	if !approve {
		if change.Kind == ChangeCreate {
			s.Status, s.Enabled = StatusRejected, false
		}
		return nil
	}
	switch change.Kind {
	case ChangeCreate:
		s.Status, s.Cursor = StatusActive, head
	case ChangeURL:
		s.URL = change.URL
	case ChangeTypes:
		s.Types = change.Types
	case ChangeSecret:
		current := s.Secrets[0]
		current.Until = now.Add(SecretOverlap)
		s.Secrets = []SealedSecret{{Sealed: change.Secret}, current}
	}
	return nil
}

// StatusRejected: a creation the checker refused; it never delivers.
const StatusRejected = "REJECTED"

// Enable re-enables a suspended subscription (its pending deliveries resume) or switches a
// disabled one on again; Disable stops deliveries (they wait) without a checker.
func (s *Subscription) Enable(by string, now time.Time) error {
	if s.Status == StatusRejected || s.Status == StatusPendingApproval {
		return apperr.Precondition(apperr.CodeConflict, "subscriptionId", "subscription %s is %s", s.ID, s.Status)
	}
	s.Enabled = true
	if s.Status == StatusSuspended {
		s.Status, s.SuspendedReason, s.SuspendedAt, s.FailingSince = StatusActive, "", time.Time{}, time.Time{}
	}
	s.UpdatedBy, s.UpdatedAt = by, now
	return nil
}

// InForce returns the secrets that sign at now: expired overlaps are left out.
func (s Subscription) InForce(now time.Time) []SealedSecret {
	out := make([]SealedSecret, 0, len(s.Secrets))
	for _, sec := range s.Secrets {
		if sec.Until.IsZero() || now.Before(sec.Until) {
			out = append(out, sec)
		}
	}
	return out
}

// SigningKeys opens the keys that sign s's deliveries at now.
func (s Subscription) SigningKeys(now time.Time, keys *webhook.Keyring) (webhook.Keys, error) {
	var k webhook.Keys
	for _, sec := range s.InForce(now) {
		plain, err := keys.Open(sec.Sealed, SecretLabel(s.ID))
		if err != nil {
			return webhook.Keys{}, err
		}
		k.Secrets = append(k.Secrets, webhook.Secret(plain))
	}
	seed, err := keys.Open(s.Seed, SeedLabel(s.ID))
	if err != nil {
		return webhook.Keys{}, err
	}
	k.Signing = ed25519.NewKeyFromSeed(seed)
	return k, nil
}

// Reseal seals again, under keys' current key, every sealed value of s that another key
// sealed (its secrets, its signing seed and a pending secret), and reports whether any was.
// The plain values do not change: signatures stay the same.
func (s *Subscription) Reseal(keys *webhook.Keyring) (bool, error) {
	changed := false
	reseal := func(v *webhook.Sealed, label string) error {
		if !keys.NeedsReseal(*v) {
			return nil
		}
		out, err := keys.Reseal(*v, label)
		if err != nil {
			return fmt.Errorf("subscription %s: %w", s.ID, err)
		}
		*v, changed = out, true
		return nil
	}
	for i := range s.Secrets {
		if err := reseal(&s.Secrets[i].Sealed, SecretLabel(s.ID)); err != nil {
			return false, err
		}
	}
	if err := reseal(&s.Seed, SeedLabel(s.ID)); err != nil {
		return false, err
	}
	if c := s.Pending; c != nil && c.Kind == ChangeSecret {
		if err := reseal(&c.Secret, SecretLabel(s.ID)); err != nil {
			return false, err
		}
	}
	return changed, nil
}
