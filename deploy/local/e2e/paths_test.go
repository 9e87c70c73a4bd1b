package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/gateway"
)

// endpoint is one of the contract's fifteen method and path pairs, as a client calls it.
type endpoint struct {
	number  int
	method  string
	openapi string // the path template of the OpenAPI document
	path    string // a concrete path
	company string
	role    string // maker where the contract sends submitter-id, else company
	body    string
}

var endpoints = []endpoint{
	{1, http.MethodPost, "/v3/api/servicedesk/requests", "/v3/api/servicedesk/requests", demo.CompanyZTEST, maker, `{}`},
	{2, http.MethodPost, "/v3/api/trading/wallets", "/v3/api/trading/wallets", demo.CompanyZTEST, maker, `{}`},
	{3, http.MethodPost, "/v3/api/interchange/settlement/create", "/v3/api/interchange/settlement/create", demo.CompanyZBYBIT, company, `{}`},
	{4, http.MethodPost, "/v2/api/core/wallets/{walletId}/action", "/v2/api/core/wallets/W-E2E-1/action", demo.CompanyZTEST, company, `{}`},
	{5, http.MethodPost, "/v3/api/servicedesk/create", "/v3/api/servicedesk/create", demo.CompanyZTEST, maker, `{}`},
	{6, http.MethodPost, "/v3/api/servicedesk/products", productsPath, demo.CompanyZTEST, maker, `{}`},
	{7, http.MethodPost, "/v3/api/trading/vaults/addresses", "/v3/api/trading/vaults/addresses", demo.CompanyZTEST, maker, `{}`},
	{8, http.MethodPost, "/v3/api/interchange/settlement/wallet/addresses", "/v3/api/interchange/settlement/wallet/addresses", demo.CompanyZTEST, maker, `{}`},
	{9, http.MethodPost, "/v3/api/interchange/settlement/wallet/whitelisted/address", "/v3/api/interchange/settlement/wallet/whitelisted/address", demo.CompanyZTEST, company, `{}`},
	{10, http.MethodPost, "/v3/api/servicedesk/audit-trail", "/v3/api/servicedesk/audit-trail", demo.CompanyZTEST, maker, `{}`},
	{11, http.MethodPost, "/v3/api/interchange/withdrawal/confirm", "/v3/api/interchange/withdrawal/confirm", demo.CompanyZBYBIT, company, `{}`},
	{12, http.MethodPost, "/v3/api/custody/currencies/fees", "/v3/api/custody/currencies/fees", demo.CompanyZTEST, maker, ``},
	{13, http.MethodPost, "/v3/api/custody/wallets/{walletId}/activate/{currencyId}", "/v3/api/custody/wallets/W-E2E-1/activate/usdc-xlm", demo.CompanyZTEST, maker, ``},
	{14, http.MethodGet, "/v2/api/core/wallets", "/v2/api/core/wallets", demo.CompanyZTEST, company, ``},
	// VASP-004 is operator-deactivated: ZACME switching it off for itself touches nothing
	// another test reads.
	{15, http.MethodPost, "/v3/api/compliance/vasps/{vaspId}/activate/{valid}", vaspPath("VASP-004", "false"), demo.CompanyZACME, company, ``},
}

// TestEveryDocumentedPathAnswers: each documented pair reaches its service through the
// gateway: a 2xx with a JSON body, a 4xx of the service in the contract's error body, or 501
// ER-501 while the endpoint is not implemented. Never a routing 404, a 405, a 5xx other than
// 501, or an empty 200. A 404 is accepted only as the service's "entity does not exist"
// (ER-102) for the made-up ids in the path, never as the gateway's "no such path" (ER-404).
func TestEveryDocumentedPathAnswers(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.method+" "+ep.openapi, func(t *testing.T) {
			t.Parallel()
			r := do(t, newClient(ep.company, ep.role), ep.method, ep.path, []byte(ep.body))
			switch {
			case r.status >= 200 && r.status < 300:
				if !json.Valid(r.body) || len(strings.TrimSpace(string(r.body))) < 2 {
					t.Errorf("endpoint %d: %d with body %q, want a JSON body", ep.number, r.status, r.body)
				}
				t.Logf("endpoint %d: %d", ep.number, r.status)
			case r.status == http.StatusNotImplemented:
				wantError(t, r, http.StatusNotImplemented, "ER-501")
				t.Logf("endpoint %d: not implemented yet", ep.number)
			case r.status == http.StatusMethodNotAllowed || r.status >= 500:
				t.Errorf("endpoint %d: status %d; body %s", ep.number, r.status, r.body)
			case r.status >= 400:
				d := decodeError(t, r)
				if r.status == http.StatusNotFound && d.Code != "ER-102" {
					t.Errorf("endpoint %d: 404 %s %q, want the path to be routed", ep.number, d.Code, d.Message)
				}
				if r.status == http.StatusUnauthorized {
					t.Errorf("endpoint %d: a correctly signed request was refused: %q", ep.number, d.Message)
				}
				t.Logf("endpoint %d: %d %s", ep.number, r.status, d.Code)
			default:
				t.Errorf("endpoint %d: status %d; body %s", ep.number, r.status, r.body)
			}
		})
	}
}

func TestOpenAPI(t *testing.T) {
	t.Parallel()
	r := send(t, mustRequest(t, http.MethodGet, env.stack.GatewayURL+"/openapi.json"))
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %.200s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	// The gateway serves the document the build generated (make check-generated keeps it
	// current), as JSON and as YAML, without authentication.
	if !bytes.Equal(r.body, gateway.OpenAPI) {
		t.Errorf("/openapi.json is not the generated gateway/openapi/openapi.json")
	}
	var version struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(r.body, &version); err != nil || version.OpenAPI != "3.1.0" {
		t.Errorf("openapi version %q (%v), want 3.1.0", version.OpenAPI, err)
	}
	ry := send(t, mustRequest(t, http.MethodGet, env.stack.GatewayURL+"/openapi.yaml"))
	if ry.status != http.StatusOK || ry.header.Get("Content-Type") != "application/yaml" || !bytes.Equal(ry.body, gateway.OpenAPIYAML) {
		t.Errorf("/openapi.yaml: status %d, Content-Type %q, generated document %t", ry.status, ry.header.Get("Content-Type"), bytes.Equal(ry.body, gateway.OpenAPIYAML))
	}

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("decode: %v", err)
	}
	// Every contract operation is documented with exactly its method; the document may
	// also hold extensions (DESIGN.md §7), which are not checked here.
	var got, want []string
	for _, ep := range endpoints {
		want = append(want, ep.method+" "+ep.openapi)
		for method := range doc.Paths[ep.openapi] {
			got = append(got, strings.ToUpper(method)+" "+ep.openapi)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contract operations in openapi.json (-contract +openapi.json):\n%s", diff)
	}
	// Tags are the contract's path areas, never the internal gRPC services (issue 12).
	var tagged struct {
		Tags []struct {
			Name string `json:"name"`
		} `json:"tags"`
		Paths map[string]map[string]struct {
			Tags []string `json:"tags"`
		} `json:"paths"`
		Webhooks map[string]map[string]struct {
			Tags []string `json:"tags"`
		} `json:"webhooks"`
	}
	if err := json.Unmarshal(r.body, &tagged); err != nil {
		t.Fatal(err)
	}
	// The contract's areas, and events: the extension area of the event log and webhooks.
	areas := []string{"compliance", "core", "custody", "events", "interchange", "servicedesk", "trading"}
	var declared []string
	for _, tag := range tagged.Tags {
		declared = append(declared, tag.Name)
	}
	slices.Sort(declared)
	// Besides the areas, "webhooks": what the suite sends to subscribers, one per event type.
	if want := append(slices.Clone(areas), "webhooks"); !slices.Equal(declared, want) {
		t.Errorf("declared tags %v, want the contract's areas and webhooks %v", declared, want)
	}
	if len(tagged.Webhooks) == 0 {
		t.Error("the document describes no webhook")
	}
	for name, ops := range tagged.Webhooks {
		for method, op := range ops {
			if method != "post" || !slices.Equal(op.Tags, []string{"webhooks"}) {
				t.Errorf("webhook %s: %s tagged %v, want post tagged webhooks", name, method, op.Tags)
			}
		}
	}
	for path, ops := range tagged.Paths {
		for method, op := range ops {
			if len(op.Tags) != 1 || !slices.Contains(areas, op.Tags[0]) {
				t.Errorf("%s %s is tagged %v, want one of the contract's areas", method, path, op.Tags)
			}
		}
	}
	// No tag, operationId or schema name names a gRPC package or service (issue 12 item 10).
	for _, internal := range []string{
		"common.v1", "servicedesk.v1", "trading.v1", "interchange.v1", "custody.v1", "compliance.v1", "plugin.v1",
		"ServicedeskService", "TradingService", "InterchangeService", "CustodyService", "ComplianceService",
		"IdentityService", "SettlementEngineService", "PluginService", "google.protobuf",
	} {
		if bytes.Contains(r.body, []byte(internal)) {
			t.Errorf("openapi.json names %q", internal)
		}
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	r := send(t, mustRequest(t, http.MethodGet, env.stack.GatewayURL+"/healthz"))
	var got struct {
		Status string   `json:"status"`
		Down   []string `json:"down"`
	}
	wantOK(t, r, &got)
	if got.Status != "SERVING" || len(got.Down) != 0 {
		t.Errorf("healthz %s, want status SERVING and nothing down", r.body)
	}
}
