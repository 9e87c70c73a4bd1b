package withdrawal

import (
	"context"
	"time"
)

// RecoveryBatch bounds how many withdrawals one sweep completes.
const RecoveryBatch = 50

// recoverTimeout bounds the recovery of one withdrawal.
const recoverTimeout = 30 * time.Second

// Recover completes the money step of withdrawals decided more than grace ago that nobody
// completed (the process crashed, the caller gave up). The step is idempotent, so sweepers
// of several replicas may run at once.
func (s *Service) Recover(ctx context.Context, grace time.Duration) {
	stalled, err := s.store.StalledWithdrawals(ctx, s.now().Add(-grace), RecoveryBatch)
	if err != nil {
		s.warn(ctx, "sweep withdrawals", err)
		return
	}
	var done []string
	for _, w := range stalled {
		if err := s.complete(ctx, w); err != nil {
			s.warn(ctx, "recover withdrawal", err, "transfer_id", w.TransferID)
			continue
		}
		done = append(done, w.TransferID)
	}
	if len(done) > 0 {
		s.log.InfoContext(ctx, "withdrawals recovered", "count", len(done), "transfer_ids", done)
	}
}

// DefaultExpiry is how long a withdrawal waits for its venue's decision by default.
const DefaultExpiry = 7 * 24 * time.Hour

// ExpiryReason is the reason recorded on a withdrawal declined because nobody decided it.
const ExpiryReason = "expired: not decided by the venue in time"

// Expire declines the withdrawals left undecided for longer than after, as a DECLINE
// through endpoint 11 would (the same guarded decision: an ACCEPT that wins the race
// stands), and releases what they hold. Sweepers of several replicas may run at once.
func (s *Service) Expire(ctx context.Context, after time.Duration) {
	undecided, err := s.store.UndecidedWithdrawals(ctx, s.now().Add(-after), RecoveryBatch)
	if err != nil {
		s.warn(ctx, "sweep undecided withdrawals", err)
		return
	}
	var expired []string
	for _, w := range undecided {
		if err := s.expire(ctx, w); err != nil {
			s.warn(ctx, "expire withdrawal", err, "transfer_id", w.TransferID)
			continue
		}
		expired = append(expired, w.TransferID)
	}
	if len(expired) > 0 {
		s.log.InfoContext(ctx, "withdrawals expired", "count", len(expired), "transfer_ids", expired)
	}
}

// expire declines w, unless decided meanwhile, and completes what the decision left.
func (s *Service) expire(ctx context.Context, w Withdrawal) error {
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	decided, err := s.decide(ctx, w, DecisionDecline, ExpiryReason)
	if err != nil {
		return err
	}
	return s.finish(ctx, decided)
}

// complete finishes w with its own deadline.
func (s *Service) complete(ctx context.Context, w Withdrawal) error {
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	return s.finish(ctx, w)
}

// warn logs a failed recovery, unless the sweep is stopping (the next start resumes it).
func (s *Service) warn(ctx context.Context, msg string, err error, attrs ...any) {
	if ctx.Err() != nil {
		return
	}
	s.log.WarnContext(ctx, msg, append(attrs, "error", err.Error())...)
}
