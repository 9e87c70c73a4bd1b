package settlement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/trading"
)

// DefaultLease is how long a claimed transition is held by the call that claimed it before
// a retry may resume it.
const DefaultLease = 15 * time.Second

// Store keeps settlements. Every change is one conditional update of one document: a claim
// or a finish that finds the settlement changed is apperr.ErrConflict, a missing one
// apperr.ErrNotFound.
type Store interface {
	// InsertSettlement stores s unless its company holds its request id already; it returns
	// the settlement stored under that key and whether this call stored it.
	InsertSettlement(ctx context.Context, s Settlement) (Settlement, bool, error)
	SettlementByRequest(ctx context.Context, companyID, requestID string) (Settlement, error)
	SettlementByTracking(ctx context.Context, trackingID string) (Settlement, error)
	// Claim records p as s's pending transition if s is unchanged since read.
	Claim(ctx context.Context, s Settlement, p Pending) (Settlement, error)
	// Renew sets the lease of s's pending transition if its runner (the token) still holds
	// it, and reports whether it did.
	Renew(ctx context.Context, s Settlement, until time.Time) (bool, error)
	// Finish ends s's pending transition as out says if its runner still holds it.
	Finish(ctx context.Context, s Settlement, out Outcome) (Settlement, error)
	SearchSettlements(ctx context.Context, f Filter) ([]Settlement, int64, error)
	// StalledSettlements returns up to limit settlements whose pending transition's lease
	// ran out before cutoff, oldest first.
	StalledSettlements(ctx context.Context, cutoff time.Time, limit int64) ([]Settlement, error)
}

// Funds moves a settlement's money in trading's journal, one entry per step, each with the
// deterministic id of ids.go, so a step repeated moves nothing twice.
type Funds interface {
	// HoldPayIn holds every payer's share into the clearing account, all or nothing; false:
	// a payer lacks the funds (nothing held).
	HoldPayIn(ctx context.Context, s Settlement) (bool, error)
	// PayOut posts PAY_IN's hold and pays every payee out of the clearing account.
	PayOut(ctx context.Context, s Settlement) error
	// Release voids PAY_IN's hold, if one was placed.
	Release(ctx context.Context, s Settlement) error
	// Reverse undoes a paid-out settlement; false: a payee no longer holds its share.
	Reverse(ctx context.Context, s Settlement) (bool, error)
	// Uncleared says what the settlement's clearing account still holds ("" when every
	// currency's balance is zero, pending and posted).
	Uncleared(ctx context.Context, s Settlement) (string, error)
}

// Wallet is what a settlement needs to know of a trading wallet.
type Wallet struct {
	CompanyID, VenueID, Status, Currency string
}

// WalletActive is the status of a trading wallet that may move money.
const WalletActive = "ACTIVE"

// Wallets reads trading wallets as the instructing company sees them (an id it cannot see
// is absent from the answer; a venue operator also sees its clients' wallets).
type Wallets interface {
	Wallets(ctx context.Context, ids []string) (map[string]Wallet, error)
}

// Config is what the service needs besides its store and funds.
type Config struct {
	// Now is the clock (time.Now when nil); Lease the hold of a claim (DefaultLease when 0).
	Now    func() time.Time
	Lease  time.Duration
	Logger *slog.Logger
}

// Service carries out settlements.
type Service struct {
	store Store
	funds Funds
	now   func() time.Time
	lease time.Duration
	log   *slog.Logger
}

// NewService returns the service.
func NewService(store Store, funds Funds, cfg Config) *Service {
	s := &Service{store: store, funds: funds, now: cfg.Now, lease: cfg.Lease, log: cfg.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// NewTrackingID returns a fresh settlement tracking id, STL- plus 16 alphanumerics.
func NewTrackingID() string { return "STL-" + ids.Random(16) }

func (s *Service) stamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// Create stores a parsed instruction, idempotent by the company's request id: the same
// instruction again (by its body hash) is answered the one stored, another one under the
// same id is 409 ER-104. Its wallets are checked, through wallets, only for a new request.
// Racing creates may each validate, but only one settlement is stored and all get it.
func (s *Service) Create(ctx context.Context, in Settlement, wallets Wallets) (Settlement, error) {
	stored, err := s.store.SettlementByRequest(ctx, in.CompanyID, in.RequestID)
	if err == nil {
		return replay(stored, in)
	}
	if !errors.Is(err, apperr.ErrNotFound) {
		return Settlement{}, err
	}
	found, err := checkWallets(ctx, wallets, in)
	if err != nil {
		return Settlement{}, err
	}
	in.Shares = ownedShares(in.Shares, found)
	for i, l := range in.Legs {
		in.Legs[i].CompanyID = found[l.WalletID].CompanyID
	}
	now := s.stamp()
	in.TrackingID, in.Status, in.Version, in.CreatedAt, in.UpdatedAt = NewTrackingID(), StatusReceived, 1, now, now
	in.PayInAttempt = 1
	in.History = []Step{{To: StatusReceived, At: now}}
	stored, inserted, err := s.store.InsertSettlement(ctx, in)
	if err != nil || inserted {
		return stored, err
	}
	return replay(stored, in)
}

// Check checks an instruction's wallets as Create does, storing nothing (a service request's
// validation, before its checker authorises it).
func (s *Service) Check(ctx context.Context, in Settlement, wallets Wallets) error {
	_, err := checkWallets(ctx, wallets, in)
	return err
}

// replay answers a repeated request id: the stored settlement for the same instruction.
func replay(stored, in Settlement) (Settlement, error) {
	if stored.BodyHash != in.BodyHash {
		return Settlement{}, apperr.Exists("header.settlementRequestId", "header.settlementRequestId %s is already used by another instruction", in.RequestID)
	}
	return stored, nil
}

// checkWallets checks each leg's counterparty, as the instructing company sees it: an ACTIVE
// trading wallet (else ER-102; a venue operator sees the wallets of every client at its
// venues), at the instruction's venue, in the leg's currency (else ER-108); a deactivated
// one is 409 ER-113. It returns the wallets found.
func checkWallets(ctx context.Context, wallets Wallets, in Settlement) (map[string]Wallet, error) {
	seen := make(map[string]bool, len(in.Legs))
	walletIDs := make([]string, 0, len(in.Legs))
	for _, l := range in.Legs {
		if !seen[l.WalletID] {
			seen[l.WalletID] = true
			walletIDs = append(walletIDs, l.WalletID)
		}
	}
	found, err := wallets.Wallets(ctx, walletIDs)
	if err != nil {
		return nil, fmt.Errorf("read trading wallets: %w", err)
	}
	for i, l := range in.Legs {
		field := fmt.Sprintf("settlements[%d].counterparty.value", i)
		w, ok := found[l.WalletID]
		switch {
		case !ok:
			return nil, apperr.NotFound(field, l.WalletID)
		case w.CompanyID == trading.VenueCompanyID(w.VenueID):
			return nil, apperr.Invalid(apperr.CodeFormat, field, "%s: %s is a venue's settlement wallet; a leg's counterparty is a client's trading wallet", field, l.WalletID)
		case w.VenueID != in.VenueID:
			return nil, apperr.Invalid(apperr.CodeFormat, field, "%s: wallet %s is held at venue %s, not %s", field, l.WalletID, w.VenueID, in.VenueID)
		case w.Status != WalletActive:
			return nil, apperr.Precondition(apperr.CodeDeactivated, field, "%s: wallet %s is %s", field, l.WalletID, w.Status)
		case w.Currency != l.Currency:
			return nil, apperr.Invalid(apperr.CodeFormat, fmt.Sprintf("settlements[%d].currency", i),
				"settlements[%d].currency %s: wallet %s holds %s", i, l.Currency, l.WalletID, w.Currency)
		}
	}
	return found, nil
}

// ownedShares names, on each share of a client's wallet, the company that holds the wallet
// as read (the journal checks it on every leg); the venue's shares name the venue's company.
func ownedShares(shares []Share, found map[string]Wallet) []Share {
	out := slices.Clone(shares)
	for i, sh := range out {
		if w, ok := found[sh.WalletID]; ok {
			out[i].CompanyID = w.CompanyID
		}
	}
	return out
}

// ByRequest returns the company's settlement with the venue's request id (another
// company's is 404 ER-102).
func (s *Service) ByRequest(ctx context.Context, companyID, requestID string) (Settlement, error) {
	st, err := s.store.SettlementByRequest(ctx, companyID, requestID)
	if errors.Is(err, apperr.ErrNotFound) {
		return Settlement{}, apperr.NotFound("settlementRequestId", requestID)
	}
	return st, err
}

// Filter is a validated settlement search, always scoped to its Viewer: values OR-ed within
// a field, fields AND-ed, exact.
type Filter struct {
	// Viewer scopes the search: the settlements it instructed, those at the venues it
	// operates, and those whose legs name its wallets.
	Viewer      Viewer
	RequestIDs  []string
	TrackingIDs []string
	Statuses    []string
	VenueIDs    []string
	Page        page.Page
}

// Search returns one page of the settlements matching f, each as f's viewer may see it
// (SeenBy), and the number of all matches.
func (s *Service) Search(ctx context.Context, f Filter) ([]Settlement, int64, error) {
	found, total, err := s.store.SearchSettlements(ctx, f)
	for i, st := range found {
		found[i] = st.SeenBy(f.Viewer)
	}
	return found, total, err
}
