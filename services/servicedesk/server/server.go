// Package server is the service desk's gRPC edge: proto ↔ domain and errors → statuses for
// the handlers, and the client of the owners' plugin API (Plugins, servicedesk.Owners). The
// workflow itself is the domain's (servicedesk.Desk).
package server

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/servicedesk"
)

// Server implements servicedeskv1.ServicedeskServiceServer over the desk.
type Server struct {
	servicedeskv1.UnimplementedServicedeskServiceServer
	desk *servicedesk.Desk
}

var _ servicedeskv1.ServicedeskServiceServer = (*Server)(nil)

// New returns the server of desk.
func New(desk *servicedesk.Desk) *Server { return &Server{desk: desk} }

// ListProducts serves endpoint 6: the catalog filtered by the caller's entitlements and by
// every documented filter.
func (s *Server) ListProducts(ctx context.Context, req *servicedeskv1.ListProductsRequest) (*servicedeskv1.ListProductsResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	filter, err := catalogFilter(req, p.Entitlements, len(p.Venues()) > 0)
	if err != nil {
		return nil, err
	}
	if filter.Custodian, err = s.desk.IsCustodian(ctx, p.CompanyID); err != nil {
		return nil, err
	}
	services, err := s.desk.Catalog(ctx, filter)
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
