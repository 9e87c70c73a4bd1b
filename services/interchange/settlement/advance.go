package settlement

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/services/apperr"
)

// MaxReasonLength bounds a transition's or a decline's reason.
const MaxReasonLength = 512

// illegal is the 409 of a transition the state machine does not allow.
func illegal(format string, args ...any) error {
	return &apperr.Error{Status: codes.FailedPrecondition, Code: apperr.CodeConflict, Message: fmt.Sprintf(format, args...)}
}

// advance moves a settlement to status to, in three single-document steps that are safe to
// repeat: claim (one conditional update records the transition as pending, with a lease, so
// of racing calls exactly one wins), movements (idempotent by id), finish (one conditional
// update sets the resulting status). A call that fails after its claim drops the lease; the
// same transition asked again, or the recovery sweeper once the lease has run out, resumes
// where it stopped.
func (s *Service) advance(ctx context.Context, trackingID, to, reason string) (Settlement, error) {
	cur, err := s.store.settlementByTracking(ctx, trackingID)
	if errors.Is(err, apperr.ErrNotFound) {
		return Settlement{}, apperr.NotFound("settlementTrackingId", trackingID)
	}
	if err != nil {
		return Settlement{}, err
	}
	done, refusal, err := s.carry(ctx, cur, to, reason)
	if err != nil {
		return Settlement{}, err
	}
	return done, refusal
}

// carry claims the transition of cur (as read) to status to, moves its funds and finishes
// it. A refusal is a transition recorded as not carried out (the settlement is finished);
// err is a transition that did not finish.
func (s *Service) carry(ctx context.Context, cur Settlement, to, reason string) (done Settlement, refusal, err error) {
	claimed, err := s.claim(ctx, cur, to, reason)
	if err != nil {
		return Settlement{}, nil, err
	}
	final, holds, why, refusal, err := s.execute(ctx, claimed)
	if err != nil {
		s.dropLease(ctx, claimed)
		return Settlement{}, nil, err
	}
	done, err = s.store.finish(ctx, claimed, final, holds, why)
	if errors.Is(err, apperr.ErrConflict) {
		return Settlement{}, nil, apperr.Conflict(apperr.CodeConflict, "settlement %s was changed concurrently; read its status", cur.TrackingID)
	}
	if err != nil {
		return Settlement{}, nil, err
	}
	return done, refusal, nil
}

// claim records the transition as pending, or takes over a pending one whose lease ran out.
func (s *Service) claim(ctx context.Context, cur Settlement, to, reason string) (Settlement, error) {
	lease := s.deps.Now().Add(s.deps.Lease).UTC()
	if p := cur.Pending; p != nil {
		if p.To != to {
			return Settlement{}, illegal("settlement %s is moving to %s: advance it to %s to resume", cur.TrackingID, p.To, p.To)
		}
		if s.deps.Now().Before(p.LeaseUntil) {
			return Settlement{}, apperr.Conflict(apperr.CodeConflict, "settlement %s is moving to %s already", cur.TrackingID, to)
		}
		next := *p
		next.LeaseUntil = lease
		return s.claimed(ctx, cur, next, cur.OpenHolds)
	}
	if !Allowed(cur.Status, to) {
		return Settlement{}, illegal("settlement %s is %s: it cannot move to %s", cur.TrackingID, cur.Status, to)
	}
	holds := cur.OpenHolds
	if phase := phaseOf(to); phase != "" {
		holds = phase
	}
	return s.claimed(ctx, cur, Pending{From: cur.Status, To: to, Reason: reason, LeaseUntil: lease}, holds)
}

func (s *Service) claimed(ctx context.Context, cur Settlement, p Pending, holds string) (Settlement, error) {
	out, err := s.store.claim(ctx, cur, p, holds)
	if errors.Is(err, apperr.ErrConflict) {
		return Settlement{}, apperr.Conflict(apperr.CodeConflict, "settlement %s was changed concurrently; read its status", cur.TrackingID)
	}
	return out, err
}

// execute moves the funds of the claimed transition and returns the status it ends in, the
// phase whose holds stay open, the reason recorded, and a refusal to answer (the transition
// recorded as not carried out).
func (s *Service) execute(ctx context.Context, c Settlement) (final, holds, why string, refusal, err error) {
	p := c.Pending
	switch p.To {
	case StatusPayIn:
		ok, err := s.funds.run(ctx, c, phaseOf(StatusPayIn), c.obligations(DirectionIn))
		if err != nil || ok {
			return StatusPayIn, "", p.Reason, nil, err
		}
		return StatusAwaitingFunds, c.OpenHolds, "insufficient funds in the client's trading wallets", nil, nil
	case StatusPayOut:
		ok, err := s.funds.run(ctx, c, phaseOf(StatusPayOut), c.obligations(DirectionOut))
		if err != nil || ok {
			return StatusPayOut, "", p.Reason, nil, err
		}
		why := "pay-out refused: insufficient funds in the venue's settlement wallets"
		return c.Status, c.OpenHolds, why, illegal("settlement %s: %s; it stays %s", c.TrackingID, why, c.Status), nil
	case StatusFailed:
		if c.OpenHolds != "" {
			if err := s.funds.release(ctx, c, c.OpenHolds); err != nil {
				return "", "", "", nil, err
			}
		}
		return StatusFailed, "", p.Reason, nil, nil
	}
	return p.To, c.OpenHolds, p.Reason, nil, nil
}

// dropLease lets a retry resume a transition whose call failed, at once.
func (s *Service) dropLease(ctx context.Context, c Settlement) {
	p := *c.Pending
	p.LeaseUntil = s.deps.Now().UTC()
	if _, err := s.store.claim(context.WithoutCancel(ctx), c, p, c.OpenHolds); err != nil {
		s.deps.Logger.WarnContext(ctx, "drop settlement lease", "tracking_id", c.TrackingID, "error", err.Error())
	}
}
