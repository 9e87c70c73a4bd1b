package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/principal"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/policy"
)

// Plugins calls the owning services' plugin API as the service desk (servicedesk.Owners).
type Plugins struct {
	clients map[string]pluginv1.PluginServiceClient // owner service name → client
	signer  *principal.Signer
}

var _ servicedesk.Owners = (*Plugins)(nil)

// NewPlugins returns the plugin caller; signer issues the service desk's system principal.
func NewPlugins(clients map[string]pluginv1.PluginServiceClient, signer *principal.Signer) *Plugins {
	return &Plugins{clients: clients, signer: signer}
}

// Add registers the plugin client of an owner service.
func (p *Plugins) Add(owner string, c pluginv1.PluginServiceClient) { p.clients[owner] = c }

func (p *Plugins) client(ctx context.Context, owner string) (context.Context, pluginv1.PluginServiceClient, error) {
	c, ok := p.clients[owner]
	if !ok {
		return nil, nil, fmt.Errorf("no plugin client for owner %q", owner)
	}
	ctx, err := p.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: catalog.Servicedesk})
	if err != nil {
		return nil, nil, err
	}
	return ctx, c, nil
}

// Validate asks the owner to check a new request and reserve its entity ids; the owner's
// refusal is returned as it came (its status carries the owner's ER code and field).
func (p *Plugins) Validate(ctx context.Context, r servicedesk.Request, venues []string) (servicedesk.Validated, error) {
	ctx, c, err := p.client(ctx, r.Owner)
	if err != nil {
		return servicedesk.Validated{}, err
	}
	resp, err := c.Validate(ctx, &pluginv1.ValidateRequest{Request: pluginRequest(r, venues)})
	if err != nil {
		return servicedesk.Validated{}, err
	}
	details, err := encodeDetails(resp.GetDetails())
	if err != nil {
		return servicedesk.Validated{}, err
	}
	subject, err := policySubject(resp.GetSubject())
	if err != nil {
		return servicedesk.Validated{}, fmt.Errorf("owner %s of %s: %w", r.Owner, r.ServiceID, err)
	}
	return servicedesk.Validated{EntityIDs: resp.GetEntityIds(), Details: details, Subject: subject}, nil
}

// policySubject reads what an owner reports a request to be for the policy: its USD value a
// canonical decimal, its destination one of the policy's kinds (both optional). Anything
// else is the owner's fault, never the maker's: an internal error.
func policySubject(s *pluginv1.PolicySubject) (policy.Subject, error) {
	out := policy.Subject{WalletID: s.GetWalletId(), Currency: s.GetCurrency(), Destination: s.GetDestination()}
	if out.Destination != "" && !slices.Contains(policy.Destinations(), out.Destination) {
		return out, fmt.Errorf("destination %q is not one of %v", out.Destination, policy.Destinations())
	}
	if s.GetUsdValue() == "" {
		return out, nil
	}
	usd, err := amount.Parse(s.GetUsdValue())
	if err != nil {
		return out, fmt.Errorf("usd value %q: %w", s.GetUsdValue(), err)
	}
	v := amount.FromDecimal(usd)
	out.USD = &v
	return out, nil
}

// Execute asks the owner to carry out an authorised request (idempotent by request id). Its
// refusal or failure is a *servicedesk.OwnerError classed by the status code.
func (p *Plugins) Execute(ctx context.Context, r servicedesk.Request, venues []string) error {
	ctx, c, err := p.client(ctx, r.Owner)
	if err != nil {
		return err
	}
	_, err = c.Execute(ctx, &pluginv1.ExecuteRequest{Request: pluginRequest(r, venues), EntityIds: r.EntityIDs})
	if err != nil {
		st := status.Convert(err)
		return &servicedesk.OwnerError{Failure: failure(st.Code()), Code: st.Code().String(), Reason: st.Message()}
	}
	return nil
}

// failure classes an owner's status code: an outage passes, an internal error may pass, the
// rest is the owner's refusal.
func failure(code codes.Code) servicedesk.Failure {
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
		return servicedesk.Outage
	case codes.Internal, codes.Unknown:
		return servicedesk.Fault
	}
	return servicedesk.Refused
}

// pluginRequest is r as its owner's plugin API takes it, with the venues its company
// operates.
func pluginRequest(r servicedesk.Request, venues []string) *pluginv1.ServiceRequest {
	payload := &structpb.Struct{}
	_ = protojson.Unmarshal([]byte(r.Payload), payload) // stored canonical JSON object
	return &pluginv1.ServiceRequest{RequestId: r.ID, ServiceId: r.ServiceID, RequestType: r.RequestType,
		CompanyId: r.CompanyID, CompanyName: r.CompanyName, MakerEmail: r.CreatedBy, Payload: payload, VenueIds: venues}
}

// encodeDetails stores the owner's details as a JSON array of objects.
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
