// Package server is the service desk's gRPC edge: proto ↔ domain, errors → statuses.
package server

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/principal"
	"github.com/zcustody/suite/services/servicedesk"
)

// Catalog is what the handlers need from the store.
type Catalog interface {
	FindCatalog(ctx context.Context, f servicedesk.CatalogFilter) ([]servicedesk.Service, error)
}

// Server implements servicedeskv1.ServicedeskServiceServer. Methods a later issue implements
// answer Unimplemented through the embedded type.
type Server struct {
	servicedeskv1.UnimplementedServicedeskServiceServer
	catalog Catalog
}

var _ servicedeskv1.ServicedeskServiceServer = (*Server)(nil)

// New returns the server.
func New(catalog Catalog) *Server { return &Server{catalog: catalog} }

// ListProducts serves endpoint 6: the catalog filtered by the caller's entitlements and by
// every documented filter.
func (s *Server) ListProducts(ctx context.Context, req *servicedeskv1.ListProductsRequest) (*servicedeskv1.ListProductsResponse, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return nil, err
	}
	filter, err := catalogFilter(req, p.Entitlements)
	if err != nil {
		return nil, err
	}
	services, err := s.catalog.FindCatalog(ctx, filter)
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

func catalogFilter(req *servicedeskv1.ListProductsRequest, entitled []string) (servicedesk.CatalogFilter, error) {
	f := servicedesk.CatalogFilter{Entitled: entitled}
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
			return f, apperr.Invalid(apperr.CodeFormat, "productIds", "%v", err)
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

// requireUser returns the calling API user; company-level and system callers are refused.
func requireUser(ctx context.Context) (principal.Principal, error) {
	p, ok := principal.FromContext(ctx)
	if !ok {
		return p, apperr.Unauthenticated("missing caller credentials")
	}
	if p.Kind != principal.KindUser || p.CompanyID == "" {
		return p, apperr.Forbidden("this operation needs an API user (submitter-id)")
	}
	return p, nil
}
