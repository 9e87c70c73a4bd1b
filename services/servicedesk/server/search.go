package server

import (
	"context"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/servicedesk"
)

// SearchRequests serves endpoint 1 within the caller's company.
func (s *Server) SearchRequests(ctx context.Context, req *servicedeskv1.SearchRequestsRequest) (*servicedeskv1.SearchRequestsResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	f, err := requestFilter(req, p.CompanyID)
	if err != nil {
		return nil, err
	}
	if companies := req.GetCompanyIds(); len(companies) > 0 && !slices.Contains(companies, p.CompanyID) {
		return &servicedeskv1.SearchRequestsResponse{Total: 0, Items: []*servicedeskv1.ServiceRequest{}}, nil
	}
	items, total, err := s.desk.Search(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &servicedeskv1.SearchRequestsResponse{Total: int32(total), Items: make([]*servicedeskv1.ServiceRequest, 0, len(items))}
	for _, r := range items {
		item, err := requestItem(r)
		if err != nil {
			return nil, err
		}
		resp.Items = append(resp.Items, item)
	}
	return resp, nil
}

func requestFilter(req *servicedeskv1.SearchRequestsRequest, companyID string) (servicedesk.RequestFilter, error) {
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, req.GetSort(), "id", "createdAt", "updatedAt")
	if err != nil {
		return servicedesk.RequestFilter{}, err
	}
	f := servicedesk.RequestFilter{CompanyID: companyID, Limit: pg.Limit, Offset: pg.Offset, SortBy: pg.SortBy, Desc: pg.Desc}
	checks := []struct {
		field   string
		values  []string
		allowed []string
		dst     *[]string
	}{
		{"productIds", req.GetProductIds(), nil, &f.ProductIDs},
		{"serviceIds", req.GetServiceIds(), nil, &f.ServiceIDs},
		{"requestTypes", req.GetRequestTypes(), servicedesk.RequestTypes, &f.RequestTypes},
		{"requestIds", req.GetRequestIds(), nil, &f.RequestIDs},
		{"endToEndIds", req.GetEndToEndIds(), nil, &f.EndToEndIDs},
		{"statuses", req.GetStatuses(), servicedesk.Statuses, &f.Statuses},
		{"entityIds", req.GetEntityIds(), nil, &f.EntityIDs},
		{"companyIds", req.GetCompanyIds(), nil, new([]string)},
		{"details", req.GetDetails(), nil, &f.Details},
	}
	for _, c := range checks {
		if *c.dst, err = page.Filter(c.field, c.values, c.allowed...); err != nil {
			return f, err
		}
	}
	for i, id := range f.ProductIDs { // accept 0x13 and 19 as well as 0x0013
		if n, err := servicedesk.ParseProductID(id); err == nil {
			f.ProductIDs[i] = servicedesk.ProductHex(n)
		}
	}
	for i, d := range f.Details {
		f.Details[i] = strings.ToLower(d)
	}
	if _, err := page.Filter("modifiedAt", req.GetModifiedAt()); err != nil {
		return f, err
	}
	for _, day := range req.GetModifiedAt() {
		t, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return f, apperr.Invalid(apperr.CodeFormat, "modifiedAt", "modifiedAt value %q must be a date YYYY-MM-DD", day)
		}
		f.ModifiedDays = append(f.ModifiedDays, t)
	}
	return f, nil
}

func requestItem(r servicedesk.Request) (*servicedeskv1.ServiceRequest, error) {
	payload := &structpb.Struct{}
	if err := payload.UnmarshalJSON([]byte(r.Payload)); err != nil {
		return nil, err
	}
	business, err := structpb.NewStruct(map[string]any{"entityIds": toAny(r.EntityIDs)})
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.ServiceRequest{RequestId: r.ID, ServiceId: r.ServiceID, Product: r.Product, ProductId: r.ProductID,
		EndToEndId: r.EndToEndID, RequestType: r.RequestType, Payload: payload, Status: r.Status, CompanyId: r.CompanyID,
		BusinessObjects: business, CreatedBy: r.CreatedBy, UpdatedBy: r.UpdatedBy, CreatedAt: apitime.Format(r.CreatedAt),
		UpdatedAt: apitime.Format(r.UpdatedAt), ExpiresAt: apitime.Format(r.ExpiresAt), EntityId: strings.Join(r.EntityIDs, ",")}, nil
}

func toAny(v []string) []any {
	out := make([]any, 0, len(v))
	for _, s := range v {
		out = append(out, s)
	}
	return out
}
