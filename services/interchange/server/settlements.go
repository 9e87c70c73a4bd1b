package server

import (
	"context"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/page"
)

// CreateSettlement serves endpoint 3 for a venue's operator (Policy refuses a client's call,
// 403), idempotent by its settlementRequestId (settlement.Service.Create): the instruction's
// venue must be one the caller's company operates; its legs name trading wallets at that
// venue, of any client, receivables and payables.
func (s *Server) CreateSettlement(ctx context.Context, req *interchangev1.CreateSettlementRequest) (*interchangev1.CreateSettlementResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	if err := operatesVenue(p.CompanyID, p.Venues(), req.GetHeader().GetVenueId()); err != nil {
		return nil, err
	}
	return s.create(ctx, p.CompanyID, req, s.callerWallets(ctx))
}

// create validates and stores an instruction for company; wallets reads its wallets.
func (s *Server) create(ctx context.Context, company string, req *interchangev1.CreateSettlementRequest, wallets settlement.Wallets) (*interchangev1.CreateSettlementResponse, error) {
	in, err := ParseInstruction(company, req, s.deps.Rules)
	if err != nil {
		return nil, err
	}
	stored, err := s.deps.Settlements.Create(ctx, in, wallets)
	if err != nil {
		return nil, err
	}
	// The answer is always the first one: the instruction as received.
	return &interchangev1.CreateSettlementResponse{SettlementRequestId: stored.RequestID, SettlementTrackingId: stored.TrackingID,
		Status: settlement.StatusReceived}, nil
}

// GetSettlementStatus serves the status extension: the caller's settlement by the venue's
// request id (another company's is 404 ER-102).
func (s *Server) GetSettlementStatus(ctx context.Context, req *interchangev1.GetSettlementStatusRequest) (*interchangev1.GetSettlementStatusResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkLength("settlementRequestId", req.GetSettlementRequestId()); err != nil {
		return nil, err
	}
	st, err := s.deps.Settlements.ByRequest(ctx, p.CompanyID, req.GetSettlementRequestId())
	if err != nil {
		return nil, err
	}
	return &interchangev1.GetSettlementStatusResponse{SettlementRequestId: st.RequestID, SettlementTrackingId: st.TrackingID,
		Status: st.Status, Errors: errorsOf(st)}, nil
}

// SearchSettlements serves the search extension: the settlements the caller may see,
// filtered (values OR-ed within a filter, filters AND-ed, exact), paged and sorted by id (the
// venue's request id), createdAt or updatedAt. A venue's operator sees every settlement at
// its venues whole; a client the settlements that move its wallets, with only its own legs
// (settlement.Settlement.SeenBy).
func (s *Server) SearchSettlements(ctx context.Context, req *interchangev1.SearchSettlementsRequest) (*interchangev1.SearchSettlementsResponse, error) {
	v, err := viewer(ctx)
	if err != nil {
		return nil, err
	}
	f := settlement.Filter{Viewer: v}
	err = parseSearch(req.PaginationLimit, req.PaginationOffset, req.GetSort(), &f.Page,
		filterField{"settlementRequestIds", req.GetSettlementRequestIds(), &f.RequestIDs, nil},
		filterField{"settlementTrackingIds", req.GetSettlementTrackingIds(), &f.TrackingIDs, nil},
		filterField{"statuses", req.GetStatuses(), &f.Statuses, settlement.Statuses()},
		filterField{"venueIds", req.GetVenueIds(), &f.VenueIDs, nil})
	if err != nil {
		return nil, err
	}
	items, total, err := s.deps.Settlements.Search(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &interchangev1.SearchSettlementsResponse{Total: int32(total), Items: make([]*interchangev1.SettlementRecord, 0, len(items))}
	for _, st := range items {
		resp.Items = append(resp.Items, recordProto(st))
	}
	return resp, nil
}

// errorsOf is the errors object of a settlement: the reason of a rejected or failed one.
func errorsOf(s settlement.Settlement) *commonv1.ErrorObject {
	if s.Status != settlement.StatusRejected && s.Status != settlement.StatusFailed {
		return nil
	}
	return &commonv1.ErrorObject{Message: s.Reason, Code: apperr.CodeConflict}
}

func recordProto(s settlement.Settlement) *interchangev1.SettlementRecord {
	out := &interchangev1.SettlementRecord{SettlementRequestId: s.RequestID, SettlementTrackingId: s.TrackingID, Status: s.Status,
		VenueId: s.VenueID, CompanyId: s.CompanyID, Errors: errorsOf(s), CreatedAt: apitime.Format(s.CreatedAt),
		UpdatedAt: apitime.Format(s.UpdatedAt), Settlements: make([]*interchangev1.Settlement, 0, len(s.Legs)),
		NetSettlements: make([]*interchangev1.NetSettlement, 0, len(s.Nets))}
	for _, l := range s.Legs {
		out.Settlements = append(out.Settlements, &interchangev1.Settlement{
			Counterparty: &interchangev1.Counterparty{Type: settlement.CounterpartyWallet, Value: l.WalletID}, Currency: l.Currency,
			Ledger: l.Ledger, Amount: l.Amount, ExternalSettlementId: l.ExternalID, ExecutionDate: l.ExecutionDate})
	}
	for _, n := range s.Nets {
		out.NetSettlements = append(out.NetSettlements, &interchangev1.NetSettlement{Currency: n.Currency, Ledger: n.Ledger, Amount: n.Amount})
	}
	return out
}

// filterField is one filter of a search body: its values go to dst once checked
// (page.Filter), restricted to allowed when given.
type filterField struct {
	name    string
	values  []string
	dst     *[]string
	allowed []string
}

// parseSearch checks a search body's page (limit, offset, sort by id, createdAt or updatedAt)
// into pg and each of its filters into its destination.
func parseSearch(limit, offset *int32, sort *commonv1.Sort, pg *page.Page, fields ...filterField) error {
	var err error
	if *pg, err = page.Parse(limit, offset, sort, "id", "createdAt", "updatedAt"); err != nil {
		return err
	}
	for _, field := range fields {
		if *field.dst, err = page.Filter(field.name, field.values, field.allowed...); err != nil {
			return err
		}
	}
	return nil
}
