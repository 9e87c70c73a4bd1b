// Package authz enforces, in one place per service, who may call each gRPC method: every
// service declares a Policy (full method name → Rule), and the server's interceptor refuses
// any call the policy does not allow — including calls to methods it does not list.
// Company scoping of the data stays in the handlers.
package authz

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
)

// Rule says which callers may use one method.
type Rule struct {
	// Company admits company-level callers (a signed request without submitter-id).
	Company bool
	// Roles admits API users holding any of these roles (principal.RoleViewer, …).
	Roles []string
	// Systems admits internal systems by name; "*" admits any trusted internal system.
	Systems []string
	// Operators narrows Company and Roles to the callers whose company operates a trading
	// venue (principal.Principal.Venues): the venue's side of interchange (DESIGN.md §8).
	Operators bool
}

// Anyone of a company: company-level callers and users of every role.
var Anyone = Rule{Company: true, Roles: []string{principal.RoleViewer, principal.RoleMaker, principal.RoleChecker}}

// Users of any role, but not company-level callers.
var Users = Rule{Roles: []string{principal.RoleViewer, principal.RoleMaker, principal.RoleChecker}}

// System admits the named internal systems only.
func System(names ...string) Rule { return Rule{Systems: names} }

// Allows reports whether p may call under r.
func (r Rule) Allows(p principal.Principal) bool {
	switch p.Kind {
	case principal.KindCompany:
		return r.Company && p.CompanyID != "" && r.operates(p)
	case principal.KindUser:
		return p.CompanyID != "" && slices.ContainsFunc(r.Roles, p.HasRole) && r.operates(p)
	case principal.KindSystem:
		return slices.Contains(r.Systems, "*") || slices.Contains(r.Systems, p.System)
	}
	return false
}

// operates reports whether p's company operates a venue, if r asks for one.
func (r Rule) operates(p principal.Principal) bool { return !r.Operators || len(p.Venues()) > 0 }

// Policy maps full gRPC method names ("/pkg.Service/Method") to their rule.
type Policy map[string]Rule

// publicPrefixes need no principal and no rule: probes and service discovery.
var publicPrefixes = []string{"/grpc.health.v1.Health/", "/grpc.reflection."}

// UnaryServerInterceptor refuses calls the policy does not allow. It runs after the principal
// was verified (principal.Verifier's interceptor).
func (p Policy) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := p.check(ctx, info.FullMethod); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// StreamServerInterceptor is the streaming counterpart of UnaryServerInterceptor.
func (p Policy) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if err := p.check(ss.Context(), info.FullMethod); err != nil {
			return err
		}
		return handler(srv, ss)
	}
}

func (p Policy) check(ctx context.Context, method string) error {
	for _, prefix := range publicPrefixes {
		if strings.HasPrefix(method, prefix) {
			return nil
		}
	}
	caller, ok := principal.FromContext(ctx)
	if !ok {
		return apperr.Unauthenticated("missing caller credentials")
	}
	rule, listed := p[method]
	if listed && rule.Allows(caller) {
		return nil
	}
	name := method[strings.LastIndex(method, "/")+1:]
	if listed && rule.Operators && !rule.operates(caller) {
		plain := rule
		plain.Operators = false
		if plain.Allows(caller) {
			// The one refusal a company can act on: say which company and why.
			return apperr.Forbidden("the caller may not use %s: company %s operates no trading venue", name, caller.CompanyID)
		}
	}
	return apperr.Forbidden("the caller may not use %s", name)
}
