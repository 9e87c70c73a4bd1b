package contract_test

import (
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// TestEventsAsDocumented reads every event the suite recorded for a client and for a venue
// operator (the operations of the tests above cause them), and checks each as a subscriber
// would receive it against the document's webhook of its type: the type is documented, and
// the body, `data` included, is the schema the webhook declares (no undeclared field, every
// required one present). The document is what integrators generate their webhook types from.
func TestEventsAsDocumented(t *testing.T) {
	doc, router := document(t)
	if len(doc.Webhooks) < 30 {
		t.Fatalf("the document has %d webhooks, want one per event type", len(doc.Webhooks))
	}
	companies := []struct {
		id, user string
		key      crypto.PrivateKey
	}{{demo.CompanyZTEST, "ztest", env.key}, {demo.CompanyZBYBIT, "zbybit", env.venueKey}}
	checked := map[string]int{}
	// The relays hand events over within a second of the change; give the last ones time.
	time.Sleep(2 * time.Second)
	for _, c := range companies {
		client := &signing.Client{BaseURL: env.baseURL, Company: c.id, Key: c.key, Submitter: demo.UserEmail(c.user, "maker"),
			HTTP: &http.Client{Timeout: 30 * time.Second}}
		after := ""
		for page := 0; ; page++ {
			if page == 100 {
				t.Fatalf("%s: more than 100 pages of events", c.id)
			}
			body := fmt.Appendf(nil, `{"after":%q,"limit":500}`, after)
			req, err := client.NewRequest(http.MethodPost, "/v3/api/events/search", body)
			if err != nil {
				t.Fatal(err)
			}
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: events search: %d %v %s", c.id, resp.StatusCode, err, got)
			}
			checkAnswer(t, req, route, params, resp.StatusCode, resp.Header, got)
			var res struct {
				Items     []map[string]any `json:"items"`
				NextToken string           `json:"nextToken"`
				HasMore   bool             `json:"hasMore"`
			}
			if err := json.Unmarshal(got, &res); err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Items {
				typ, _ := e["type"].(string)
				if err := asWebhook(doc, e); err != nil {
					t.Errorf("%s event %v (%s) is not its documented webhook: %v\nevent: %v", c.id, e["id"], typ, err, e)
					continue
				}
				checked[typ]++
			}
			if !res.HasMore {
				break
			}
			after = res.NextToken
		}
	}
	t.Logf("events checked against their webhooks: %v", checked)
	// The tests above create wallets, service requests, VASP activations and whitelisted
	// addresses at least; a check that saw few types proved little.
	if len(checked) < 4 {
		t.Errorf("only %d event types were recorded (%v), want at least 4", len(checked), checked)
	}
}

// asWebhook checks event e, as the events search lists it, against the body schema of the
// webhook of its type: the same event as a delivery carries it (entity version a number, no
// log sequence).
func asWebhook(doc *openapi3.T, e map[string]any) error {
	typ, _ := e["type"].(string)
	item := doc.Webhooks[typ]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return fmt.Errorf("no webhook for type %q", typ)
	}
	mt := item.Post.RequestBody.Value.Content.Get("application/json")
	if mt == nil {
		return fmt.Errorf("webhook %s has no JSON body", typ)
	}
	body := map[string]any{}
	for k, v := range e {
		if k != "sequence" {
			body[k] = v
		}
	}
	entity, _ := e["entity"].(map[string]any)
	version, err := strconv.ParseInt(fmt.Sprint(entity["version"]), 10, 64)
	if err != nil {
		return fmt.Errorf("entity version %v: %w", entity["version"], err)
	}
	body["entity"] = map[string]any{"type": entity["type"], "id": entity["id"], "version": float64(version)}
	if err := mt.Schema.Value.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
		return err
	}
	// Every field the data declares required is there (the schema says so, and the services
	// write default values), and nothing it does not declare.
	data, _ := e["data"].(map[string]any)
	schema := mt.Schema.Value.AllOf[1].Value.Properties["data"].Value
	for _, name := range schema.Required {
		if _, ok := data[name]; !ok {
			return fmt.Errorf("data has no %s", name)
		}
	}
	for name := range data {
		if _, ok := schema.Properties[name]; !ok {
			return fmt.Errorf("data has %s, which the schema does not declare (declared: %v)", name, slices.Sorted(maps.Keys(schema.Properties)))
		}
	}
	return nil
}
