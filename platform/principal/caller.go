package principal

import (
	"context"

	"github.com/zcustody/suite/platform/apperr"
)

// Who is calling, one helper per need. None of them decides who may call: each service's
// authorization policy does (services/internal/authz), in the server's interceptor chain,
// before any handler runs. A handler asks for the identity it needs to scope or record its
// work; the helpers' errors only guard a handler reached without that identity, which the
// chain never lets through.

// Company returns the caller acting for a company, whose data the call reads or changes: a
// company-level caller, one of the company's API users, or an internal system acting for
// the company its token names (CompanyID). The company's venues are Venues(). A caller
// acting for no company is 403 ER-403; a context without a caller 401 ER-401.
func Company(ctx context.Context) (Principal, error) {
	p, ok := FromContext(ctx)
	if !ok {
		return Principal{}, apperr.Unauthenticated("missing caller credentials")
	}
	if p.CompanyID == "" {
		return Principal{}, apperr.Forbidden("this operation needs a company caller")
	}
	return p, nil
}

// User returns the calling API user of a company (a request with submitter-id): the caller
// of an action that records or names its author (UserEmail). Any other caller is 403
// ER-403; a context without a caller 401 ER-401.
func User(ctx context.Context) (Principal, error) {
	p, ok := FromContext(ctx)
	if !ok {
		return Principal{}, apperr.Unauthenticated("missing caller credentials")
	}
	if p.Kind != KindUser || p.CompanyID == "" || p.UserEmail == "" {
		return Principal{}, apperr.Forbidden("this operation needs an API user (submitter-id)")
	}
	return p, nil
}
