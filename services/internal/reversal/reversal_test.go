package reversal_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/internal/journal"
	"github.com/zcustody/suite/services/internal/plugin"
	"github.com/zcustody/suite/services/internal/reversal"
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

func places(c string) (int32, bool) { return 8, c == "BTC" }

type fixture struct {
	ctx    context.Context
	j      *journal.Journal
	plugin *plugin.Server
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	db := testdb.New(t)
	f := fixture{ctx: t.Context()}
	f.j = journal.New(journal.Config{DB: db, Collections: []string{"wallets"}, Policy: func(h string) journal.HolderPolicy {
		if strings.HasPrefix(h, "W") {
			return journal.HolderPolicy{Collection: "wallets", Constrained: true}
		}
		return journal.HolderPolicy{Collection: "journal_accounts", Create: true}
	}})
	if err := f.j.EnsureIndexes(f.ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"W1", "W2"} {
		if _, err := db.Collection("wallets").InsertOne(f.ctx, bson.D{{Key: "_id", Value: w}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []journal.Entry{transfer("dep-1", "world", "W1", "5"), transfer("t-1", "W1", "W2", "1")} {
		if _, err := f.j.Record(f.ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	f.plugin = plugin.NewServer(&memory{done: map[string]*pluginv1.ExecuteResponse{}},
		map[string]plugin.Handler{catalog.LedgerReversal: reversal.Handler("trading", f.j, places)})
	return f
}

func transfer(id, from, to, a string) journal.Entry {
	return journal.Entry{ID: id, Kind: journal.Single, Code: "test", BusinessKey: id, Legs: []journal.Leg{
		{Holder: from, Currency: "BTC", Side: journal.Debit, Amount: amount.MustStored(a)},
		{Holder: to, Currency: "BTC", Side: journal.Credit, Amount: amount.MustStored(a)},
	}}
}

func request(t *testing.T, id string, payload map[string]any) *pluginv1.ServiceRequest {
	t.Helper()
	p, err := structpb.NewStruct(payload)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginv1.ServiceRequest{RequestId: id, ServiceId: catalog.LedgerReversal, RequestType: catalog.Create, CompanyId: "ZCUSTODY",
		MakerEmail: "api-maker@zcustody.example", Payload: p}
}

func (f fixture) ledger(t *testing.T, h string) string {
	t.Helper()
	acc, err := f.j.Accounts(f.ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	return acc["BTC"].Ledger().String()
}

// TestValidateAnswersInTheContractsErrors: every refusal of a reversal request comes back
// with its status, ER code and payload field, before anyone approves it.
func TestValidateAnswersInTheContractsErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	leg := func(account, a string) map[string]any {
		return map[string]any{"account": account, "currency": "BTC", "amount": a}
	}
	tests := []struct {
		name      string
		payload   map[string]any
		wantCode  string
		wantField string
		wantGRPC  codes.Code
	}{
		{"unknown entry", map[string]any{"journal": "trading", "entryId": "t-none"}, apperr.CodeNotFound, "entryId", codes.NotFound},
		{"over the original", map[string]any{"journal": "trading", "entryId": "t-1", "amounts": []any{leg("W1", "1.5"), leg("W2", "1.5")}},
			apperr.CodeConflict, "amounts", codes.FailedPrecondition},
		{"unbalanced", map[string]any{"journal": "trading", "entryId": "t-1", "amounts": []any{leg("W1", "0.5"), leg("W2", "0.4")}},
			apperr.CodeFormat, "amounts", codes.InvalidArgument},
		{"an account outside the entry", map[string]any{"journal": "trading", "entryId": "t-1", "amounts": []any{leg("W9", "0.5"), leg("W2", "0.5")}},
			apperr.CodeFormat, "amounts", codes.InvalidArgument},
		{"another journal", map[string]any{"journal": "custody", "entryId": "t-1"}, apperr.CodeFormat, "journal", codes.InvalidArgument},
		{"no entry", map[string]any{"journal": "trading"}, apperr.CodeMissing, "entryId", codes.InvalidArgument},
		{"unknown field", map[string]any{"journal": "trading", "entryId": "t-1", "walletId": "W1"}, apperr.CodeFormat, "walletId", codes.InvalidArgument},
		{"unsupported currency", map[string]any{"journal": "trading", "entryId": "t-1",
			"amounts": []any{map[string]any{"account": "W1", "currency": "DOGE", "amount": "1"}}}, apperr.CodeCurrency, "amounts[0].currency", codes.InvalidArgument},
		{"amount too fine", map[string]any{"journal": "trading", "entryId": "t-1", "amounts": []any{leg("W1", "0.000000001"), leg("W2", "0.1")}},
			apperr.CodeFormat, "amounts[0].amount", codes.InvalidArgument},
		{"a bad side", map[string]any{"journal": "trading", "entryId": "t-1",
			"amounts": []any{map[string]any{"account": "W1", "currency": "BTC", "amount": "1", "side": "LEFT"}}}, apperr.CodeFormat, "amounts[0].side", codes.InvalidArgument},
		{"empty amounts", map[string]any{"journal": "trading", "entryId": "t-1", "amounts": []any{}}, apperr.CodeEmptyList, "amounts", codes.InvalidArgument},
	}
	for _, tt := range tests {
		_, err := f.plugin.Validate(f.ctx, &pluginv1.ValidateRequest{Request: request(t, "SERV-REQ-1", tt.payload)})
		var e *apperr.Error
		if !errors.As(err, &e) || e.Code != tt.wantCode || e.Field != tt.wantField || e.Status != tt.wantGRPC {
			t.Errorf("%s: %v; want %s on %s (%s)", tt.name, err, tt.wantCode, tt.wantField, tt.wantGRPC)
		}
	}
}

// TestExecuteReverses: the reversal is recorded once under the id derived from the request;
// a second request for more than is left fails with the contract's error.
func TestExecuteReverses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	part := map[string]any{"journal": "trading", "entryId": "t-1", "reason": "booked twice",
		"amounts": []any{map[string]any{"account": "W1", "currency": "BTC", "amount": "0.6"}, map[string]any{"account": "W2", "currency": "BTC", "amount": "0.6", "side": "CREDIT"}}}
	v, err := f.plugin.Validate(f.ctx, &pluginv1.ValidateRequest{Request: request(t, "SERV-REQ-1", part)})
	if err != nil {
		t.Fatal(err)
	}
	if id := reversal.EntryID("SERV-REQ-1"); len(v.GetEntityIds()) != 1 || v.GetEntityIds()[0] != id {
		t.Fatalf("reserved %v, want [%s]", v.GetEntityIds(), id)
	}
	if legs := v.GetDetails()[0].AsMap()["legs"].([]any); len(legs) != 2 {
		t.Errorf("details legs = %v", legs)
	}
	for range 2 { // a repeated execution is the same reversal
		resp, err := f.plugin.Execute(f.ctx, &pluginv1.ExecuteRequest{Request: request(t, "SERV-REQ-1", part), EntityIds: v.GetEntityIds()})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetDetails()[0].AsMap()["reverses"]; got != "t-1" {
			t.Errorf("execution details reverses %v", got)
		}
	}
	if got := f.ledger(t, "W2"); got != "0.4" {
		t.Errorf("W2 = %s, want 0.4", got)
	}
	full := map[string]any{"journal": "trading", "entryId": "t-1"}
	_, err = f.plugin.Execute(f.ctx, &pluginv1.ExecuteRequest{Request: request(t, "SERV-REQ-2", full), EntityIds: []string{reversal.EntryID("SERV-REQ-2")}})
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != apperr.CodeConflict || e.Field != "amounts" {
		t.Errorf("a full reversal after a partial one: %v; want ER-409 on amounts", err)
	}
	rest := map[string]any{"journal": "trading", "entryId": "t-1",
		"amounts": []any{map[string]any{"account": "W1", "currency": "BTC", "amount": "0.4"}, map[string]any{"account": "W2", "currency": "BTC", "amount": "0.4"}}}
	if _, err := f.plugin.Execute(f.ctx, &pluginv1.ExecuteRequest{Request: request(t, "SERV-REQ-3", rest)}); err != nil {
		t.Fatalf("the rest: %v", err)
	}
	if got := f.ledger(t, "W2"); got != "0" {
		t.Errorf("W2 = %s, want 0", got)
	}
	r, err := f.j.Reconcile(f.ctx)
	if err != nil || !r.Clean() {
		t.Fatalf("reconcile: %v %v", err, r.Violations)
	}
}
