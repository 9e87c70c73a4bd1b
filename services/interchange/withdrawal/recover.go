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
