package settlement

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/apperr"
)

// createWithdrawal stores a new pending withdrawal, or answers the one stored under its
// transfer id when it is the same withdrawal.
func (s *Service) createWithdrawal(ctx context.Context, w Withdrawal) (Withdrawal, error) {
	now := s.store.stamp()
	w.Status, w.Version, w.CreatedAt, w.UpdatedAt, w.HoldAttempt = WithdrawalPending, 1, now, now, 1
	stored, err := s.store.insertWithdrawal(ctx, w)
	if err != nil {
		return Withdrawal{}, err
	}
	if !stored.sameRequest(w) {
		return Withdrawal{}, &apperr.Error{Status: codes.AlreadyExists, Code: apperr.CodeExists, Field: "transferId",
			Message: "transferId " + w.TransferID + " is already used by another withdrawal"}
	}
	return stored, nil
}

// ConfirmWithdrawal serves endpoint 11. The decision is taken once: the same decision again
// is answered as the first, the other decision is 409; an unknown transfer, or another
// company's, is 404 ER-102.
//
// Money moves in steps that are each idempotent and safe in any interleaving: ACCEPT holds
// the amount in trading's journal (refused without the funds, 409, nothing recorded),
// records the decision, then posts the hold (the amount leaves the wallet). DECLINE records
// the decision, then voids a hold an ACCEPT may have placed. Any call that
// finds a decision drives its step again, so a call cut short is completed by a repeat, or
// by the recovery sweeper when nobody repeats it.
func (s *Service) ConfirmWithdrawal(ctx context.Context, req *interchangev1.ConfirmWithdrawalRequest) (*interchangev1.ConfirmWithdrawalResponse, error) {
	company, err := companyCaller(ctx, true)
	if err != nil {
		return nil, err
	}
	id, decision, reason, err := parseDecision(req)
	if err != nil {
		return nil, err
	}
	w, err := s.store.withdrawal(ctx, company, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("transferId", id)
	}
	if err != nil {
		return nil, err
	}
	if w.Status == WithdrawalPending {
		if w, err = s.decide(ctx, w, decision, reason); err != nil {
			return nil, err
		}
	}
	if err := s.finishWithdrawal(ctx, w); err != nil {
		return nil, err
	}
	if decisionOf(w.Status) != decision {
		return nil, decided(w)
	}
	return &interchangev1.ConfirmWithdrawalResponse{TransferId: w.TransferID}, nil
}

// decide takes the decision on a pending withdrawal; a lost race answers the withdrawal as
// the winner left it.
func (s *Service) decide(ctx context.Context, w Withdrawal, decision, reason string) (Withdrawal, error) {
	target := WithdrawalDeclined
	if decision == DecisionAccept {
		target, reason = WithdrawalAccepted, ""
		held, err := s.funds.holdWithdrawal(ctx, w)
		if status.Code(err) == codes.AlreadyExists {
			// A DECLINE released this hold's id before it could be placed: the decision is
			// taken.
			return s.store.withdrawal(ctx, w.CompanyID, w.TransferID)
		}
		if err != nil {
			return Withdrawal{}, err
		}
		if !held {
			if err := s.store.nextHoldAttempt(ctx, w); err != nil {
				return Withdrawal{}, err
			}
			return Withdrawal{}, apperr.Conflict(apperr.CodeConflict, "insufficient funds in the trading wallet for this withdrawal")
		}
	}
	next, err := s.store.decide(ctx, w, target, reason)
	if !errors.Is(err, apperr.ErrConflict) {
		return next, err
	}
	return s.store.withdrawal(ctx, w.CompanyID, w.TransferID)
}

// finishWithdrawal drives the money step of a decided withdrawal, then records it done (once).
// Driving it again moves nothing twice (the movement ids), so a repeated call and the
// sweeper, or two sweepers, may all do it; a repeat still drives it, so that a hold made by
// an ACCEPT that lost the race to a DECLINE is released by that ACCEPT's own call.
func (s *Service) finishWithdrawal(ctx context.Context, w Withdrawal) error {
	if decisionOf(w.Status) == "" {
		return nil
	}
	if err := s.complete(ctx, w); err != nil || !w.CompletedAt.IsZero() {
		return err
	}
	return s.store.completeWithdrawal(ctx, w)
}

// complete drives the money step of a decided withdrawal: post an accepted one's hold,
// void a declined one's (if an ACCEPT placed one).
func (s *Service) complete(ctx context.Context, w Withdrawal) error {
	switch w.Status {
	case WithdrawalAccepted:
		return s.funds.settleWithdrawal(ctx, w)
	case WithdrawalDeclined:
		return s.funds.releaseWithdrawal(ctx, w)
	}
	return nil
}
