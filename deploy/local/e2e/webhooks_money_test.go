package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/webhook"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
)

// TestAMoneyFlowReachesASubscriberWholeAndInOrder: a client subscribed to settlements and
// journal postings, as the README shows, receives every event of a settlement that takes its
// money (RECEIVED to COMPLETE, and the postings of its hold and of the payment), each signed
// (v1 and v1a), each entity's events in version order without a gap, each with the data the
// events search shows, and each body the webhook the OpenAPI document declares for its type.
func TestAMoneyFlowReachesASubscriberWholeAndInOrder(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "2", "0", "0", "0")
	rcv := newReceiver(t, func(delivery, int) int { return http.StatusNoContent })
	var types []string
	for _, typ := range eventsv1.EventTypes() {
		if strings.HasPrefix(typ, "settlement.") || typ == "journal.entry.posted" {
			types = append(types, typ)
		}
	}
	sub := subscribeAs(t, demo.CompanyZTEST, rcv.URL+"/money", types...)
	secret, pub := subscriberKeys(t, sub)

	id := f.createSettlement(t, instructionBody("HOOK-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.5")})).SettlementTrackingID
	engine := newSettlementEngine(t)
	for _, to := range []string{"SETTLEMENT_INITIATED", "SETTLEMENT_PAY_IN", "SETTLEMENT_PAY_OUT", "SETTLEMENT_COMPLETE"} {
		engine.mustAdvance(t, id, to, to)
	}

	// The flow's entities as ZTEST sees them: the settlement, and each journal entry of it
	// that moved ZTEST's wallet (from the wallet's statement).
	var history historyPage
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/trading/wallets/history",
		mustJSON(t, map[string]any{"walletId": f.btc, "reference": id})), &history)
	if len(history.Items) != 2 {
		t.Fatalf("statement of settlement %s: %+v, want its hold and its post", id, history.Items)
	}
	type entity struct{ typ, id string }
	flow := []entity{{"settlement", id + "@" + demo.CompanyZTEST}}
	for _, p := range history.Items {
		flow = append(flow, entity{"trading_entry", p.EntryID + "@" + demo.CompanyZTEST})
	}
	// What the events search lists of them: five settlement events, one per entry.
	want := map[string]map[string]any{} // event id -> its event as the search shows it
	for _, e := range flow {
		var page eventPage
		waitUntil(t, 30*time.Second, "the events of "+e.id, func() bool {
			page = eventPage{}
			wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/events/search",
				mustJSON(t, map[string]any{"entityType": e.typ, "entityId": e.id})), &page)
			return e.typ == "settlement" && len(page.Items) == 5 || e.typ != "settlement" && len(page.Items) == 1
		})
		for _, it := range page.Items {
			want[it.ID] = map[string]any{"type": it.Type, "entity": e.id, "version": it.Entity.Version, "data": it.Data}
		}
	}
	waitUntil(t, 60*time.Second, "every event of the flow delivered", func() bool {
		got := map[string]bool{}
		for _, d := range rcv.delivered() {
			got[d.event.ID] = true
		}
		for id := range want {
			if !got[id] {
				return false
			}
		}
		return true
	})

	doc := webhookDocument(t)
	last := map[string]int64{} // entity -> last version received
	for _, d := range rcv.snapshot() {
		w, ours := want[d.event.ID]
		if !ours {
			if d.event.CompanyID != demo.CompanyZTEST || !slices.Contains(types, d.event.Type) {
				t.Errorf("the subscriber received %s of %s, which it did not subscribe to", d.event.Type, d.event.CompanyID)
			}
			continue
		}
		if err := webhook.Verify(d.header, d.body, secret, nil, time.Now()); err != nil {
			t.Errorf("v1 of %s: %v", d.event.ID, err)
		}
		if err := webhook.Verify(d.header, d.body, nil, pub, time.Now()); err != nil {
			t.Errorf("v1a of %s: %v", d.event.ID, err)
		}
		version := strconv.FormatInt(d.event.Entity.Version, 10)
		if d.event.Type != w["type"] || d.event.Entity.ID != w["entity"] || version != w["version"] || !reflect.DeepEqual(d.event.Data, w["data"]) {
			t.Errorf("delivered %s %s v%s %v, the search shows %v", d.event.Type, d.event.Entity.ID, version, d.event.Data, w)
		}
		// In order: a repeat (a retry) never goes back below a version already received.
		if prev := last[d.event.Entity.ID]; d.event.Entity.Version < prev || d.event.Entity.Version > prev+1 {
			t.Errorf("%s: version %d arrived after version %d", d.event.Entity.ID, d.event.Entity.Version, prev)
		} else {
			last[d.event.Entity.ID] = d.event.Entity.Version
		}
		checkWebhookBody(t, doc, d.event.Type, d.body)
	}
	if got := last[flow[0].id]; got != 5 {
		t.Errorf("the settlement's events reached version %d, want 5 (RECEIVED to COMPLETE)", got)
	}
}

// webhookDocument is the OpenAPI document the gateway serves, loaded as a contract tool
// does.
func webhookDocument(t *testing.T) *openapi3.T {
	t.Helper()
	resp, err := http.Get(env.stack.GatewayURL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the served document is not valid OpenAPI: %v", err)
	}
	return doc
}

// checkWebhookBody validates a delivery's body, as received, against the document's webhook
// of its type.
func checkWebhookBody(t *testing.T, doc *openapi3.T, typ string, body []byte) {
	t.Helper()
	item := doc.Webhooks[typ]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		t.Errorf("the document has no webhook %s", typ)
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: body is not JSON: %v", typ, err)
		return
	}
	if err := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("a %s delivery is not its documented webhook: %.400v", typ, err)
	}
}
