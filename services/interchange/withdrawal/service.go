package withdrawal

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/page"
)

// ErrHoldBlocked is a hold whose id a DECLINE released before the hold could be placed: the
// decision is taken.
var ErrHoldBlocked = errors.New("withdrawal hold blocked by a decline")

// Store keeps withdrawals; each change is one conditional update of one document.
type Store interface {
	// InsertWithdrawal stores w unless its transfer id is taken, and returns the one stored.
	InsertWithdrawal(ctx context.Context, w Withdrawal) (Withdrawal, error)
	// Withdrawal returns the company's withdrawal, or apperr.ErrNotFound (also another's).
	Withdrawal(ctx context.Context, companyID, transferID string) (Withdrawal, error)
	// SetVenue records the venue of a withdrawal that has none yet (once) and returns it as
	// stored.
	SetVenue(ctx context.Context, w Withdrawal, venueID string) (Withdrawal, error)
	// UndecidedWithdrawals returns up to limit pending withdrawals created before cutoff,
	// oldest first.
	UndecidedWithdrawals(ctx context.Context, cutoff time.Time, limit int64) ([]Withdrawal, error)
	// WithdrawalAtVenues returns the withdrawal out of a wallet held at one of venues, or
	// apperr.ErrNotFound (also one at another venue).
	WithdrawalAtVenues(ctx context.Context, venues []string, transferID string) (Withdrawal, error)
	// Decide records the decision on a pending withdrawal unchanged since read, with the
	// network fee an ACCEPT charges ("" for none); a changed one is apperr.ErrConflict.
	Decide(ctx context.Context, w Withdrawal, status, reason, networkFee string) (Withdrawal, error)
	// NextHoldAttempt moves a pending withdrawal to its next hold attempt (once per attempt).
	NextHoldAttempt(ctx context.Context, w Withdrawal) error
	// CompleteWithdrawal records the money step of a decided withdrawal done (once).
	CompleteWithdrawal(ctx context.Context, w Withdrawal) error
	// StalledWithdrawals returns up to limit withdrawals decided before cutoff whose money
	// step is not recorded done, oldest decision first.
	StalledWithdrawals(ctx context.Context, cutoff time.Time, limit int64) ([]Withdrawal, error)
	// TransitWithdrawals returns up to limit ACCEPTED withdrawals to custody wallets whose
	// money step is not done, or was done at or after since.
	TransitWithdrawals(ctx context.Context, since time.Time, limit int64) ([]Withdrawal, error)
	// SearchWithdrawals returns one page of the withdrawals matching f and the number of all
	// matches.
	SearchWithdrawals(ctx context.Context, f Filter) ([]Withdrawal, int64, error)
}

// Filter is a validated withdrawal search, always scoped to what its caller may see: the
// withdrawals out of CompanyID's wallets and those at the Venues it operates. Values are
// OR-ed within a field, fields AND-ed, exact.
type Filter struct {
	CompanyID   string
	Venues      []string
	TransferIDs []string
	WalletIDs   []string
	Statuses    []string
	VenueIDs    []string
	Page        page.Page
}

// Statuses are the withdrawal statuses, for validating a search.
func Statuses() []string { return []string{StatusPending, StatusAccepted, StatusDeclined} }

// Search returns one page of the withdrawals matching f and the number of all matches.
func (s *Service) Search(ctx context.Context, f Filter) ([]Withdrawal, int64, error) {
	return s.store.SearchWithdrawals(ctx, f)
}

// Funds moves a withdrawal's money in trading's journal, by the ids of HoldID, and in
// custody's, by CreditID.
type Funds interface {
	// Hold reserves w's amount (and its network fee limit, Held) at its current attempt;
	// false: the wallet lacks it. ErrHoldBlocked: a DECLINE released that id first.
	Hold(ctx context.Context, w Withdrawal) (bool, error)
	// Settle posts an accepted withdrawal's hold: the amount leaves the wallet (with the
	// network fee charged, the rest of the limit released in the same entry); one to a
	// custody wallet then credits that wallet.
	Settle(ctx context.Context, w Withdrawal) error
	// Release voids (or blocks) the hold of w's current attempt.
	Release(ctx context.Context, w Withdrawal) error
}

// Limiter reserves a withdrawal's amount against its company's limits (the approval
// policy's, in trading's journal).
type Limiter interface {
	// Reserve holds w's amount on every limit that applies, or answers why it cannot (a
	// refusal naming the limit and what is left, with nothing held). Repeating it holds
	// nothing twice.
	Reserve(ctx context.Context, w Withdrawal) (refusal string, err error)
	// Release gives back what a declined withdrawal reserved.
	Release(ctx context.Context, w Withdrawal) error
}

// ReasonLimitPrefix starts the reason of a withdrawal declined at its creation because it
// did not fit under a limit of its company's policy.
const ReasonLimitPrefix = "over the limit "

// Service takes withdrawal decisions and moves their money.
type Service struct {
	store  Store
	funds  Funds
	limits Limiter
	now    func() time.Time
	log    *slog.Logger
}

// WithLimits makes s reserve each new withdrawal against its company's limits before it
// holds the amount.
func (s *Service) WithLimits(l Limiter) *Service { s.limits = l; return s }

// NewService returns the service; now is the clock (time.Now when nil).
func NewService(store Store, funds Funds, now func() time.Time, logger *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, funds: funds, now: now, log: logger}
}

// Locate returns the venue that holds a withdrawal's trading wallet.
type Locate func(ctx context.Context, w Withdrawal) (string, error)

// Create stores a new pending withdrawal and holds its amount on its wallet, or answers the
// one stored under its transfer id when it is the same withdrawal (another one under that
// id is 409 ER-104). The wallet is located only for a new withdrawal, or for a stored one
// that does not know its venue yet (kept from before venues were recorded: nobody could
// decide it), which then gets it.
//
// The withdrawal is stored first, then held under its deterministic hold id, so a call cut
// short between the two is completed by a repeat (the hold is placed once), or, when nobody
// repeats it, declined by the expiry sweeper (which blocks the hold id). A wallet short of
// the amount declines the withdrawal at once (ReasonInsufficient) and answers 409 ER-409
// (FailedPrecondition), to this call and to every repeat: a refusal never turns into a
// success.
func (s *Service) Create(ctx context.Context, w Withdrawal, locate Locate) (Withdrawal, error) {
	stored, err := s.store.Withdrawal(ctx, w.CompanyID, w.TransferID)
	switch {
	case err == nil && !stored.SameRequest(w):
		return Withdrawal{}, apperr.Exists("transferId", "transferId %s is already used by another withdrawal", w.TransferID)
	case err == nil && stored.VenueID != "":
		return s.hold(ctx, stored)
	case err != nil && !errors.Is(err, apperr.ErrNotFound):
		return Withdrawal{}, err
	}
	if w.VenueID, err = locate(ctx, w); err != nil {
		return Withdrawal{}, err
	}
	if stored.TransferID != "" {
		if stored, err = s.store.SetVenue(ctx, stored, w.VenueID); err != nil {
			return Withdrawal{}, err
		}
		return s.hold(ctx, stored)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	w.Status, w.Version, w.CreatedAt, w.UpdatedAt, w.HoldAttempt = StatusPending, 1, now, now, 1
	stored, err = s.store.InsertWithdrawal(ctx, w)
	if err != nil {
		return Withdrawal{}, err
	}
	if !stored.SameRequest(w) {
		return Withdrawal{}, apperr.Exists("transferId", "transferId %s is already used by another withdrawal", w.TransferID)
	}
	return s.hold(ctx, stored)
}

// hold places a pending withdrawal's hold (again: the same id moves nothing twice) and
// answers the withdrawal; a wallet short of the amount declines it (409). A withdrawal
// declined for that reason is answered 409 again; any other decided one as it stands.
func (s *Service) hold(ctx context.Context, w Withdrawal) (Withdrawal, error) {
	if w.Status != StatusPending {
		if w.Status == StatusDeclined && w.Reason == ReasonInsufficient {
			return Withdrawal{}, insufficient(w)
		}
		if w.Status == StatusDeclined && strings.HasPrefix(w.Reason, ReasonLimitPrefix) {
			return Withdrawal{}, apperr.Precondition(apperr.CodeConflict, "amount", "withdrawal %s is declined: %s", w.TransferID, w.Reason)
		}
		return w, nil
	}
	if s.limits != nil {
		refusal, err := s.limits.Reserve(ctx, w)
		if err != nil {
			return Withdrawal{}, err
		}
		if refusal != "" {
			return s.declineAtCreation(ctx, w, refusal)
		}
	}
	held, err := s.funds.Hold(ctx, w)
	if errors.Is(err, ErrHoldBlocked) {
		return s.store.Withdrawal(ctx, w.CompanyID, w.TransferID) // declined meanwhile
	}
	if err != nil || held {
		return w, err
	}
	return s.declineAtCreation(ctx, w, ReasonInsufficient)
}

// declineAtCreation declines a pending withdrawal that cannot be held (reason: the wallet
// lacks the amount, or a limit refused it), releases what it reserved, and answers as a
// repeat would (409).
func (s *Service) declineAtCreation(ctx context.Context, w Withdrawal, reason string) (Withdrawal, error) {
	decided, err := s.store.Decide(ctx, w, StatusDeclined, reason, "")
	if errors.Is(err, apperr.ErrConflict) {
		decided, err = s.store.Withdrawal(ctx, w.CompanyID, w.TransferID)
	}
	if err != nil {
		return Withdrawal{}, err
	}
	if err := s.finish(ctx, decided); err != nil {
		return Withdrawal{}, err
	}
	if decided.Status == StatusDeclined && decided.Reason == reason && reason != ReasonInsufficient {
		return Withdrawal{}, apperr.Precondition(apperr.CodeConflict, "amount", "withdrawal %s is declined: %s", w.TransferID, reason)
	}
	return s.hold(ctx, decided)
}

// insufficient is the answer to a withdrawal declined at its creation for lack of funds: 409
// ER-409 on the amount, a refusal (FailedPrecondition), so a service request executing it
// fails rather than waits.
func insufficient(w Withdrawal) error {
	return apperr.Precondition(apperr.CodeConflict, "amount", "%s: withdrawal %s of %s %s is declined", ReasonInsufficient, w.TransferID, w.Amount, w.Currency)
}

// Confirm takes the decision of the operator of venues on a withdrawal (endpoint 11): the
// withdrawal's wallet must be held at one of them. The decision is taken once: the same
// decision again is answered as the first, the other decision is 409; an unknown transfer,
// or one at another venue, is 404 ER-102.
//
// Money moves in steps that are each idempotent and safe in any interleaving: ACCEPT holds
// the amount in trading's journal (refused without the funds, 409, nothing recorded),
// records the decision, then posts the hold (the amount leaves the wallet). DECLINE records
// the decision, then voids a hold an ACCEPT may have placed. Any call that finds a decision
// drives its step again, so a call cut short is completed by a repeat, or by the recovery
// sweeper when nobody repeats it.
//
// An ACCEPT of a withdrawal holding a network fee limit charges networkFee (the whole limit
// when it is empty; NetworkFeeOf): the post charges the amount plus it and releases the
// rest. An ACCEPT repeated with another fee is 409 ER-104 on networkFee.
func (s *Service) Confirm(ctx context.Context, venues []string, transferID, decision, reason, networkFee string) (Withdrawal, error) {
	w, err := s.store.WithdrawalAtVenues(ctx, venues, transferID)
	if errors.Is(err, apperr.ErrNotFound) {
		return Withdrawal{}, apperr.NotFound("transferId", transferID)
	}
	if err != nil {
		return Withdrawal{}, err
	}
	fee := ""
	if decision == DecisionAccept {
		if fee, err = NetworkFeeOf(w, networkFee); err != nil {
			return Withdrawal{}, err
		}
	}
	if Allowed(w.Status, statusOf(decision)) {
		if w, err = s.decide(ctx, w, decision, reason, fee); err != nil {
			return Withdrawal{}, err
		}
	}
	if err := s.finish(ctx, w); err != nil {
		return Withdrawal{}, err
	}
	if DecisionOf(w.Status) != decision {
		return Withdrawal{}, apperr.Conflict(apperr.CodeConflict, "withdrawal %s is already %s", w.TransferID, w.Status)
	}
	if w.NetworkFee != fee {
		return Withdrawal{}, apperr.Exists("networkFee", "withdrawal %s was accepted with networkFee %s", w.TransferID, w.NetworkFee)
	}
	return w, nil
}

// decide takes the decision on a pending withdrawal; a lost race answers the withdrawal as
// the winner left it.
func (s *Service) decide(ctx context.Context, w Withdrawal, decision, reason, fee string) (Withdrawal, error) {
	target := statusOf(decision)
	if target == StatusAccepted {
		reason = ""
		if w.Attempt() > MaxHoldAttempts {
			return Withdrawal{}, apperr.Conflict(apperr.CodeConflict, "withdrawal %s: %d holds were refused for lack of funds; it can only be declined", w.TransferID, MaxHoldAttempts)
		}
		held, err := s.funds.Hold(ctx, w)
		if errors.Is(err, ErrHoldBlocked) {
			return s.store.Withdrawal(ctx, w.CompanyID, w.TransferID)
		}
		if err != nil {
			return Withdrawal{}, err
		}
		if !held {
			if err := s.store.NextHoldAttempt(ctx, w); err != nil {
				return Withdrawal{}, err
			}
			return Withdrawal{}, apperr.Conflict(apperr.CodeConflict, "%s for withdrawal %s", ReasonInsufficient, w.TransferID)
		}
	}
	next, err := s.store.Decide(ctx, w, target, reason, fee)
	if !errors.Is(err, apperr.ErrConflict) {
		return next, err
	}
	return s.store.Withdrawal(ctx, w.CompanyID, w.TransferID)
}

// finish drives the money step of a decided withdrawal, then records it done (once).
// Driving it again moves nothing twice (the entry ids), so a repeated call and the sweeper,
// or two sweepers, may all do it; a repeat still drives it, so that a hold made by an ACCEPT
// that lost the race to a DECLINE is released by that ACCEPT's own call.
func (s *Service) finish(ctx context.Context, w Withdrawal) error {
	var err error
	switch w.Status {
	case StatusAccepted:
		err = s.funds.Settle(ctx, w)
	case StatusDeclined:
		err = s.funds.Release(ctx, w)
		if err == nil && s.limits != nil {
			err = s.limits.Release(ctx, w)
		}
	default:
		return nil
	}
	if err != nil || !w.CompletedAt.IsZero() {
		return err
	}
	return s.store.CompleteWithdrawal(ctx, w)
}
