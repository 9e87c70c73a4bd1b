package server

import (
	"context"
	"slices"

	"github.com/zcustody/suite/platform/apperr"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
)

// Engine implements interchangev1.SettlementEngineServiceServer for the settlement engine
// (EngineSystem), the one caller Policy admits; its methods act for the company a request
// names, not for the caller.
type Engine struct {
	interchangev1.UnimplementedSettlementEngineServiceServer
	srv *Server
}

var _ interchangev1.SettlementEngineServiceServer = (*Engine)(nil)

// AdvanceSettlement moves a settlement along DESIGN.md §7's state machine. Asking for PAY_IN
// without the funds answers SETTLEMENT_AWAITING_FUNDS; an illegal transition, a transition in
// progress and a lost race are 409 (ER-409).
func (e *Engine) AdvanceSettlement(ctx context.Context, req *interchangev1.AdvanceSettlementRequest) (*interchangev1.AdvanceSettlementResponse, error) {
	to, reason := req.GetToStatus(), req.GetReason()
	switch {
	case req.GetSettlementTrackingId() == "":
		return nil, apperr.Missing("settlementTrackingId")
	case to == "":
		return nil, apperr.Missing("toStatus")
	case !slices.Contains(settlement.Statuses(), to):
		return nil, apperr.Invalid(apperr.CodeFormat, "toStatus", "toStatus must be one of %v, got %q", settlement.Statuses(), to)
	case reason == "" && (to == settlement.StatusRejected || to == settlement.StatusFailed):
		return nil, apperr.Missing("reason")
	case len(reason) > settlement.MaxReasonLength:
		return nil, apperr.Invalid(apperr.CodeLength, "reason", "reason must be at most %d characters", settlement.MaxReasonLength)
	}
	s, err := e.srv.deps.Settlements.Advance(ctx, req.GetSettlementTrackingId(), to, reason)
	if err != nil {
		return nil, err
	}
	return &interchangev1.AdvanceSettlementResponse{SettlementTrackingId: s.TrackingID, Status: s.Status}, nil
}

// InstructSettlement records an instruction for a company, naming that company's own
// wallets (an internal path of the settlement engine; a venue's operator instructs through
// endpoint 3).
func (e *Engine) InstructSettlement(ctx context.Context, req *interchangev1.InstructSettlementRequest) (*interchangev1.InstructSettlementResponse, error) {
	company := req.GetCompanyId()
	if err := checkID("companyId", company, codePattern); err != nil {
		return nil, err
	}
	wallets, err := e.srv.walletsFor(company)
	if err != nil {
		return nil, err
	}
	res, err := e.srv.create(ctx, company, req.GetInstruction(), wallets)
	if err != nil {
		return nil, err
	}
	return &interchangev1.InstructSettlementResponse{Result: res}, nil
}

// CreateWithdrawal records a pending withdrawal from a company's trading wallet to an
// external address and holds its amount (withdrawal.Service.Create); it is idempotent by
// transferId (the same withdrawal again answers its current status, another one under the
// same id is 409 ER-104; one declined for lack of funds 409 ER-409 again).
func (e *Engine) CreateWithdrawal(ctx context.Context, req *interchangev1.CreateWithdrawalRequest) (*interchangev1.CreateWithdrawalResponse, error) {
	w, err := ParseWithdrawal(req)
	if err != nil {
		return nil, err
	}
	stored, err := e.srv.deps.Withdrawals.Create(ctx, w, e.srv.walletVenue)
	if err != nil {
		return nil, err
	}
	return &interchangev1.CreateWithdrawalResponse{TransferId: stored.TransferID, Status: stored.Status}, nil
}

// ReconcileTransit compares the in-transit accounts of trading and custody
// (withdrawal.Service.ReconcileTransit).
func (e *Engine) ReconcileTransit(ctx context.Context, _ *interchangev1.ReconcileTransitRequest) (*interchangev1.ReconcileTransitResponse, error) {
	r, err := e.srv.deps.Withdrawals.ReconcileTransit(ctx, e.srv.deps.Transit)
	if err != nil {
		return nil, err
	}
	out := &interchangev1.ReconcileTransitResponse{Violations: r.Violations, InFlight: int32(r.InFlight)}
	for _, l := range r.Lines {
		out.Currencies = append(out.Currencies, &interchangev1.TransitLine{Currency: l.Currency, Sent: l.Sent.String(),
			Received: l.Received.String(), InFlight: l.InFlight.String()})
	}
	return out, nil
}
