package address

import (
	"context"
	"crypto/ed25519"
	"errors"
	"time"

	"github.com/zcustody/suite/platform/apperr"
)

// Store is what the book needs from the address collections. Inserts are guarded by unique
// keys (one ACTIVE address per company, blockchain and address; one settlement address per
// company, venue and currency id); a deactivation is one update guarded by status and version.
type Store interface {
	Whitelisted(ctx context.Context, companyID, id string) (Whitelisted, error)
	ActiveWhitelisted(ctx context.Context, companyID, blockchain, addr string) (Whitelisted, error)
	InsertWhitelisted(ctx context.Context, w Whitelisted) (Whitelisted, error)
	DeactivateWhitelisted(ctx context.Context, w Whitelisted, requestID string) (Whitelisted, error)
	SearchWhitelisted(ctx context.Context, f Filter) ([]Whitelisted, int64, error)
	Settlement(ctx context.Context, companyID, venueID, currencyID string) (Settlement, error)
	InsertSettlement(ctx context.Context, a Settlement) (Settlement, error)
	ListSettlements(ctx context.Context, f SettlementFilter) ([]Settlement, int64, error)
}

// Directory asks compliance about the VASP and the beneficiary a payload names: unknown or
// another company's is 404 ER-102, deactivated 409 ER-113, unreachable 503.
type Directory interface {
	Vasp(ctx context.Context, companyID, vaspID string) (string, error)
	Beneficiary(ctx context.Context, field, companyID, beneficiaryID string) (string, error)
}

// Request is the service request that whitelists or deactivates an address.
type Request struct {
	ID         string
	CompanyID  string
	MakerEmail string
}

// Book keeps the companies' whitelisted addresses and their settlement addresses.
type Book struct {
	store     Store
	directory Directory
	now       func() time.Time
}

// NewBook returns the book over store; directory checks references (needed to whitelist);
// now is the clock (time.Now when nil).
func NewBook(store Store, directory Directory, now func() time.Time) *Book {
	if now == nil {
		now = time.Now
	}
	return &Book{store: store, directory: directory, now: now}
}

// Search returns one page of the company's whitelisted addresses matching f (endpoint 9).
func (b *Book) Search(ctx context.Context, f Filter) ([]Whitelisted, int64, error) {
	return b.store.SearchWhitelisted(ctx, f)
}

// Settlements returns one page of the company's settlement addresses matching f (endpoint 8).
func (b *Book) Settlements(ctx context.Context, f SettlementFilter) ([]Settlement, int64, error) {
	return b.store.ListSettlements(ctx, f)
}

// EnsureSettlement returns the company's settlement address for currencyID at venueID,
// generating and signing it with the operator key on first use (one per company, venue and
// currency id, whoever asks first). owner.ID is the company.
func (b *Book) EnsureSettlement(ctx context.Context, owner Party, venueID, currencyID string, key ed25519.PrivateKey) (Settlement, error) {
	found, err := b.store.Settlement(ctx, owner.ID, venueID, currencyID)
	if !errors.Is(err, apperr.ErrNotFound) {
		return found, err
	}
	a, err := NewSettlement(owner, venueID, currencyID, key, b.now())
	if err != nil {
		return Settlement{}, err
	}
	return b.store.InsertSettlement(ctx, a)
}
