package server

import (
	"context"
	"fmt"

	"github.com/zcustody/suite/platform/principal"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
)

// Plugins calls the owning services' plugin API as the service desk.
type Plugins struct {
	clients map[string]pluginv1.PluginServiceClient // owner service name → client
	signer  *principal.Signer
}

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
	ctx, err := p.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: "servicedesk"})
	if err != nil {
		return nil, nil, err
	}
	return ctx, c, nil
}

// Validate asks the owner to check a new request and reserve its entity ids.
func (p *Plugins) Validate(ctx context.Context, owner string, req *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
	ctx, c, err := p.client(ctx, owner)
	if err != nil {
		return nil, err
	}
	return c.Validate(ctx, &pluginv1.ValidateRequest{Request: req})
}

// Execute asks the owner to carry out an authorised request (idempotent by request id).
func (p *Plugins) Execute(ctx context.Context, owner string, req *pluginv1.ServiceRequest, entityIDs []string) (*pluginv1.ExecuteResponse, error) {
	ctx, c, err := p.client(ctx, owner)
	if err != nil {
		return nil, err
	}
	return c.Execute(ctx, &pluginv1.ExecuteRequest{Request: req, EntityIds: entityIDs})
}
