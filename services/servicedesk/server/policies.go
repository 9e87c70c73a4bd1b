package server

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/platform/apitime"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// GetPolicy serves the policy extension: a version of the caller's company's approval
// policy, the one in force by default.
func (s *Server) GetPolicy(ctx context.Context, req *servicedeskv1.GetPolicyRequest) (*servicedeskv1.GetPolicyResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	pol, err := s.desk.Policy(ctx, actor(p), req.GetVersion())
	if err != nil {
		return nil, err
	}
	return policyOut(pol), nil
}

// ListPolicyVersions serves the policy versions extension: newest first, the default
// (version 0) last.
func (s *Server) ListPolicyVersions(ctx context.Context, _ *servicedeskv1.ListPolicyVersionsRequest) (*servicedeskv1.ListPolicyVersionsResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	versions, err := s.desk.PolicyVersions(ctx, actor(p))
	if err != nil {
		return nil, err
	}
	out := &servicedeskv1.ListPolicyVersionsResponse{Items: make([]*servicedeskv1.GetPolicyResponse, 0, len(versions))}
	for _, v := range versions {
		out.Items = append(out.Items, policyOut(v))
	}
	return out, nil
}

// DryRunPolicy serves the policy dry run: the rule of the policy in force that would decide a
// request with this body, and the approvals it would need.
func (s *Server) DryRunPolicy(ctx context.Context, req *servicedeskv1.DryRunPolicyRequest) (*servicedeskv1.DryRunPolicyResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	draft := servicedesk.Draft{ServiceID: req.GetServiceId()}
	if req.GetPayload() != nil {
		if draft.Payload, err = protojson.Marshal(req.GetPayload()); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
	}
	pol, rule, err := s.desk.DryRun(ctx, actor(p), draft)
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.DryRunPolicyResponse{Quorum: quorumOf(pol.Version, rule, rule.Tally(nil, p.UserEmail))}, nil
}

// quorumOf is a rule's quorum as the API shows it.
func quorumOf(version int64, rule policy.Rule, t policy.Tally) *servicedeskv1.Quorum {
	q := &servicedeskv1.Quorum{PolicyVersion: version, Rule: rule.Name, Action: rule.Action, Combine: rule.Combine, Met: t.Met}
	for _, g := range t.Groups {
		q.Groups = append(q.Groups, &servicedeskv1.QuorumGroup{Name: g.Name, Threshold: int32(g.Threshold), Approvals: int32(g.Approvals), Missing: int32(g.Missing())})
	}
	return q
}

// policyOut is a policy version as the API shows it.
func policyOut(p policy.Policy) *servicedeskv1.GetPolicyResponse {
	out := &servicedeskv1.GetPolicyResponse{CompanyId: p.CompanyID, Version: p.Version, RequestId: p.RequestID, CreatedBy: p.CreatedBy}
	if !p.CreatedAt.IsZero() {
		out.CreatedAt = apitime.Format(p.CreatedAt)
	}
	for _, r := range p.Rules {
		rule := &servicedeskv1.PolicyRule{Name: r.Name, Operations: r.Operations, Wallets: r.Wallets, Currencies: r.Currencies, MinUsd: r.MinUSD,
			Destinations: r.Destinations, Action: r.Action, Combine: r.Combine}
		for _, g := range r.Groups {
			rule.Groups = append(rule.Groups, &servicedeskv1.ApprovalGroup{Name: g.Name, Users: g.Users, Roles: g.Roles, Threshold: int32(g.Threshold)})
		}
		out.Rules = append(out.Rules, rule)
	}
	out.Limits = limitsOut(p.Limits)
	return out
}

// limitsOut is a policy's limits as the API shows them.
func limitsOut(limits []policy.Limit) []*servicedeskv1.PolicyLimit {
	out := make([]*servicedeskv1.PolicyLimit, 0, len(limits))
	for _, l := range limits {
		pl := &servicedeskv1.PolicyLimit{Name: l.Name, Scope: l.Scope, Wallets: l.Wallets, Currency: l.Currency,
			MaxPerTransaction: l.MaxPerTransaction, Amount: l.Amount}
		if l.Window > 0 {
			pl.Window = l.Window.String()
		}
		out = append(out, pl)
	}
	return out
}

// GetCompanyLimits serves interchange the limits of a company's policy in force.
func (s *Server) GetCompanyLimits(ctx context.Context, req *servicedeskv1.GetCompanyLimitsRequest) (*servicedeskv1.GetCompanyLimitsResponse, error) {
	if req.GetCompanyId() == "" {
		return nil, apperr.Missing("companyId")
	}
	pol, err := s.desk.Policy(ctx, servicedesk.Actor{CompanyID: req.GetCompanyId()}, 0)
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.GetCompanyLimitsResponse{PolicyVersion: pol.Version, Limits: limitsOut(pol.Limits)}, nil
}
