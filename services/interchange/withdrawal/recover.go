package withdrawal

import (
	"context"
	"time"
)

// RecoveryBatch bounds how many withdrawals one sweep completes.
const RecoveryBatch = 50

// recoverTimeout bounds the recovery of one withdrawal.
const recoverTimeout = 30 * time.Second

// DefaultExpiry is how long a withdrawal waits for its venue's decision by default.
const DefaultExpiry = 7 * 24 * time.Hour

// ExpiryReason is the reason recorded on a withdrawal declined because nobody decided it.
const ExpiryReason = "expired: not decided by the venue in time"

// Recover completes the money step of withdrawals decided more than grace ago that nobody
// completed (the process crashed, the caller gave up). The step is idempotent, so sweepers
// of several replicas may run at once.
func (s *Service) Recover(ctx context.Context, grace time.Duration) {
	stalled, err := s.store.StalledWithdrawals(ctx, s.now().Add(-grace), RecoveryBatch)
	s.sweep(ctx, "recovered", stalled, err, s.finish)
}

// Expire declines the withdrawals left undecided for longer than after, as a DECLINE
// through endpoint 11 would (the same guarded decision: an ACCEPT that wins the race
// stands), and releases what they hold. Sweepers of several replicas may run at once.
func (s *Service) Expire(ctx context.Context, after time.Duration) {
	undecided, err := s.store.UndecidedWithdrawals(ctx, s.now().Add(-after), RecoveryBatch)
	s.sweep(ctx, "expired", undecided, err, func(ctx context.Context, w Withdrawal) error {
		decided, err := s.decide(ctx, w, DecisionDecline, ExpiryReason, "")
		if err != nil {
			return err
		}
		return s.finish(ctx, decided)
	})
}

// sweep applies step to each withdrawal found (each with its own deadline), and logs what
// it did as "withdrawals <done>" and what failed as a warning (the next sweep tries again).
func (s *Service) sweep(ctx context.Context, done string, found []Withdrawal, err error, step func(context.Context, Withdrawal) error) {
	if err != nil {
		s.warn(ctx, "sweep withdrawals to be "+done, err)
		return
	}
	var ids []string
	for _, w := range found {
		wctx, cancel := context.WithTimeout(ctx, recoverTimeout)
		err := step(wctx, w)
		cancel()
		if err != nil {
			s.warn(ctx, "withdrawal not "+done, err, "transfer_id", w.TransferID)
			continue
		}
		ids = append(ids, w.TransferID)
	}
	if len(ids) > 0 {
		s.log.InfoContext(ctx, "withdrawals "+done, "count", len(ids), "transfer_ids", ids)
	}
}

// warn logs a failed recovery, unless the sweep is stopping (the next start resumes it).
func (s *Service) warn(ctx context.Context, msg string, err error, attrs ...any) {
	if ctx.Err() != nil {
		return
	}
	s.log.WarnContext(ctx, msg, append(attrs, "error", err.Error())...)
}
