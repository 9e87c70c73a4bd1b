package settlement

import (
	"context"
	"time"

	"github.com/zcustody/suite/platform/apperr"
)

// RecoveryBatch bounds how many settlements one sweep resumes.
const RecoveryBatch = 50

// recoverTimeout bounds the recovery of one settlement. A resumed transition runs to its end:
// its money steps may take minutes (a PAY_IN over a thousand wallets on the embedded
// database), the claim's lease is renewed meanwhile, and trading's journal keeps each entry
// to one runner however long it takes. The bound is that of one journal call.
const recoverTimeout = 10 * time.Minute

// Recover resumes the pending transitions whose lease ran out more than grace ago (the
// process crashed, the caller gave up). Each is resumed from the settlement as read, so one
// finished or taken over meanwhile is a lost race, never a new transition; sweepers of
// several replicas may run at once, and of those resuming a transition exactly one wins its
// claim.
func (s *Service) Recover(ctx context.Context, grace time.Duration) {
	stalled, err := s.store.StalledSettlements(ctx, s.now().Add(-grace), RecoveryBatch)
	if err != nil {
		s.warn(ctx, "sweep settlements", err)
		return
	}
	var done []string
	for _, st := range stalled {
		err := s.resume(ctx, st)
		if apperr.LostRace(err) {
			s.log.DebugContext(ctx, "settlement resumed by another", "tracking_id", st.TrackingID)
			continue
		}
		if err != nil {
			s.warn(ctx, "recover settlement", err, "tracking_id", st.TrackingID)
			continue
		}
		done = append(done, st.TrackingID)
	}
	if len(done) > 0 {
		s.log.InfoContext(ctx, "settlements recovered", "count", len(done), "tracking_ids", done)
	}
}

// resume carries st's pending transition on, with its own deadline.
func (s *Service) resume(ctx context.Context, st Settlement) error {
	ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	_, _, err := s.carry(ctx, st, st.Pending.To, st.Pending.Reason)
	return err
}

// warn logs a failed recovery, unless the sweep is stopping (the next start resumes it).
func (s *Service) warn(ctx context.Context, msg string, err error, attrs ...any) {
	if ctx.Err() != nil {
		return
	}
	s.log.WarnContext(ctx, msg, append(attrs, "error", err.Error())...)
}
