package server

import (
	"context"
	"slices"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/servicedesk"
)

// maxAuditRequests bounds the request ids of one audit-trail call.
const maxAuditRequests = 100

// GetAuditTrail serves endpoint 10: one element per requested id, in the order asked; an id
// that is unknown or another company's gives an empty element.
func (s *Server) GetAuditTrail(ctx context.Context, req *servicedeskv1.GetAuditTrailRequest) (*servicedeskv1.GetAuditTrailResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	ids := req.GetRequestIds()
	switch {
	case len(ids) == 0:
		return nil, apperr.Invalid(apperr.CodeEmptyList, "requestIds", "requestIds must name at least one request")
	case len(ids) > maxAuditRequests:
		return nil, apperr.Invalid(apperr.CodeLength, "requestIds", "requestIds holds more than %d ids", maxAuditRequests)
	}
	pg, err := page.Parse(req.PaginationLimit, req.PaginationOffset, req.GetSort(), "id", "createdAt")
	if err != nil {
		return nil, err
	}
	byID, err := s.desk.Trails(ctx, actor(p), ids)
	if err != nil {
		return nil, err
	}
	resp := &servicedeskv1.GetAuditTrailResponse{Trails: make([]*servicedeskv1.AuditTrail, 0, len(ids))}
	for _, id := range ids {
		resp.Trails = append(resp.Trails, trail(byID[id], pg))
	}
	return resp, nil
}

// trail renders the versions of r (zero Request: none), paginated.
func trail(r servicedesk.Request, pg page.Page) *servicedeskv1.AuditTrail {
	entries := make([]*servicedeskv1.AuditTrailEntry, 0, len(r.Versions))
	rule := ""
	if r.ID != "" {
		rule = r.DecidingRule().Name
	}
	var approvals []*servicedeskv1.Approval
	for i, v := range r.Versions {
		if v.Action == servicedesk.ActionApproved {
			approvals = append(approvals, &servicedeskv1.Approval{Approver: v.Actor, Roles: v.Roles, VersionNumber: v.Number,
				Timestamp: apitime.Format(v.At), Signature: v.Signature})
		}
		entries = append(entries, &servicedeskv1.AuditTrailEntry{RequestId: r.ID, VersionNumber: v.Number,
			VersionAction: v.Action, ProcessingSummaryItems: summary(r.Versions[:i+1]), PolicyVersion: r.PolicyVersion, Rule: rule,
			Approvals: slices.Clone(approvals)})
	}
	if pg.Desc {
		for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
			entries[i], entries[j] = entries[j], entries[i]
		}
	}
	total := len(entries)
	start := min(int(pg.Offset), total)
	end := min(start+int(pg.Limit), total)
	return &servicedeskv1.AuditTrail{Total: int32(total), Items: entries[start:end]}
}

// summary groups the steps up to a version by role, in the order roles first acted.
func summary(versions []servicedesk.Version) []*servicedeskv1.ProcessingSummaryItem {
	var items []*servicedeskv1.ProcessingSummaryItem
	byRole := map[string]*servicedeskv1.ProcessingSummaryItem{}
	for _, v := range versions {
		step := &servicedeskv1.ProcessingStep{Name: v.Actor, Status: servicedesk.StepName(v.Action),
			Timestamp: apitime.Format(v.At), CompanyName: v.CompanyName}
		item, ok := byRole[v.Role]
		if !ok {
			item = &servicedeskv1.ProcessingSummaryItem{Role: v.Role}
			byRole[v.Role] = item
			items = append(items, item)
		}
		item.ProcessingSummary = append(item.ProcessingSummary, step)
		item.Name, item.Status, item.Timestamp, item.CompanyName = step.Name, step.Status, step.Timestamp, step.CompanyName
	}
	return items
}

// VerifyAuditTrail recomputes a request's hash chain (internal systems only).
func (s *Server) VerifyAuditTrail(ctx context.Context, req *servicedeskv1.VerifyAuditTrailRequest) (*servicedeskv1.VerifyAuditTrailResponse, error) {
	versions, broken, err := s.desk.Verify(ctx, req.GetRequestId())
	if err != nil {
		return nil, err
	}
	resp := &servicedeskv1.VerifyAuditTrailResponse{Intact: broken == nil, Versions: versions}
	if broken != nil {
		resp.BrokenAtVersion, resp.Reason = broken.Version, broken.Reason
	}
	return resp, nil
}
