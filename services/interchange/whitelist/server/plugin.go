package server

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/plugin"
)

// Handlers are the plugin handlers of the address side's catalog services, 0x0007-007
// (whitelist an address) and 0x0007-008 (deactivate a whitelisted address), for the plugin
// framework (plugin.Server), which checks the caller, the request and runs each once.
func Handlers(book *address.Book) map[string]plugin.Handler {
	h := handlers{book: book}
	return map[string]plugin.Handler{
		address.ServiceWhitelist:  {Validate: h.validateWhitelist, Execute: h.executeWhitelist},
		address.ServiceDeactivate: {Validate: h.validateDeactivate, Execute: h.executeDeactivate},
	}
}

type handlers struct {
	book *address.Book
}

// validateWhitelist checks the payload and its references and reserves the address id.
func (h handlers) validateWhitelist(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	w, err := address.ParseWhitelist(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	planned, err := h.book.PlanWhitelist(ctx, request(sr), w)
	if err != nil {
		return nil, err
	}
	s, err := structpb.NewStruct(planned.Details())
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{planned.ID}, Details: []*structpb.Struct{s}}, nil
}

// validateDeactivate reserves the id of the company's ACTIVE address the payload names.
func (h handlers) validateDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	d, err := address.ParseDeactivate(plugin.Payload(sr))
	if err != nil {
		return nil, err
	}
	w, err := h.book.PlanDeactivate(ctx, request(sr), d)
	if err != nil {
		return nil, err
	}
	s, err := structpb.NewStruct(w.Details())
	if err != nil {
		return nil, err
	}
	return &pluginv1.ValidateResponse{EntityIds: []string{w.ID}, Details: []*structpb.Struct{s}}, nil
}

// executeWhitelist whitelists the address under its reserved id.
func (h handlers) executeWhitelist(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	w, id, err := parseWithID(sr, entityIDs, address.ParseWhitelist)
	if err != nil {
		return nil, err
	}
	return executed(h.book.Whitelist(ctx, request(sr), w, id))
}

// executeDeactivate deactivates the reserved address.
func (h handlers) executeDeactivate(ctx context.Context, sr *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	d, id, err := parseWithID(sr, entityIDs, address.ParseDeactivate)
	if err != nil {
		return nil, err
	}
	return executed(h.book.Deactivate(ctx, request(sr), d, id))
}

// request is the service request as the domain names it.
func request(sr *pluginv1.ServiceRequest) address.Request {
	return address.Request{ID: sr.GetRequestId(), CompanyID: sr.GetCompanyId(), MakerEmail: sr.GetMakerEmail()}
}

// parseWithID parses the payload and the one reserved whitelisted address id.
func parseWithID[T any](sr *pluginv1.ServiceRequest, entityIDs []string, parse func(map[string]any) (T, error)) (T, string, error) {
	v, err := parse(plugin.Payload(sr))
	if err != nil {
		return v, "", err
	}
	if len(entityIDs) == 0 {
		return v, "", apperr.Missing("entityIds")
	}
	if len(entityIDs) != 1 || !address.IsID(entityIDs[0]) {
		return v, "", apperr.Invalid(apperr.CodeFormat, "entityIds", "entityIds must hold one whitelisted address id (a UUID)")
	}
	return v, entityIDs[0], nil
}

// executed is the answer of an execution: the address and its details as stored.
func executed(w address.Whitelisted, err error) (*pluginv1.ExecuteResponse, error) {
	if err != nil {
		return nil, err
	}
	s, err := structpb.NewStruct(w.Details())
	if err != nil {
		return nil, err
	}
	return &pluginv1.ExecuteResponse{EntityIds: []string{w.ID}, Details: []*structpb.Struct{s}}, nil
}
