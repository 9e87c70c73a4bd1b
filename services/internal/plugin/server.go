package plugin

import (
	"context"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/catalog"
)

// Handler carries out one catalog service for its owner.
type Handler struct {
	// RequestType is the service's CREATE, UPDATE or DEACTIVATE; empty, the registry's
	// (catalog.Lookup).
	RequestType string
	// Validate checks the payload and reserves entity ids; it writes nothing.
	Validate func(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error)
	// Execute carries the request out; it must be safe to repeat (Server runs it once per
	// request id, but a crash between the change and its record runs it again).
	Execute func(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error)
}

// Executions runs an execution once per request id (Ledger).
type Executions interface {
	Once(ctx context.Context, requestID string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error)
}

// Server serves the plugin API from an owner's table of handlers: it admits only the service
// desk, answers services the owner does not carry out with NotAvailable, checks the request's
// company, maker and type, and runs each request's Execute once.
type Server struct {
	pluginv1.UnimplementedPluginServiceServer
	handlers map[string]Handler
	runs     Executions
}

var _ pluginv1.PluginServiceServer = (*Server)(nil)

// NewServer returns the plugin server of handlers (service id → handler). A handler without
// a request type takes the registry's.
func NewServer(runs Executions, handlers map[string]Handler) *Server {
	table := make(map[string]Handler, len(handlers))
	for id, h := range handlers {
		if e, ok := catalog.Lookup(id); ok && h.RequestType == "" {
			h.RequestType = e.RequestType
		}
		table[id] = h
	}
	return &Server{handlers: table, runs: runs}
}

// Validate checks a request at create time.
func (s *Server) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	h, sr, err := s.check(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	return h.Validate(ctx, sr)
}

// Execute carries out an authorised request once per request id: a repeat returns the first
// run's response and changes nothing.
func (s *Server) Execute(ctx context.Context, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteResponse, error) {
	h, sr, err := s.check(ctx, req.GetRequest())
	if err != nil {
		return nil, err
	}
	if sr.GetRequestId() == "" {
		return nil, apperr.Missing("requestId")
	}
	return s.runs.Once(ctx, sr.GetRequestId(), func(ctx context.Context) (*pluginv1.ExecuteResponse, error) {
		return h.Execute(ctx, sr, req.GetEntityIds())
	})
}

func (s *Server) check(ctx context.Context, sr *pluginv1.ServiceRequest) (Handler, *pluginv1.ServiceRequest, error) {
	if sr == nil {
		return Handler{}, nil, apperr.Missing("request")
	}
	h, ok := s.handlers[sr.GetServiceId()]
	if !ok {
		return h, nil, NotAvailable(sr.GetServiceId())
	}
	switch {
	case sr.GetRequestType() != "" && sr.GetRequestType() != h.RequestType:
		return h, nil, apperr.Invalid(apperr.CodeFormat, "requestType", "service %s is a %s request, not %s", sr.GetServiceId(), h.RequestType, sr.GetRequestType())
	case sr.GetCompanyId() == "":
		return h, nil, apperr.Missing("companyId")
	case sr.GetMakerEmail() == "":
		return h, nil, apperr.Missing("makerEmail")
	}
	return h, sr, nil
}

// Payload returns a request's payload as plain Go values (an absent payload is empty).
func Payload(sr *pluginv1.ServiceRequest) map[string]any {
	if sr.GetPayload() == nil {
		return map[string]any{}
	}
	return sr.GetPayload().AsMap()
}
