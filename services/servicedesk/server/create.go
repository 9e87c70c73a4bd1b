package server

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/servicedesk"
)

// CreateRequest serves endpoint 5 (servicedesk.Desk.Create: a retry with the same endToEndId
// and body returns the original answer).
func (s *Server) CreateRequest(ctx context.Context, req *servicedeskv1.CreateRequestRequest) (*servicedeskv1.CreateRequestResponse, error) {
	p, err := principal.User(ctx)
	if err != nil {
		return nil, err
	}
	draft := servicedesk.Draft{ServiceID: req.GetServiceId(), EndToEndID: req.GetEndToEndId()}
	if req.GetPayload() != nil {
		if draft.Payload, err = protojson.Marshal(req.GetPayload()); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
	}
	r, err := s.desk.Create(ctx, actor(p), draft)
	if err != nil {
		return nil, err
	}
	details, err := decodeDetails(r.PluginDetails)
	if err != nil {
		return nil, err
	}
	return &servicedeskv1.CreateRequestResponse{RequestId: r.ID,
		PluginDetail: &servicedeskv1.PluginDetail{EntityId: nonNil(r.EntityIDs), Details: details}}, nil
}

// decodeDetails reads the owner's details as stored (a JSON array of objects).
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
