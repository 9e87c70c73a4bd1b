// Package server is the service desk's gRPC edge: proto ↔ domain, errors → statuses.
package server

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/servicedesk"
)

// Store is what the handlers need from the service desk's store.
type Store interface {
	FindCatalog(ctx context.Context, f servicedesk.CatalogFilter) ([]servicedesk.Service, error)
	User(ctx context.Context, companyID, email string) (servicedesk.User, error)
	InsertRequest(ctx context.Context, r servicedesk.Request) error
	Request(ctx context.Context, companyID, id string) (servicedesk.Request, error)
	RequestByEndToEnd(ctx context.Context, companyID, endToEndID string) (servicedesk.Request, error)
	RequestsByID(ctx context.Context, companyID string, ids []string) ([]servicedesk.Request, error)
	RequestByIDAnyCompany(ctx context.Context, id string) (servicedesk.Request, error)
	SearchRequests(ctx context.Context, f servicedesk.RequestFilter) ([]servicedesk.Request, int64, error)
	Apply(ctx context.Context, r servicedesk.Request, t servicedesk.Transition, at time.Time) (servicedesk.Request, error)
	RecordFailedAttempt(ctx context.Context, id string) (int32, error)
	Company(ctx context.Context, id string) (servicedesk.Company, error)
}

// Server implements servicedeskv1.ServicedeskServiceServer.
type Server struct {
	servicedeskv1.UnimplementedServicedeskServiceServer
	store    Store
	executor *Executor
	now      func() time.Time
}

var _ servicedeskv1.ServicedeskServiceServer = (*Server)(nil)

// New returns the server.
func New(store Store, executor *Executor) *Server {
	return &Server{store: store, executor: executor, now: time.Now}
}

// ListProducts serves endpoint 6: the catalog filtered by the caller's entitlements and by
// every documented filter.
func (s *Server) ListProducts(ctx context.Context, req *servicedeskv1.ListProductsRequest) (*servicedeskv1.ListProductsResponse, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return nil, err
	}
	filter, err := catalogFilter(req, p.Entitlements, len(p.Venues()) > 0)
	if err != nil {
		return nil, err
	}
	services, err := s.store.FindCatalog(ctx, filter)
	if err != nil {
		return nil, err
	}
	resp := &servicedeskv1.ListProductsResponse{Items: make([]*servicedeskv1.CatalogItem, 0, len(services))}
	for _, svc := range services {
		item, err := catalogItem(svc)
		if err != nil {
			return nil, err
		}
		resp.Items = append(resp.Items, item)
	}
	return resp, nil
}

func catalogFilter(req *servicedeskv1.ListProductsRequest, entitled []string, venue bool) (servicedesk.CatalogFilter, error) {
	f := servicedesk.CatalogFilter{Entitled: entitled, Venue: venue}
	var err error
	if f.Products, err = page.Filter("products", req.GetProducts(), servicedesk.Products...); err != nil {
		return f, err
	}
	if f.RequestTypes, err = page.Filter("requestTypes", req.GetRequestTypes(), servicedesk.RequestTypes...); err != nil {
		return f, err
	}
	if f.ServiceIDs, err = page.Filter("serviceIds", req.GetServiceIds()); err != nil {
		return f, err
	}
	if f.ServiceNames, err = page.Filter("serviceNames", req.GetServiceNames()); err != nil {
		return f, err
	}
	ids, err := page.Filter("productIds", req.GetProductIds())
	if err != nil {
		return f, err
	}
	for _, id := range ids {
		n, err := servicedesk.ParseProductID(id)
		if err != nil {
			return f, apperr.Invalid(apperr.CodeFormat, "productIds", "productIds value %q must be hexadecimal (0x0013) or decimal (19)", id)
		}
		f.ProductIDs = append(f.ProductIDs, n)
	}
	return f, nil
}

func catalogItem(svc servicedesk.Service) (*servicedeskv1.CatalogItem, error) {
	template := &structpb.Struct{}
	if err := protojson.Unmarshal([]byte(svc.Template), template); err != nil {
		return nil, fmt.Errorf("template of %s: %w", svc.ID, err)
	}
	return &servicedeskv1.CatalogItem{Product: svc.Product, ProductId: svc.ProductID, ServiceId: svc.ID,
		ServiceName: svc.Name, RequestType: svc.RequestType, Description: svc.Description, Template: template}, nil
}
