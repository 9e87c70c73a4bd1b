package server_test

import (
	"context"
	"regexp"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/zcustody/suite/platform/apperr"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/custody"
)

func createPayload() map[string]any {
	return map[string]any{"name": list("Cold BTC", "Hot ETH"), "currency": list("BTC", "ETH"),
		"currencyId": list("btc-btc", "eth-eth"), "walletOwnerId": list("", "BNF-ZTEST-AB12CD34EF")}
}

func detail(t *testing.T, fields map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidateCreateReservesIDsAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, "SERV-REQ-1", custody.ServiceCreateWallet, createPayload())})
	if err != nil {
		t.Fatal(err)
	}
	patterns := []*regexp.Regexp{regexp.MustCompile(`^ZTEST-NOBENF-[A-Z0-9]{10}$`), regexp.MustCompile(`^ZTEST-BNF-ZTEST-AB12CD34EF-[A-Z0-9]{10}$`)}
	if len(got.GetEntityIds()) != len(patterns) {
		t.Fatalf("entity ids = %v, want one per wallet", got.GetEntityIds())
	}
	for i, p := range patterns {
		if !p.MatchString(got.GetEntityIds()[i]) {
			t.Errorf("entity id %d = %q, want %s", i, got.GetEntityIds()[i], p)
		}
	}
	want := []*structpb.Struct{
		detail(t, map[string]any{"name": "Cold BTC", "currency": "BTC", "currencyId": "btc-btc", "walletOwnerId": "", "isDeFi": false}),
		detail(t, map[string]any{"name": "Hot ETH", "currency": "ETH", "currencyId": "eth-eth", "walletOwnerId": "BNF-ZTEST-AB12CD34EF", "isDeFi": false}),
	}
	if diff := cmp.Diff(want, got.GetDetails(), protocmp.Transform()); diff != "" {
		t.Errorf("details mismatch (-want +got):\n%s", diff)
	}
	if got.GetSubject().GetWalletId() != "" || got.GetSubject().GetCurrency() != "" || got.GetSubject().GetUsdValue() != "" {
		t.Errorf("policy subject of a BTC and an ETH wallet = %v, want none: no wallet yet, no one currency", got.GetSubject())
	}
	if n, m := f.count(t, "wallets"), f.count(t, "plugin_executions"); n != 0 || m != 0 {
		t.Errorf("Validate wrote %d wallets and %d executions, want none", n, m)
	}
}

// TestValidateCreateReportsTheWalletsCurrency: wallets of one currency report it to the
// approval policy, however many the request creates.
func TestValidateCreateReportsTheWalletsCurrency(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	payload := map[string]any{"name": list("Cold BTC", "Warm BTC"), "currency": list("BTC", "BTC"), "currencyId": list("btc-btc", "btc-btc")}
	got, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, "SERV-REQ-1B", custody.ServiceCreateWallet, payload)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&pluginv1.PolicySubject{Currency: "BTC"}, got.GetSubject(), protocmp.Transform()); diff != "" {
		t.Errorf("policy subject mismatch (-want +got):\n%s", diff)
	}
}

func TestExecuteCreateTwiceCreatesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sr := request(t, "SERV-REQ-2", custody.ServiceCreateWallet, createPayload())
	reserved, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	exec := &pluginv1.ExecuteRequest{Request: sr, EntityIds: reserved.GetEntityIds()}
	first, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.plugin.Execute(servicedesk(), exec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second, protocmp.Transform()); diff != "" {
		t.Errorf("second Execute differs (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(reserved.GetEntityIds(), first.GetEntityIds()); diff != "" {
		t.Errorf("executed ids differ from the reserved ones (-want +got):\n%s", diff)
	}
	wantDetail := detail(t, map[string]any{"walletId": reserved.GetEntityIds()[0], "status": "ACTIVE", "name": "Cold BTC",
		"currency": "BTC", "currencyId": "btc-btc", "walletOwnerId": "", "isDeFi": false})
	if diff := cmp.Diff(wantDetail, first.GetDetails()[0], protocmp.Transform()); diff != "" {
		t.Errorf("first detail mismatch (-want +got):\n%s", diff)
	}
	wallets, err := f.store.ListByCompany(context.Background(), company)
	if err != nil {
		t.Fatal(err)
	}
	if len(wallets) != 2 {
		t.Fatalf("%d wallets, want 2", len(wallets))
	}
	byID := map[string]custody.Wallet{wallets[0].ID: wallets[0], wallets[1].ID: wallets[1]}
	eth := byID[reserved.GetEntityIds()[1]]
	b := eth.AssetBalances
	if eth.Name != "Hot ETH" || eth.Status != custody.StatusActive || !eth.Valid || eth.CreatedBy != maker || eth.Blockchain != "ETH" ||
		eth.OwnerID != "BNF-ZTEST-AB12CD34EF" || eth.Version != 1 || len(b) != 1 || b[0].Currency != "ETH" || b[0].LedgerBalance != "0" || b[0].LedgerUnitBalance != "0" {
		t.Errorf("created ETH wallet = %+v, want ACTIVE, valid, by the maker, zero ETH", eth)
	}
}

func TestExecuteCreateConcurrentCreatesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sr := request(t, "SERV-REQ-3", custody.ServiceCreateWallet, createPayload())
	reserved, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	responses := make([]*pluginv1.ExecuteResponse, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: reserved.GetEntityIds()})
			if err != nil {
				t.Errorf("Execute %d: %v", i, err)
			}
			responses[i] = resp
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if diff := cmp.Diff(responses[0], responses[i], protocmp.Transform()); diff != "" {
			t.Errorf("response %d differs (-0 +%d):\n%s", i, i, diff)
		}
	}
	if got := f.count(t, "wallets"); got != 2 {
		t.Errorf("%d wallets after %d concurrent executions, want 2", got, n)
	}
	for _, id := range reserved.GetEntityIds() {
		w, err := f.store.Wallet(context.Background(), company, id)
		if err != nil || w.Version != 1 {
			t.Errorf("wallet %s = version %d, %v; want created once at version 1", id, w.Version, err)
		}
	}
}

func TestExecuteCreateAfterACrashFindsItsWallets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sr := request(t, "SERV-REQ-4", custody.ServiceCreateWallet, createPayload())
	reserved, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: sr})
	if err != nil {
		t.Fatal(err)
	}
	// A first run inserted the first wallet and died before recording the execution.
	f.put(t, company, reserved.GetEntityIds()[0], func(w *custody.Wallet) { w.Name = "Cold BTC"; w.LastRequestID = "SERV-REQ-4" })
	resp, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: reserved.GetEntityIds()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetEntityIds()) != 2 || f.count(t, "wallets") != 2 {
		t.Errorf("Execute after a crash = %v with %d wallets, want both wallets", resp.GetEntityIds(), f.count(t, "wallets"))
	}
}

func TestExecuteCreateChecksReservedIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sr := request(t, "SERV-REQ-5", custody.ServiceCreateWallet, createPayload())
	tests := []struct {
		name    string
		give    []string
		wantErr wantErr
	}{
		{"none", nil, wantErr{codes.InvalidArgument, apperr.CodeMissing, "entityIds"}},
		{"too few", []string{"ZTEST-NOBENF-ABCDEFGHIJ"}, wantErr{codes.InvalidArgument, apperr.CodeLength, "entityIds"}},
		{"other company", []string{"ZACME-NOBENF-ABCDEFGHIJ", "ZTEST-BNF-ZTEST-AB12CD34EF-ABCDEFGHIJ"}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityIds"}},
		{"owner swapped", []string{"ZTEST-BNF-ZTEST-AB12CD34EF-ABCDEFGHIJ", "ZTEST-NOBENF-ABCDEFGHIJ"}, wantErr{codes.InvalidArgument, apperr.CodeFormat, "entityIds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: tt.give})
			checkErr(t, err, tt.wantErr)
		})
	}
	if n := f.count(t, "wallets"); n != 0 {
		t.Errorf("refused executions wrote %d wallets", n)
	}
}

// TestCreateChecksTheOwner: a wallet's walletOwnerId must be an active beneficiary of the
// requesting company, at validation and again at execution: another company's, a made-up id
// (404 ER-102) and a deactivated one (409 ER-113) are refused, naming the field.
func TestCreateChecksTheOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	one := func(owner string) map[string]any {
		return map[string]any{"name": list("Owned"), "currency": list("BTC"), "currencyId": list("btc-btc"), "walletOwnerId": list(owner)}
	}
	for _, tt := range []struct {
		name, owner string
		code        codes.Code
		er, field   string
	}{
		{"another company's beneficiary", acmeBeneficiary, codes.NotFound, apperr.CodeNotFound, "walletOwnerId"},
		{"a made-up beneficiary", "BNF-ZTEST-MADEUP0000", codes.NotFound, apperr.CodeNotFound, "walletOwnerId"},
		{"a deactivated beneficiary", dormantBeneficiary, codes.FailedPrecondition, apperr.CodeDeactivated, "walletOwnerId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, "SERV-REQ-O", custody.ServiceCreateWallet, one(tt.owner))})
			checkErr(t, err, wantErr{tt.code, tt.er, tt.field})
		})
	}
	if _, err := f.plugin.Validate(servicedesk(), &pluginv1.ValidateRequest{Request: request(t, "SERV-REQ-OK", custody.ServiceCreateWallet, one(ownBeneficiary))}); err != nil {
		t.Errorf("the company's own active beneficiary: %v", err)
	}
	// Execution checks again: an id reserved for another company's beneficiary creates nothing.
	sr := request(t, "SERV-REQ-X", custody.ServiceCreateWallet, one(acmeBeneficiary))
	_, err := f.plugin.Execute(servicedesk(), &pluginv1.ExecuteRequest{Request: sr, EntityIds: []string{custody.NewWalletID(company, acmeBeneficiary)}})
	checkErr(t, err, wantErr{codes.NotFound, apperr.CodeNotFound, "walletOwnerId"})
	if n := f.count(t, "wallets"); n != 0 {
		t.Errorf("%d wallets created for another company's beneficiary", n)
	}
}
