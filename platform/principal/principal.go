// Package principal carries the verified identity of a caller from the gateway (or an internal
// system) to the services: a short-lived token signed with Ed25519, sent in gRPC metadata.
package principal

import (
	"context"
	"slices"
)

// MetadataKey is the gRPC metadata key that carries the signed principal token.
const MetadataKey = "x-principal"

// Kinds of callers.
const (
	KindUser    = "user"    // an API user of a company (submitter-id was verified)
	KindCompany = "company" // a company-level call (no submitter-id on the endpoint)
	KindSystem  = "system"  // an internal system (the gateway itself, a settlement engine)
)

// Roles of API users.
const (
	RoleViewer  = "VIEWER"
	RoleMaker   = "MAKER"
	RoleChecker = "CHECKER"
)

// Principal is who is calling, as verified by the issuer of its token.
type Principal struct {
	Issuer       string   `json:"iss"`
	Kind         string   `json:"kind"`
	CompanyID    string   `json:"cid,omitempty"`
	CompanyName  string   `json:"cnm,omitempty"`
	UserEmail    string   `json:"usr,omitempty"`
	Roles        []string `json:"rol,omitempty"`
	Entitlements []string `json:"ent,omitempty"`
	// VenueIDs are the trading venues the caller's company operates (DESIGN §8: the venue's
	// side of interchange); empty for a client company.
	VenueIDs []string `json:"ven,omitempty"`
	// System names the internal system for KindSystem (e.g. "gateway").
	System    string `json:"sys,omitempty"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
}

// HasRole reports whether the principal holds role.
func (p Principal) HasRole(role string) bool { return slices.Contains(p.Roles, role) }

// OperatesVenue reports whether the caller's company operates venue venueID.
func (p Principal) OperatesVenue(venueID string) bool {
	return venueID != "" && slices.Contains(p.Venues(), venueID)
}

// Venues returns the venues the caller's company operates: its VenueIDs without the empty
// ones (an empty id names no venue, and must never match a record that has none).
func (p Principal) Venues() []string {
	out := make([]string, 0, len(p.VenueIDs))
	for _, v := range p.VenueIDs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Entitled reports whether the principal may use the catalog service serviceID.
func (p Principal) Entitled(serviceID string) bool { return slices.Contains(p.Entitlements, serviceID) }

type ctxKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal of ctx, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
