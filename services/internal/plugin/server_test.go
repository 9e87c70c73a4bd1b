package plugin_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/plugin"
)

// memory is an in-memory plugin.Executions.
type memory struct {
	mu   sync.Mutex
	done map[string]*pluginv1.ExecuteResponse
}

func (m *memory) Once(ctx context.Context, id string, execute func(context.Context) (*pluginv1.ExecuteResponse, error)) (*pluginv1.ExecuteResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if resp, ok := m.done[id]; ok {
		return resp, nil
	}
	resp, err := execute(ctx)
	if err == nil {
		m.done[id] = resp
	}
	return resp, err
}

func servicedesk() context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: plugin.ServicedeskSystem})
}

// TestServerChecks: the framework admits only the service desk, answers unknown services
// with ER-501, and checks the company, the maker and the request type (the registry's when
// the handler names none) before any handler runs.
func TestServerChecks(t *testing.T) {
	t.Parallel()
	var ran int
	handler := plugin.Handler{
		Validate: func(context.Context, *pluginv1.ServiceRequest) (*pluginv1.ValidateResponse, error) {
			ran++
			return &pluginv1.ValidateResponse{EntityIds: []string{"E1"}}, nil
		},
	}
	s := plugin.NewServer(&memory{done: map[string]*pluginv1.ExecuteResponse{}}, map[string]plugin.Handler{
		"0x0003-002": handler, // registered DEACTIVATE
	})
	valid := func() *pluginv1.ServiceRequest {
		return &pluginv1.ServiceRequest{RequestId: "R1", ServiceId: "0x0003-002", RequestType: "DEACTIVATE", CompanyId: "ZT", MakerEmail: "m@zt"}
	}
	tests := []struct {
		name      string
		ctx       context.Context
		edit      func(*pluginv1.ServiceRequest)
		wantCode  string
		wantField string
	}{
		{"valid", servicedesk(), func(*pluginv1.ServiceRequest) {}, "", ""},
		{"no request type: the service's", servicedesk(), func(r *pluginv1.ServiceRequest) { r.RequestType = "" }, "", ""},
		{"another service", servicedesk(), func(r *pluginv1.ServiceRequest) { r.ServiceId = "0x0013-001" }, apperr.CodeUnimplemented, "serviceId"},
		{"wrong request type", servicedesk(), func(r *pluginv1.ServiceRequest) { r.RequestType = "CREATE" }, apperr.CodeFormat, "requestType"},
		{"no company", servicedesk(), func(r *pluginv1.ServiceRequest) { r.CompanyId = "" }, apperr.CodeMissing, "companyId"},
		{"no maker", servicedesk(), func(r *pluginv1.ServiceRequest) { r.MakerEmail = "" }, apperr.CodeMissing, "makerEmail"},
	}
	for _, tt := range tests {
		ran = 0
		r := valid()
		tt.edit(r)
		_, err := s.Validate(tt.ctx, &pluginv1.ValidateRequest{Request: r})
		if tt.wantCode == "" {
			if err != nil || ran != 1 {
				t.Errorf("%s: Validate() = %v after %d runs, want the handler's answer", tt.name, err, ran)
			}
			continue
		}
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != tt.wantCode || ae.Field != tt.wantField || ran != 0 {
			t.Errorf("%s: Validate() = %v after %d runs, want %s on %q and no run", tt.name, err, ran, tt.wantCode, tt.wantField)
		}
	}
}

// TestServerExecutesOnce: a repeated Execute answers the first run's response.
func TestServerExecutesOnce(t *testing.T) {
	t.Parallel()
	var runs int
	s := plugin.NewServer(&memory{done: map[string]*pluginv1.ExecuteResponse{}}, map[string]plugin.Handler{
		"0x0013-001": {Execute: func(_ context.Context, _ *pluginv1.ServiceRequest, ids []string) (*pluginv1.ExecuteResponse, error) {
			runs++
			return &pluginv1.ExecuteResponse{EntityIds: ids}, nil
		}},
	})
	req := &pluginv1.ExecuteRequest{EntityIds: []string{"W1"},
		Request: &pluginv1.ServiceRequest{RequestId: "R1", ServiceId: "0x0013-001", RequestType: "CREATE", CompanyId: "ZT", MakerEmail: "m@zt"}}
	for range 2 {
		resp, err := s.Execute(servicedesk(), req)
		if err != nil || len(resp.GetEntityIds()) != 1 {
			t.Fatalf("Execute() = %v, %v", resp, err)
		}
	}
	if runs != 1 {
		t.Errorf("the handler ran %d times, want once", runs)
	}
	req.Request.RequestId = ""
	if _, err := s.Execute(servicedesk(), req); err == nil {
		t.Error("Execute without a request id succeeded")
	}
}
