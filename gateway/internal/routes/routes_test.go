package routes_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/zcustody/suite/gateway/internal/routes"
)

func table(t *testing.T) *routes.Table {
	t.Helper()
	tab, err := routes.Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return tab
}

// route is a Route without its compiled pattern.
type route struct {
	Method, Template, Selector, OperationID string
	SubmitterRequired                       bool
}

// TestLoadFromProtos checks the routes read from the protos' google.api.http options: the
// contract's fifteen endpoints and the extensions, each with its published operation name and
// whether submitter-id is required (endpoints 1, 2, 5, 6, 7, 8, 10, 12 and 13, and the
// lifecycle extensions, whose actor is a user).
func TestLoadFromProtos(t *testing.T) {
	t.Parallel()
	want := []route{
		// Sorted by path template, then method.
		{"GET", "/v2/api/core/wallets", "custody.v1.CustodyService.ListLegacyWallets", "returnAllWallets", false},
		{"POST", "/v2/api/core/wallets/{wallet_id}/action", "custody.v1.CustodyService.ActOnLegacyWallet", "approveOrRejectWallet", false},
		{"GET", "/v2/api/core/wallets/{wallet_id}/proposal", "custody.v1.CustodyService.GetLegacyWalletProposal", "getWalletProposal", true},
		{"POST", "/v3/api/compliance/vasps/search", "compliance.v1.ComplianceService.SearchVasps", "searchVasps", false},
		{"POST", "/v3/api/compliance/vasps/{vasp_id}/activate/{valid}", "compliance.v1.ComplianceService.SetVaspActivation", "activateOrDeactivateVasp", false},
		{"POST", "/v3/api/custody/currencies/fees", "custody.v1.CustodyService.ListLedgerFees", "retrieveLedgerFees", true},
		{"POST", "/v3/api/custody/wallets/balance-as-of", "custody.v1.CustodyService.GetWalletBalanceAsOf", "getCustodyWalletBalanceAsOf", false},
		{"POST", "/v3/api/custody/wallets/history", "custody.v1.CustodyService.ListWalletHistory", "listCustodyWalletHistory", false},
		{"POST", "/v3/api/custody/wallets/{wallet_id}/activate/{currency_id}", "custody.v1.CustodyService.ActivateTrustline", "createStellarTrustline", true},
		{"POST", "/v3/api/events/deliveries/search", "events.v1.WebhookService.SearchDeliveryAttempts", "searchWebhookDeliveryAttempts", false},
		{"POST", "/v3/api/events/search", "events.v1.EventsService.SearchEvents", "searchEvents", false},
		{"POST", "/v3/api/events/subscriptions", "events.v1.WebhookService.CreateSubscription", "createWebhookSubscription", true},
		{"POST", "/v3/api/events/subscriptions/search", "events.v1.WebhookService.SearchSubscriptions", "searchWebhookSubscriptions", false},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/approve", "events.v1.WebhookService.ApproveSubscriptionChange", "approveWebhookSubscriptionChange", true},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/delete", "events.v1.WebhookService.DeleteSubscription", "deleteWebhookSubscription", true},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/enable", "events.v1.WebhookService.EnableSubscription", "enableWebhookSubscription", true},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/reject", "events.v1.WebhookService.RejectSubscriptionChange", "rejectWebhookSubscriptionChange", true},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/resend", "events.v1.WebhookService.ResendEvents", "resendWebhookEvents", true},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/rotate-secret", "events.v1.WebhookService.RotateSubscriptionSecret", "rotateWebhookSecret", true},
		{"POST", "/v3/api/events/subscriptions/{subscription_id}/update", "events.v1.WebhookService.UpdateSubscription", "updateWebhookSubscription", true},
		{"POST", "/v3/api/interchange/settlement/create", "interchange.v1.InterchangeService.CreateSettlement", "createSettlementInstruction", false},
		{"POST", "/v3/api/interchange/settlement/search", "interchange.v1.InterchangeService.SearchSettlements", "searchSettlements", false},
		{"POST", "/v3/api/interchange/settlement/status", "interchange.v1.InterchangeService.GetSettlementStatus", "getSettlementStatus", false},
		{"POST", "/v3/api/interchange/settlement/wallet/addresses", "interchange.v1.InterchangeService.ListSettlementWalletAddresses", "listSettlementWalletAddresses", true},
		{"POST", "/v3/api/interchange/settlement/wallet/whitelisted/address", "interchange.v1.InterchangeService.ListWhitelistedAddresses", "listWhitelistedAddresses", false},
		{"POST", "/v3/api/interchange/withdrawal/confirm", "interchange.v1.InterchangeService.ConfirmWithdrawal", "confirmOrRejectWithdrawal", false},
		{"POST", "/v3/api/interchange/withdrawal/search", "interchange.v1.InterchangeService.SearchWithdrawals", "searchWithdrawals", false},
		{"POST", "/v3/api/servicedesk/approve", "servicedesk.v1.ServicedeskService.ApproveRequest", "approveServiceRequest", true},
		{"POST", "/v3/api/servicedesk/audit-trail", "servicedesk.v1.ServicedeskService.GetAuditTrail", "retrieveAuditTrail", true},
		{"POST", "/v3/api/servicedesk/cancel", "servicedesk.v1.ServicedeskService.CancelRequest", "cancelServiceRequest", true},
		{"POST", "/v3/api/servicedesk/create", "servicedesk.v1.ServicedeskService.CreateRequest", "createServiceRequest", true},
		{"POST", "/v3/api/servicedesk/pending", "servicedesk.v1.ServicedeskService.GetPendingRequest", "getPendingServiceRequest", true},
		{"POST", "/v3/api/servicedesk/policy", "servicedesk.v1.ServicedeskService.GetPolicy", "getApprovalPolicy", true},
		{"POST", "/v3/api/servicedesk/policy/dry-run", "servicedesk.v1.ServicedeskService.DryRunPolicy", "dryRunApprovalPolicy", true},
		{"POST", "/v3/api/servicedesk/policy/versions", "servicedesk.v1.ServicedeskService.ListPolicyVersions", "listApprovalPolicyVersions", true},
		{"POST", "/v3/api/servicedesk/products", "servicedesk.v1.ServicedeskService.ListProducts", "retrieveProductsAndServices", true},
		{"POST", "/v3/api/servicedesk/requests", "servicedesk.v1.ServicedeskService.SearchRequests", "searchServiceRequests", true},
		{"POST", "/v3/api/trading/vaults/addresses", "trading.v1.TradingService.ListVaultAddresses", "listVaultAddresses", true},
		{"POST", "/v3/api/trading/wallets", "trading.v1.TradingService.SearchWallets", "searchTradingWallets", true},
		{"POST", "/v3/api/trading/wallets/balance-as-of", "trading.v1.TradingService.GetWalletBalanceAsOf", "getTradingWalletBalanceAsOf", false},
		{"POST", "/v3/api/trading/wallets/history", "trading.v1.TradingService.ListWalletHistory", "listTradingWalletHistory", false},
	}
	var got []route
	for _, r := range table(t).Routes() {
		got = append(got, route{r.Method, r.Template, r.Selector, r.OperationID, r.SubmitterRequired})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load() routes mismatch (-want +got):\n%s", diff)
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tab := table(t)
	tests := []struct {
		give       string
		giveMethod string
		want       string
	}{
		{give: "/v3/api/servicedesk/requests", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.SearchRequests"},
		{give: "/v3/api/trading/wallets", giveMethod: "POST", want: "trading.v1.TradingService.SearchWallets"},
		{give: "/v3/api/interchange/settlement/create", giveMethod: "POST", want: "interchange.v1.InterchangeService.CreateSettlement"},
		{give: "/v2/api/core/wallets/W1/action", giveMethod: "POST", want: "custody.v1.CustodyService.ActOnLegacyWallet"},
		{give: "/v3/api/servicedesk/create", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.CreateRequest"},
		{give: "/v3/api/servicedesk/products", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.ListProducts"},
		{give: "/v3/api/trading/vaults/addresses", giveMethod: "POST", want: "trading.v1.TradingService.ListVaultAddresses"},
		{give: "/v3/api/interchange/settlement/wallet/addresses", giveMethod: "POST", want: "interchange.v1.InterchangeService.ListSettlementWalletAddresses"},
		{give: "/v3/api/interchange/settlement/wallet/whitelisted/address", giveMethod: "POST", want: "interchange.v1.InterchangeService.ListWhitelistedAddresses"},
		{give: "/v3/api/servicedesk/audit-trail", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.GetAuditTrail"},
		{give: "/v3/api/servicedesk/pending", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.GetPendingRequest"},
		{give: "/v3/api/servicedesk/approve", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.ApproveRequest"},
		{give: "/v3/api/servicedesk/cancel", giveMethod: "POST", want: "servicedesk.v1.ServicedeskService.CancelRequest"},
		{give: "/v3/api/interchange/withdrawal/confirm", giveMethod: "POST", want: "interchange.v1.InterchangeService.ConfirmWithdrawal"},
		{give: "/v3/api/custody/currencies/fees", giveMethod: "POST", want: "custody.v1.CustodyService.ListLedgerFees"},
		{give: "/v3/api/custody/wallets/W-42/activate/xlm-usdc", giveMethod: "POST", want: "custody.v1.CustodyService.ActivateTrustline"},
		{give: "/v2/api/core/wallets", giveMethod: "GET", want: "custody.v1.CustodyService.ListLegacyWallets"},
		{give: "/v3/api/compliance/vasps/V/activate/true", giveMethod: "POST", want: "compliance.v1.ComplianceService.SetVaspActivation"},
		// A variable is matched whatever its value; the service validates it.
		{give: "/v3/api/compliance/vasps/V/activate/maybe", giveMethod: "POST", want: "compliance.v1.ComplianceService.SetVaspActivation"},
	}
	for _, tt := range tests {
		t.Run(tt.giveMethod+" "+tt.give, func(t *testing.T) {
			t.Parallel()
			r, ok := tab.Match(tt.giveMethod, tt.give)
			if !ok {
				t.Fatalf("Match(%s, %s) found no route", tt.giveMethod, tt.give)
			}
			if r.Selector != tt.want || r.Method != tt.giveMethod {
				t.Errorf("Match(%s, %s) = %s %s, want %s %s", tt.giveMethod, tt.give, r.Method, r.Selector, tt.giveMethod, tt.want)
			}
		})
	}
}

func TestMatchNone(t *testing.T) {
	t.Parallel()
	tab := table(t)
	tests := []struct {
		name       string
		give       string
		giveMethod string
	}{
		{name: "wrong method on POST path", give: "/v3/api/trading/wallets", giveMethod: "GET"},
		{name: "wrong method on GET path", give: "/v2/api/core/wallets", giveMethod: "POST"},
		{name: "lowercase method", give: "/v3/api/trading/wallets", giveMethod: "post"},
		{name: "extra segment", give: "/v3/api/trading/wallets/extra", giveMethod: "POST"},
		{name: "extra segment after variables", give: "/v3/api/compliance/vasps/V/activate/true/x", giveMethod: "POST"},
		{name: "trailing garbage", give: "/v3/api/trading/walletsX", giveMethod: "POST"},
		{name: "trailing slash", give: "/v2/api/core/wallets/", giveMethod: "GET"},
		{name: "leading garbage", give: "/x/v3/api/trading/wallets", giveMethod: "POST"},
		{name: "variable spanning segments", give: "/v2/api/core/wallets/W/1/action", giveMethod: "POST"},
		{name: "literal is not a pattern", give: "/v3/api/servicedesk/audit-trail", giveMethod: "GET"},
		{name: "unknown path", give: "/v3/api/nope", giveMethod: "POST"},
		{name: "empty path", give: "", giveMethod: "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if r, ok := tab.Match(tt.giveMethod, tt.give); ok {
				t.Errorf("Match(%s, %q) = %s, want no route", tt.giveMethod, tt.give, r.Selector)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	tab := table(t)
	tests := []struct {
		give string
		want []string
	}{
		{give: "/v3/api/servicedesk/products", want: []string{"POST"}},
		{give: "/v2/api/core/wallets/W1/action", want: []string{"POST"}},
		{give: "/v3/api/compliance/vasps/V/activate/false", want: []string{"POST"}},
		{give: "/v2/api/core/wallets", want: []string{"GET"}},
		{give: "/v3/api/nope", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tab.Allowed(tt.give)); diff != "" {
				t.Errorf("Allowed(%s) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestAllowedSeveralMethods(t *testing.T) {
	t.Parallel()
	tab, err := routes.New(
		routes.Route{Method: "PUT", Template: "/v1/things/{id}", Selector: "a.v1.A.Put"},
		routes.Route{Method: "GET", Template: "/v1/things/{id}", Selector: "a.v1.A.Get"},
		routes.Route{Method: "DELETE", Template: "/v1/things/{id}", Selector: "a.v1.A.Delete"},
	)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if diff := cmp.Diff([]string{"DELETE", "GET", "PUT"}, tab.Allowed("/v1/things/7")); diff != "" {
		t.Errorf("Allowed mismatch (-want +got):\n%s", diff)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give []routes.Route
	}{
		{name: "no routes", give: nil},
		{name: "no method", give: []routes.Route{{Template: "/v1/x", Selector: "a.v1.A.B"}}},
		{name: "relative template", give: []routes.Route{{Method: "POST", Template: "v1/x", Selector: "a.v1.A.B"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := routes.New(tt.give...); err == nil {
				t.Errorf("New(%v) succeeded, want an error", tt.give)
			}
		})
	}
}

// TestMatchAgreesWithMux checks the table against grpc-gateway's own matching of the same
// rules: the gateway decides on submitter-id and the Allow header with the table, and
// dispatches with the mux, so both must see the same route.
func TestMatchAgreesWithMux(t *testing.T) {
	t.Parallel()
	tab := table(t)
	mux := runtime.NewServeMux()
	for _, r := range tab.Routes() {
		if err := mux.HandlePath(r.Method, r.Template, func(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
			w.Header().Set("X-Selector", r.Selector)
		}); err != nil {
			t.Fatalf("HandlePath(%s %s): %v", r.Method, r.Template, err)
		}
	}
	tests := []struct {
		give       string
		giveMethod string
	}{
		{give: "/v3/api/custody/wallets/W1/activate/xlm-usdc", giveMethod: "POST"},
		{give: "/v2/api/core/wallets/W1/action", giveMethod: "POST"},
		{give: "/v2/api/core/wallets", giveMethod: "GET"},
		{give: "/v3/api/trading/wallets/x", giveMethod: "POST"},
		{give: "/v3/api/trading/wallets", giveMethod: "GET"},
		{give: "/v3/api/custody/wallets//activate/xlm-usdc", giveMethod: "POST"},
		{give: "/v3/api/custody/wallets/W1/activate/", giveMethod: "POST"},
		{give: "/v2/api/core/wallets//action", giveMethod: "POST"},
		{give: "/v3/api/compliance/vasps/V/activate/", giveMethod: "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.giveMethod+" "+tt.give, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(tt.giveMethod, tt.give, nil))
			want := rec.Header().Get("X-Selector")
			got, _ := tab.Match(tt.giveMethod, tt.give)
			if got.Selector != want {
				t.Errorf("Match(%s, %s) = %q, the mux dispatches to %q", tt.giveMethod, tt.give, got.Selector, want)
			}
		})
	}
}
