package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/platform/principal"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/internal/ids"
	"github.com/zcustody/suite/services/servicedesk"
)

// CreateRequest serves endpoint 5. A retry with the same endToEndId and body returns the
// original answer; the same endToEndId with another body is a 409 ER-104.
func (s *Server) CreateRequest(ctx context.Context, req *servicedeskv1.CreateRequestRequest) (*servicedeskv1.CreateRequestResponse, error) {
	p, err := requireRole(ctx, principal.RoleMaker)
	if err != nil {
		return nil, err
	}
	svc, payload, err := s.checkCreate(ctx, p, req)
	if err != nil {
		return nil, err
	}
	hash := bodyHash(svc.ID, payload)
	if prior, err := s.store.RequestByEndToEnd(ctx, p.CompanyID, req.GetEndToEndId()); err == nil {
		return replay(prior, hash)
	} else if !errors.Is(err, apperr.ErrNotFound) {
		return nil, err
	}
	r := servicedesk.NewRequest(ids.RequestID(), servicedesk.Maker{Email: p.UserEmail, CompanyID: p.CompanyID, CompanyName: p.CompanyName},
		svc, req.GetEndToEndId(), payload, hash, s.now())
	validated, err := s.executor.plugins.Validate(ctx, svc.Owner, pluginRequest(r, p.Venues()))
	if err != nil {
		return nil, err
	}
	r.EntityIDs = validated.GetEntityIds()
	if r.PluginDetails, err = encodeDetails(validated.GetDetails()); err != nil {
		return nil, err
	}
	err = s.store.InsertRequest(ctx, r)
	if errors.Is(err, apperr.ErrExists) { // a racing create with the same endToEndId won
		prior, err := s.store.RequestByEndToEnd(ctx, p.CompanyID, req.GetEndToEndId())
		if err != nil {
			return nil, err
		}
		return replay(prior, hash)
	}
	if err != nil {
		return nil, err
	}
	return answer(r)
}

// checkCreate validates the body and returns the catalog service and the canonical payload.
func (s *Server) checkCreate(ctx context.Context, p principal.Principal, req *servicedeskv1.CreateRequestRequest) (servicedesk.Service, string, error) {
	switch {
	case req.GetServiceId() == "":
		return servicedesk.Service{}, "", apperr.Missing("serviceId")
	case req.GetEndToEndId() == "":
		return servicedesk.Service{}, "", apperr.Missing("endToEndId")
	case uuid.Validate(req.GetEndToEndId()) != nil || len(req.GetEndToEndId()) != 36:
		return servicedesk.Service{}, "", apperr.Invalid(apperr.CodeFormat, "endToEndId", "endToEndId must be a UUID")
	case req.GetPayload() == nil:
		return servicedesk.Service{}, "", apperr.Missing("payload")
	}
	found, err := s.store.FindCatalog(ctx, servicedesk.CatalogFilter{Entitled: []string{req.GetServiceId()}, Venue: true})
	if err != nil {
		return servicedesk.Service{}, "", err
	}
	if len(found) == 0 {
		return servicedesk.Service{}, "", apperr.NotFound("serviceId", req.GetServiceId())
	}
	svc := found[0]
	if svc.VenueOnly && len(p.Venues()) == 0 {
		return svc, "", apperr.Forbidden("service %s is offered to the operators of trading venues; company %s operates none", svc.ID, p.CompanyID)
	}
	if !p.Entitled(svc.ID) {
		return svc, "", apperr.Forbidden("you are not entitled to service %s", svc.ID)
	}
	if err := checkTemplate(svc, req.GetPayload()); err != nil {
		return svc, "", err
	}
	payload, err := canonicalPayload(req.GetPayload())
	return svc, payload, err
}

// checkTemplate refuses payload fields the service's template does not have.
func checkTemplate(svc servicedesk.Service, payload *structpb.Struct) error {
	var template map[string]any
	if err := json.Unmarshal([]byte(svc.Template), &template); err != nil {
		return fmt.Errorf("template of %s: %w", svc.ID, err)
	}
	keys := make([]string, 0, len(payload.GetFields()))
	for k := range payload.GetFields() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := template[k]; !ok {
			return apperr.Invalid(apperr.CodeFormat, "payload."+k, "payload field %s is not part of service %s", k, svc.ID)
		}
	}
	return nil
}

func canonicalPayload(payload *structpb.Struct) (string, error) {
	raw, err := protojson.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("encode payload: %w", err)
	}
	c, err := canonical.FromJSON(raw)
	if err != nil {
		return "", err
	}
	if string(c) == "null" {
		return "{}", nil
	}
	return string(c), nil
}

func bodyHash(serviceID, payload string) string {
	sum := sha256.Sum256([]byte(serviceID + "\n" + payload))
	return hex.EncodeToString(sum[:])
}

func replay(prior servicedesk.Request, hash string) (*servicedeskv1.CreateRequestResponse, error) {
	if prior.BodyHash != hash {
		return nil, apperr.Conflict(apperr.CodeExists, "endToEndId %s was already used for a different request", prior.EndToEndID)
	}
	return answer(prior)
}

func answer(r servicedesk.Request) (*servicedeskv1.CreateRequestResponse, error) {
	details, err := decodeDetails(r.PluginDetails)
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.CreateRequestResponse{RequestId: r.ID,
		PluginDetail: &servicedeskv1.PluginDetail{EntityId: nonNil(r.EntityIDs), Details: details}}, nil
}

// pluginRequest is r as its owner's plugin API takes it, with the venues its company
// operates.
func pluginRequest(r servicedesk.Request, venues []string) *pluginv1.ServiceRequest {
	payload := &structpb.Struct{}
	_ = protojson.Unmarshal([]byte(r.Payload), payload) // stored canonical JSON object
	return &pluginv1.ServiceRequest{RequestId: r.ID, ServiceId: r.ServiceID, RequestType: r.RequestType,
		CompanyId: r.CompanyID, CompanyName: r.CompanyName, MakerEmail: r.CreatedBy, Payload: payload, VenueIds: venues}
}

func encodeDetails(details []*structpb.Struct) (string, error) {
	list := make([]json.RawMessage, 0, len(details))
	for _, d := range details {
		raw, err := protojson.Marshal(d)
		if err != nil {
			return "", fmt.Errorf("encode details: %w", err)
		}
		list = append(list, raw)
	}
	data, err := json.Marshal(list)
	return string(data), err
}

func decodeDetails(text string) ([]*structpb.Struct, error) {
	if text == "" {
		return []*structpb.Struct{}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		return nil, fmt.Errorf("decode details: %w", err)
	}
	out := make([]*structpb.Struct, 0, len(list))
	for _, raw := range list {
		d := &structpb.Struct{}
		if err := protojson.Unmarshal(raw, d); err != nil {
			return nil, fmt.Errorf("decode details: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
