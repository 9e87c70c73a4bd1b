package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
)

// TestLedgerReversalOfCustodysJournal: the service desk's 0x0009-001 naming journal
// "custody" reverses an entry of custody's journal (accounts keyed by currency id), in part.
func TestLedgerReversalOfCustodysJournal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const w = "ZTEST-NOBENF-REV"
	f.open(t, company, w, "btc-btc", "2")
	entry := "put:" + w + ":btc-btc:deposit" // the opening balance's deposit
	accounts, err := f.store.Journal().Accounts(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	world := ""
	for _, l := range mustLegs(t, f, entry) {
		if l != w {
			world = l
		}
	}
	payload, err := structpb.NewStruct(map[string]any{"journal": "custody", "entryId": entry, "amounts": []any{
		map[string]any{"account": w, "currency": "btc-btc", "amount": "0.5"},
		map[string]any{"account": world, "currency": "btc-btc", "amount": "0.5"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := &pluginv1.ServiceRequest{RequestId: "SERV-REQ-CREV", ServiceId: "0x0009-001", RequestType: "CREATE", CompanyId: "ZCUSTODY",
		MakerEmail: "api-maker@zcustody.example", Payload: payload}
	v, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: r, EntityIds: v.GetEntityIds()}); err != nil {
		t.Fatal(err)
	}
	after, err := f.store.Journal().Accounts(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if before, now := accounts["btc-btc"].Ledger().String(), after["btc-btc"].Ledger().String(); before != "2" || now != "1.5" {
		t.Errorf("ledger balance %s → %s, want 2 → 1.5", before, now)
	}
	// Trading's journal is not custody's: a request naming it is refused here.
	payload.Fields["journal"] = structpb.NewStringValue("trading")
	if _, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: r}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("journal trading at custody: %v, want InvalidArgument", err)
	}
}

// mustLegs returns the holders of the legs of entry id's full reversal (PlanReversal writes
// nothing).
func mustLegs(t *testing.T, f fixture, id string) []string {
	t.Helper()
	e, err := f.store.Journal().PlanReversal(context.Background(), id, nil, "plan")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range e.Legs {
		out = append(out, l.Holder)
	}
	return out
}
