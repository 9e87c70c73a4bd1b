package server

import (
	"context"
	"encoding/json"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
)

// requireUser returns the calling API user; company-level and system callers are refused.
func requireUser(ctx context.Context) (principal.Principal, error) {
	p, ok := principal.FromContext(ctx)
	if !ok {
		return p, apperr.Unauthenticated("missing caller credentials")
	}
	if p.Kind != principal.KindUser || p.CompanyID == "" || p.UserEmail == "" {
		return p, apperr.Forbidden("this operation needs an API user (submitter-id)")
	}
	return p, nil
}

// requireRole returns the calling API user if they hold role.
func requireRole(ctx context.Context, role string) (principal.Principal, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return p, err
	}
	if !p.HasRole(role) {
		return p, apperr.Forbidden("this operation needs the %s role", role)
	}
	return p, nil
}

// requireSystem returns the calling internal system.
func requireSystem(ctx context.Context) (principal.Principal, error) {
	p, ok := principal.FromContext(ctx)
	if !ok || p.Kind != principal.KindSystem {
		return p, apperr.Forbidden("this operation is reserved to internal systems")
	}
	return p, nil
}

// jsonRoundTrip turns v into the plain JSON types structpb accepts.
func jsonRoundTrip(v any) map[string]any {
	data, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}
