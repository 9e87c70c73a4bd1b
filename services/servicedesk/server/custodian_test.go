package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/server"
	"github.com/zcustody/suite/services/servicedesk/store"
)

// journalOwner stands in for trading's or custody's plugin API: it records the requests it
// validates and executes, and reports subject (when set) as what each request is for the
// approval policy.
type journalOwner struct {
	pluginv1.PluginServiceClient
	mu                  sync.Mutex
	validated, executed []string
	subject             *pluginv1.PolicySubject
}

func (o *journalOwner) Validate(_ context.Context, req *pluginv1.ValidateRequest, _ ...grpc.CallOption) (*pluginv1.ValidateResponse, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.validated = append(o.validated, req.GetRequest().GetRequestId())
	return &pluginv1.ValidateResponse{EntityIds: []string{req.GetRequest().GetRequestId() + ":reversal"}, Subject: o.subject}, nil
}

// report makes the owner report subject for the requests it validates next.
func (o *journalOwner) report(subject *pluginv1.PolicySubject) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.subject = subject
}

func (o *journalOwner) Execute(_ context.Context, req *pluginv1.ExecuteRequest, _ ...grpc.CallOption) (*pluginv1.ExecuteResponse, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.executed = append(o.executed, req.GetRequest().GetRequestId())
	return &pluginv1.ExecuteResponse{EntityIds: req.GetEntityIds()}, nil
}

// TestLedgerReversalIsTheCustodians: the ledger reversal (0x0009-001) is offered to the
// custodian's company only, at create and again at execution, and goes to the service whose
// journal its payload names.
func TestLedgerReversalIsTheCustodians(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.SyncCatalog(ctx, servicedesk.Catalog()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []servicedesk.Company{{ID: "ZC", Name: "House", Active: true, Custodian: true}, {ID: "ZT", Name: "Client", Active: true}} {
		if err := st.PutCompany(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	trading, custody := &journalOwner{}, &journalOwner{}
	plugins := server.NewPlugins(map[string]pluginv1.PluginServiceClient{"trading": trading, "custody": custody},
		principal.NewSigner("servicedesk", make([]byte, 64), time.Minute))
	desk := servicedesk.New(servicedesk.Config{Store: st, Owners: plugins, Grace: grace})
	actor := func(company string) servicedesk.Actor {
		return servicedesk.Actor{Email: "m@" + company, CompanyID: company, Roles: []string{principal.RoleMaker},
			Entitlements: []string{servicedesk.ServiceLedgerReversal}}
	}
	create := func(company, payload string) (servicedesk.Request, error) {
		return desk.Create(ctx, actor(company), servicedesk.Draft{ServiceID: servicedesk.ServiceLedgerReversal, EndToEndID: uuid.NewString(), Payload: []byte(payload)})
	}

	tests := []struct {
		name, company, payload string
		wantOwner              string
		wantCode, wantField    string
	}{
		{name: "a client", company: "ZT", payload: `{"journal":"trading","entryId":"dep:1"}`, wantCode: apperr.CodeForbidden},
		{name: "trading's journal", company: "ZC", payload: `{"journal":"trading","entryId":"dep:1"}`, wantOwner: "trading"},
		{name: "custody's journal", company: "ZC", payload: `{"journal":"custody","entryId":"dep:1"}`, wantOwner: "custody"},
		{name: "custody's journal in the template's form", company: "ZC", payload: `{"journal":["custody"],"entryId":["dep:1"]}`, wantOwner: "custody"},
		{name: "an unknown journal", company: "ZC", payload: `{"journal":"interchange","entryId":"dep:1"}`, wantCode: apperr.CodeFormat, wantField: "payload.journal"},
		{name: "no journal", company: "ZC", payload: `{"entryId":"dep:1"}`, wantCode: apperr.CodeMissing, wantField: "payload.journal"},
	}
	for _, tt := range tests {
		r, err := create(tt.company, tt.payload)
		var e *apperr.Error
		switch {
		case tt.wantCode != "" && (!errors.As(err, &e) || e.Code != tt.wantCode || e.Field != tt.wantField):
			t.Errorf("%s: %v; want %s on %q", tt.name, err, tt.wantCode, tt.wantField)
		case tt.wantCode == "" && (err != nil || r.Owner != tt.wantOwner):
			t.Errorf("%s: owner %q, %v; want %s", tt.name, r.Owner, err, tt.wantOwner)
		}
	}
	if len(trading.validated) != 1 || len(custody.validated) != 2 {
		t.Errorf("validations: trading %v, custody %v; want one and two", trading.validated, custody.validated)
	}

	// Authorised, then the company is no longer the custodian: the execution is refused.
	r, err := create("ZC", `{"journal":"trading","entryId":"dep:2"}`)
	if err != nil {
		t.Fatal(err)
	}
	r, err = st.Apply(ctx, r, servicedesk.Transition{From: []string{servicedesk.StatusPendingConfirmation}, To: servicedesk.StatusAuthorised,
		Action: servicedesk.ActionApproved, Role: servicedesk.RoleChecker, Actor: "c@ZC"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutCompany(ctx, servicedesk.Company{ID: "ZC", Name: "House", Active: true}); err != nil {
		t.Fatal(err)
	}
	if got := desk.Execute(ctx, r); got.Status != servicedesk.StatusFailed || len(trading.executed) != 0 {
		t.Errorf("execution once ZC is no custodian: %s after %d executions; want FAILED, none", got.Status, len(trading.executed))
	}
}
