package server

import (
	"context"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/internal/page"
)

// SearchVasps serves the VASP search extension: the VASPs visible to the caller's company
// (any role), each with whether it is valid for the company and when the company last
// switched it. Two reads: the page of VASPs (find and count), then the company's
// activations of that page in one query.
func (s *Server) SearchVasps(ctx context.Context, req *compliancev1.SearchVaspsRequest) (*compliancev1.SearchVaspsResponse, error) {
	p, err := principal.Company(ctx)
	if err != nil {
		return nil, err
	}
	f, err := vaspFilter(p.CompanyID, req)
	if err != nil {
		return nil, err
	}
	vasps, total, err := s.registry.SearchVASPs(ctx, f)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(vasps))
	for i, v := range vasps {
		ids[i] = v.ID
	}
	acts, err := s.registry.Activations(ctx, p.CompanyID, ids)
	if err != nil {
		return nil, err
	}
	resp := &compliancev1.SearchVaspsResponse{Total: int32(total), Items: make([]*compliancev1.Vasp, 0, len(vasps))}
	for _, v := range vasps {
		resp.Items = append(resp.Items, vaspProto(v, acts))
	}
	return resp, nil
}

// vaspFilter validates the search body: pagination, sort by id, bounded filters, and
// travel-rule methods among the known ones (ER-108).
func vaspFilter(companyID string, req *compliancev1.SearchVaspsRequest) (compliance.VASPFilter, error) {
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, req.GetSort(), "id")
	if err != nil {
		return compliance.VASPFilter{}, err
	}
	f := compliance.VASPFilter{CompanyID: companyID, Page: pg}
	if f.IDs, err = page.Filter("ids", req.GetIds()); err != nil {
		return compliance.VASPFilter{}, err
	}
	if f.Names, err = page.Filter("names", req.GetNames()); err != nil {
		return compliance.VASPFilter{}, err
	}
	if f.TravelRuleMethods, err = page.Filter("travelRuleMethods", req.GetTravelRuleMethods(), compliance.TravelRuleMethods()...); err != nil {
		return compliance.VASPFilter{}, err
	}
	return f, nil
}

// vaspProto renders a VASP as the company sees it; acts holds the company's activations.
func vaspProto(v compliance.VASP, acts map[string]compliance.Activation) *compliancev1.Vasp {
	item := &compliancev1.Vasp{VaspId: v.ID, VaspName: v.Name, TravelRuleMethod: v.TravelRuleMethod, VaspCountry: v.Country}
	act, chosen := acts[v.ID]
	if !chosen {
		item.Valid = v.ActiveFor(nil)
		return item
	}
	item.Valid = v.ActiveFor(&act)
	item.UpdatedAt = apitime.Format(act.UpdatedAt)
	return item
}
