package settlement

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/ids"
)

// illegal is the 409 of a transition the state machine does not allow.
func illegal(format string, args ...any) error {
	return apperr.Precondition(apperr.CodeConflict, "", format, args...)
}

// Advance moves a settlement to status to, in three single-document steps that are safe to
// repeat: claim (one conditional update records the transition as pending, with a lease, so
// of racing calls exactly one wins), movements (idempotent by id), finish (one conditional
// update sets the resulting status). A call that fails after its claim drops the lease; the
// same transition asked again, or the recovery sweeper once the lease has run out, resumes
// where it stopped.
func (s *Service) Advance(ctx context.Context, trackingID, to, reason string) (Settlement, error) {
	cur, err := s.store.SettlementByTracking(ctx, trackingID)
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

// carry claims the transition of cur (as read) to status to, moves its funds while
// renewing its lease, and finishes it. A refusal is a transition recorded as not carried
// out (the settlement keeps its status); err is a transition that did not finish.
func (s *Service) carry(ctx context.Context, cur Settlement, to, reason string) (done Settlement, refusal, err error) {
	claimed, err := s.claim(ctx, cur, to, reason)
	if err != nil {
		return Settlement{}, nil, err
	}
	work, stop := s.keepLease(ctx, claimed)
	out, refusal, err := s.execute(work, claimed)
	if lost := stop(); lost {
		return Settlement{}, nil, apperr.Conflict(apperr.CodeConflict, "settlement %s was taken over while moving to %s; read its status", cur.TrackingID, to)
	}
	if err != nil {
		s.dropLease(ctx, claimed)
		return Settlement{}, nil, err
	}
	done, err = s.store.Finish(ctx, claimed, out)
	if errors.Is(err, apperr.ErrConflict) {
		return Settlement{}, nil, apperr.Conflict(apperr.CodeConflict, "settlement %s was changed concurrently; read its status", cur.TrackingID)
	}
	if err != nil {
		return Settlement{}, nil, err
	}
	return done, refusal, nil
}

// claim records the transition as pending under a fresh token, or takes over a pending one
// whose lease ran out.
func (s *Service) claim(ctx context.Context, cur Settlement, to, reason string) (Settlement, error) {
	lease := s.now().Add(s.lease).UTC()
	if p := cur.Pending; p != nil {
		if p.To != to {
			return Settlement{}, illegal("settlement %s is moving to %s: advance it to %s to resume", cur.TrackingID, p.To, p.To)
		}
		if s.now().Before(p.LeaseUntil) {
			return Settlement{}, apperr.Conflict(apperr.CodeConflict, "settlement %s is moving to %s already", cur.TrackingID, to)
		}
		next := *p
		next.LeaseUntil, next.Token = lease, ids.Random(16)
		return s.claimed(ctx, cur, next)
	}
	if !Allowed(cur.Status, to) {
		return Settlement{}, illegal("settlement %s is %s: it cannot move to %s", cur.TrackingID, cur.Status, to)
	}
	if err := checkAttempts(cur, to); err != nil {
		return Settlement{}, err
	}
	return s.claimed(ctx, cur, Pending{From: cur.Status, To: to, Reason: reason, LeaseUntil: lease, Token: ids.Random(16)})
}

// checkAttempts refuses a PAY_IN or a reversal tried MaxAttempts times already.
func checkAttempts(cur Settlement, to string) error {
	switch {
	case to == StatusPayIn && cur.PayInAttempt > MaxAttempts:
		return illegal("settlement %s has tried PAY_IN %d times, the most allowed: it can only fail now", cur.TrackingID, MaxAttempts)
	case to == StatusFailed && cur.Status == StatusPayOut && cur.ReverseAttempt > MaxAttempts:
		return illegal("settlement %s has tried its reversal %d times, the most allowed: it stays %s", cur.TrackingID, MaxAttempts, cur.Status)
	}
	return nil
}

func (s *Service) claimed(ctx context.Context, cur Settlement, p Pending) (Settlement, error) {
	out, err := s.store.Claim(ctx, cur, p)
	if errors.Is(err, apperr.ErrConflict) {
		return Settlement{}, apperr.Conflict(apperr.CodeConflict, "settlement %s was changed concurrently; read its status", cur.TrackingID)
	}
	return out, err
}

// Outcome is how a transition ends: the status it leaves, the reason recorded, and the
// PAY_IN and reversal bookkeeping.
type Outcome struct {
	Status, Reason string
	PayInAttempt   int
	PayInHold      string
	ReverseAttempt int
}

// execute moves the funds of the claimed transition (DESIGN.md §8):
//   - PAY_IN holds every payer's share into the clearing account, all or nothing; a payer
//     short of funds leaves it AWAITING_FUNDS, and the next PAY_IN tries a new hold;
//   - PAY_OUT posts that hold and pays every payee out of the clearing account;
//   - FAILED releases the hold, or, once paid out, reverses the payments by a new entry
//     (refused, the settlement staying PAY_OUT, when a payee no longer holds its share);
//   - COMPLETE is refused, the settlement staying PAY_OUT with the reason, while its
//     clearing account holds anything.
func (s *Service) execute(ctx context.Context, c Settlement) (out Outcome, refusal, err error) {
	p := c.Pending
	out = Outcome{Status: p.To, Reason: p.Reason, PayInAttempt: max(c.PayInAttempt, 1), PayInHold: c.PayInHold,
		ReverseAttempt: max(c.ReverseAttempt, 1)}
	switch {
	case p.To == StatusPayIn:
		held, err := s.funds.HoldPayIn(ctx, c)
		if err != nil || held {
			if len(c.OfRole(RolePayer)) > 0 {
				out.PayInHold = PayInID(c)
			}
			return out, nil, err
		}
		out.Status, out.Reason, out.PayInAttempt = StatusAwaitingFunds, "insufficient funds in a payer's wallet", out.PayInAttempt+1
	case p.To == StatusPayOut:
		return out, nil, s.funds.PayOut(ctx, c)
	case p.To == StatusFailed && c.Status == StatusPayOut:
		reversed, err := s.funds.Reverse(ctx, c)
		if err != nil || reversed {
			return out, nil, err
		}
		why := "the payments cannot be reversed: a payee no longer holds its share"
		out.Status, out.Reason, out.ReverseAttempt = c.Status, why, out.ReverseAttempt+1
		return out, illegal("settlement %s: %s; it stays %s", c.TrackingID, why, c.Status), nil
	case p.To == StatusFailed:
		return out, nil, s.funds.Release(ctx, c)
	case p.To == StatusComplete:
		// A settlement completes only once its clearing account is back at zero (the money
		// that came in all went out): otherwise it stays where it is, saying why.
		left, err := s.funds.Uncleared(ctx, c)
		if err != nil || left == "" {
			return out, nil, err
		}
		why := "the clearing account is not at zero: " + left
		out.Status, out.Reason = c.Status, why
		s.log.ErrorContext(ctx, "settlement cannot complete", "tracking_id", c.TrackingID, "clearing_account", ClearingAccount(c), "holds", left)
		return out, illegal("settlement %s: %s; it stays %s", c.TrackingID, why, c.Status), nil
	}
	return out, nil, nil
}

// keepLease renews the claim's lease every third of it while the transition works, so a
// long transition (a thousand legs) is never taken over while its runner lives. The
// returned context ends when the lease is lost; stop ends the renewals and reports whether
// it was.
func (s *Service) keepLease(ctx context.Context, c Settlement) (context.Context, func() bool) {
	work, cancel := context.WithCancel(ctx)
	var lost atomic.Bool
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(s.lease/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			ok, err := s.store.Renew(work, c, s.now().Add(s.lease).UTC())
			if err == nil && !ok {
				lost.Store(true)
				cancel()
				return
			}
		}
	})
	return work, func() bool {
		close(quit)
		wg.Wait()
		cancel()
		return lost.Load()
	}
}

// dropLease lets a retry resume a transition whose call failed, at once.
func (s *Service) dropLease(ctx context.Context, c Settlement) {
	if _, err := s.store.Renew(context.WithoutCancel(ctx), c, s.now().UTC()); err != nil {
		s.log.WarnContext(ctx, "drop settlement lease", "tracking_id", c.TrackingID, "error", err.Error())
	}
}
