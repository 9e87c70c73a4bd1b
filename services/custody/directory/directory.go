// Package directory finds the authors of v2 wallet actions in the service desk, which owns
// users and their approval keys: servicedesk.v1.IdentityService.GetUser, called under the
// custody service's own system principal.
package directory

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/catalog"
)

// System is the system name of custody's own principal.
const System = catalog.Custody

// Directory looks users up by id.
type Directory struct {
	identity servicedeskv1.IdentityServiceClient
	signer   *principal.Signer
}

// New returns a directory over the service desk's identity API; signer issues custody's
// system principal.
func New(identity servicedeskv1.IdentityServiceClient, signer *principal.Signer) *Directory {
	return &Directory{identity: identity, signer: signer}
}

// Author returns the user with id and their company's domain. An unknown user answers
// apperr.ErrNotFound; a service desk that cannot answer, a 503.
func (d *Directory) Author(ctx context.Context, id string) (custody.Author, error) {
	ctx, err := d.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return custody.Author{}, err
	}
	resp, err := d.identity.GetUser(ctx, &servicedeskv1.GetUserRequest{UserId: id})
	if err != nil {
		return custody.Author{}, lookupError("user "+id, err)
	}
	u := resp.GetUser()
	if u.GetId() != id {
		return custody.Author{}, fmt.Errorf("get user %s: the directory answered user %q", id, u.GetId())
	}
	return author(u, resp.GetCompanyDomainId()), nil
}

// AuthorByEmail returns companyID's user with email and the company's domain (the service
// desk's GetCaller). An unknown company or user answers apperr.ErrNotFound.
func (d *Directory) AuthorByEmail(ctx context.Context, companyID, email string) (custody.Author, error) {
	ctx, err := d.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: System})
	if err != nil {
		return custody.Author{}, err
	}
	resp, err := d.identity.GetCaller(ctx, &servicedeskv1.GetCallerRequest{CompanyId: companyID, UserEmail: email})
	if err != nil {
		return custody.Author{}, lookupError("user "+email+" of "+companyID, err)
	}
	u := resp.GetUser()
	if u == nil || u.GetEmail() != email || u.GetCompanyId() != companyID {
		return custody.Author{}, fmt.Errorf("user %s of %s: %w", email, companyID, apperr.ErrNotFound)
	}
	return author(u, resp.GetCompany().GetDomainId()), nil
}

// lookupError maps a failed look-up of who: not found is apperr.ErrNotFound, a service desk
// that cannot answer a 503, anything else an internal error (logged, never sent).
func lookupError(who string, err error) error {
	switch status.Code(err) {
	case codes.NotFound:
		return fmt.Errorf("%s: %w", who, apperr.ErrNotFound)
	case codes.Unavailable, codes.DeadlineExceeded:
		return &apperr.Error{Status: codes.Unavailable, Code: apperr.CodeUnavailable,
			Message: "the user directory is unavailable; retry later"}
	default:
		return fmt.Errorf("look up %s: %s", who, status.Convert(err).Message())
	}
}

func author(u *servicedeskv1.User, domainID string) custody.Author {
	return custody.Author{ID: u.GetId(), Email: u.GetEmail(), CompanyID: u.GetCompanyId(), DomainID: domainID,
		Roles: u.GetRoles(), Active: u.GetActive(), PublicKey: u.GetPublicKey()}
}
