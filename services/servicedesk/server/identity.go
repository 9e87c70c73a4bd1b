package server

import (
	"context"
	"errors"

	"github.com/zcustody/suite/platform/apperr"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/servicedesk"
)

// Directory is what the identity handler needs from the store.
type Directory interface {
	Company(ctx context.Context, id string) (servicedesk.Company, error)
	User(ctx context.Context, companyID, email string) (servicedesk.User, error)
	UserByID(ctx context.Context, id string) (servicedesk.User, error)
}

// Identity implements servicedeskv1.IdentityServiceServer for the gateway.
type Identity struct {
	servicedeskv1.UnimplementedIdentityServiceServer
	dir Directory
}

var _ servicedeskv1.IdentityServiceServer = (*Identity)(nil)

// NewIdentity returns the identity server.
func NewIdentity(dir Directory) *Identity { return &Identity{dir: dir} }

// GetCaller returns a company and, when asked, one of its users (the policy admits the
// gateway and custody).
func (i *Identity) GetCaller(ctx context.Context, req *servicedeskv1.GetCallerRequest) (*servicedeskv1.GetCallerResponse, error) {
	if req.GetCompanyId() == "" {
		return nil, apperr.Missing("companyId")
	}
	c, err := i.dir.Company(ctx, req.GetCompanyId())
	if err != nil {
		return nil, err
	}
	resp := &servicedeskv1.GetCallerResponse{Company: &servicedeskv1.Company{Id: c.ID, Name: c.Name, Active: c.Active, PublicKeys: c.PublicKeys, DomainId: c.DomainID,
		VenueIds: c.VenueIDs, Custodian: c.Custodian}}
	if req.GetUserEmail() == "" {
		return resp, nil
	}
	u, err := i.dir.User(ctx, c.ID, req.GetUserEmail())
	if errors.Is(err, apperr.ErrNotFound) {
		return resp, nil
	}
	if err != nil {
		return nil, err
	}
	resp.User = userProto(u)
	return resp, nil
}

// GetUser returns one user by id and their company's domain (internal systems only).
func (i *Identity) GetUser(ctx context.Context, req *servicedeskv1.GetUserRequest) (*servicedeskv1.GetUserResponse, error) {
	if req.GetUserId() == "" {
		return nil, apperr.Missing("userId")
	}
	u, err := i.dir.UserByID(ctx, req.GetUserId())
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, apperr.NotFound("userId", req.GetUserId())
	}
	if err != nil {
		return nil, err
	}
	c, err := i.dir.Company(ctx, u.CompanyID)
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.GetUserResponse{User: userProto(u), CompanyDomainId: c.DomainID}, nil
}

func userProto(u servicedesk.User) *servicedeskv1.User {
	return &servicedeskv1.User{Id: u.ID, Email: u.Email, CompanyId: u.CompanyID, Roles: u.Roles, Entitlements: u.Entitlements, Active: u.Active, PublicKey: u.PublicKey}
}
