package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// TestSettlementCreateValidation: every field-level refusal of endpoint 3 through the gateway,
// with its HTTP status, ER code, and the field named in the message.
func TestSettlementCreateValidation(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "10", "0", "0", "100")
	base := func() map[string]any {
		return instructionBody("VAL-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "1.5"), legOf(f.eth, "ETH", "ETH", "2")},
			map[string]any{"currency": "ETH", "ledger": "ETH", "amount": "2"})
	}
	header := func(b map[string]any) map[string]any { return b["header"].(map[string]any) }
	legs := func(b map[string]any) []map[string]any { return b["settlements"].([]map[string]any) }
	tests := []struct {
		name   string
		change func(b map[string]any)
		status int
		code   string
		field  string // named in the message
	}{
		{"no header", func(b map[string]any) { delete(b, "header") }, 400, "ER-101", "header"},
		{"no venue", func(b map[string]any) { delete(header(b), "venueId") }, 400, "ER-101", "header.venueId"},
		{"no request id", func(b map[string]any) { header(b)["settlementRequestId"] = "" }, 400, "ER-101", "header.settlementRequestId"},
		{"request id too long", func(b map[string]any) { header(b)["settlementRequestId"] = strings.Repeat("R", 65) }, 400, "ER-103", "header.settlementRequestId"},
		{"status of a new instruction", func(b map[string]any) { header(b)["status"] = "SETTLEMENT_COMPLETE" }, 400, "ER-108", "header.status"},
		{"request time", func(b map[string]any) { header(b)["requestDateTime"] = "yesterday" }, 400, "ER-108", "header.requestDateTime"},
		{"instruction count", func(b map[string]any) { header(b)["instructionCount"] = 3 }, 400, "ER-108", "header.instructionCount"},
		{"destination tag above 2147483647", func(b map[string]any) {
			header(b)["receivableAddresses"].([]map[string]any)[0]["destinationTag"] = 2147483648
		}, 400, "ER-103", "header.receivableAddresses[0].destinationTag"},
		{"negative destination tag", func(b map[string]any) {
			header(b)["receivableAddresses"].([]map[string]any)[0]["destinationTag"] = -1
		}, 400, "ER-103", "header.receivableAddresses[0].destinationTag"},
		{"receivable address", func(b map[string]any) {
			header(b)["receivableAddresses"].([]map[string]any)[0]["address"] = "not-an-xrp-address"
		}, 400, "ER-108", "header.receivableAddresses[0].address"},
		{"no settlements", func(b map[string]any) {
			b["settlements"], b["netSettlements"] = []any{}, []any{}
			header(b)["instructionCount"] = 0
		}, 400, "ER-112", "settlements"},
		{"counterparty type", func(b map[string]any) { legs(b)[1]["counterparty"] = map[string]any{"type": "IBAN", "value": f.eth} }, 400, "ER-108", "settlements[1].counterparty.type"},
		{"no counterparty wallet", func(b map[string]any) { legs(b)[0]["counterparty"] = map[string]any{"type": "WALLET_ID"} }, 400, "ER-101", "settlements[0].counterparty.value"},
		{"no amount", func(b map[string]any) { delete(legs(b)[0], "amount") }, 400, "ER-101", "settlements[0].amount"},
		{"zero amount", func(b map[string]any) { legs(b)[0]["amount"] = "0" }, 400, "ER-108", "settlements[0].amount"},
		{"trailing zero", func(b map[string]any) { legs(b)[0]["amount"] = "1.50" }, 400, "ER-108", "settlements[0].amount"},
		{"finer than a satoshi", func(b map[string]any) { legs(b)[0]["amount"] = "0.000000001" }, 400, "ER-108", "settlements[0].amount"},
		{"unsupported currency", func(b map[string]any) { legs(b)[0]["currency"] = "DOGE" }, 400, "ER-111", "settlements[0].currency"},
		{"ledger of another currency", func(b map[string]any) { legs(b)[0]["ledger"] = "XLM" }, 400, "ER-108", "settlements[0].ledger"},
		{"execution date", func(b map[string]any) { legs(b)[0]["executionDate"] = "21.11.2026" }, 400, "ER-108", "settlements[0].executionDate"},
		{"net without settlements", func(b map[string]any) {
			b["netSettlements"] = []map[string]any{{"currency": "XRP", "ledger": "XRP", "amount": "1"}}
		}, 400, "ER-108", "netSettlements[0].currency"},
		{"net above the legs", func(b map[string]any) { b["netSettlements"].([]map[string]any)[0]["amount"] = "2.5" }, 400, "ER-108", "netSettlements[0].amount"},
		{"net of the other sign", func(b map[string]any) { b["netSettlements"].([]map[string]any)[0]["amount"] = "-2" }, 400, "ER-108", "netSettlements[0].amount"},
		{"a client's wallet at a venue it does not operate", func(b map[string]any) {
			legs(b)[0]["counterparty"] = map[string]any{"type": "WALLET_ID", "value": "ZTEST-TW-DEMO000001"}
		}, 404, "ER-102", "ZTEST-TW-DEMO000001"},
		{"wallet in another currency", func(b map[string]any) {
			legs(b)[0]["counterparty"] = map[string]any{"type": "WALLET_ID", "value": f.eth}
		}, 400, "ER-108", "settlements[0].currency"},
		{"deactivated wallet", func(b map[string]any) {
			legs(b)[0]["counterparty"] = map[string]any{"type": "WALLET_ID", "value": f.inactive}
		}, 409, "ER-113", "settlements[0].counterparty.value"},
		{"unknown wallet", func(b map[string]any) {
			legs(b)[0]["counterparty"] = map[string]any{"type": "WALLET_ID", "value": "ZTEST-TW-UNKNOWN001"}
		}, 404, "ER-102", "ZTEST-TW-UNKNOWN001"},
		{"another client's wallet at another venue", func(b map[string]any) {
			legs(b)[0]["counterparty"] = map[string]any{"type": "WALLET_ID", "value": "ZACME-TW-DEMO000001"}
		}, 404, "ER-102", "ZACME-TW-DEMO000001"},
		{"unknown field", func(b map[string]any) { header(b)["priority"] = "HIGH" }, 400, "ER-108", "priority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := base()
			tt.change(b)
			r := do(t, f.operatorClient(company), http.MethodPost, settlementCreatePath, mustJSON(t, b))
			if msg := wantError(t, r, tt.status, tt.code); !strings.Contains(msg, tt.field) {
				t.Errorf("message %q does not name %s", msg, tt.field)
			}
		})
	}
	t.Run("the operator's viewer cannot create", func(t *testing.T) {
		t.Parallel()
		wantError(t, do(t, f.operatorClient(viewer), http.MethodPost, settlementCreatePath, mustJSON(t, base())), 403, "ER-403")
	})
	t.Run("the operator's maker creates, payables too", func(t *testing.T) {
		t.Parallel()
		b := base()
		legs(b)[0]["amount"] = "-1.5" // the venue pays the client
		var a settlementAnswer
		wantOK(t, do(t, f.operatorClient(maker), http.MethodPost, settlementCreatePath, mustJSON(t, b)), &a)
	})
	// Settlement instructions are the venue's: its client, as company or maker, and the
	// operator of another venue are refused.
	for name, c := range map[string]*signing.Client{
		"the client company": newClient(demo.CompanyZTEST, company), "the client's maker": newClient(demo.CompanyZTEST, maker),
		"BYBIT's operator": newClient(demo.CompanyZBYBIT, company),
	} {
		t.Run(name+" cannot create", func(t *testing.T) {
			t.Parallel()
			wantError(t, do(t, c, http.MethodPost, settlementCreatePath, mustJSON(t, base())), 403, "ER-403")
		})
	}
}

// TestSettlementCreateIdempotent: 50 identical creates at once store one settlement and get
// 50 identical answers; the same id with another body is 409 ER-104.
func TestSettlementCreateIdempotent(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "10", "0", "0", "100")
	requestID := "IDEM-" + uuid.NewString()[:8]
	body := mustJSON(t, instructionBody(requestID, f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.5")}))
	answers := make([]response, 50)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			answers[i] = do(t, f.operatorClient(company), http.MethodPost, settlementCreatePath, body)
		})
	}
	wg.Wait()
	var first settlementAnswer
	wantOK(t, answers[0], &first)
	if first.SettlementRequestID != requestID || first.Status != "SETTLEMENT_RECEIVED" || !strings.HasPrefix(first.SettlementTrackingID, "STL-") {
		t.Fatalf("answer %+v, want %s SETTLEMENT_RECEIVED with a tracking id", first, requestID)
	}
	for i, a := range answers {
		if a.status != http.StatusOK || !bytes.Equal(a.body, answers[0].body) {
			t.Errorf("answer %d: %d %s, want 200 %s", i, a.status, a.body, answers[0].body)
		}
	}
	var page struct {
		Total int `json:"total"`
	}
	wantOK(t, do(t, f.operatorClient(company), http.MethodPost, settlementSearchPath,
		mustJSON(t, map[string]any{"settlementRequestIds": []string{requestID}})), &page)
	if page.Total != 1 {
		t.Errorf("settlements stored under %s: %d, want 1", requestID, page.Total)
	}
	other := instructionBody(requestID, f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.6")})
	msg := wantError(t, do(t, f.operatorClient(company), http.MethodPost, settlementCreatePath, mustJSON(t, other)), http.StatusConflict, "ER-104")
	if !strings.Contains(msg, requestID) {
		t.Errorf("message %q does not name %s", msg, requestID)
	}
	var again settlementAnswer
	wantOK(t, do(t, f.operatorClient(company), http.MethodPost, settlementCreatePath, body), &again)
	if !cmp.Equal(again, first) {
		t.Errorf("a later repeat answered %+v, want %+v", again, first)
	}
}

// TestSettlementStatusAndSearch: the extension endpoints, their company scoping (the
// settlements are the operator's; neither its client nor another company finds them) and
// the pagination edges.
func TestSettlementStatusAndSearch(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "10", "0", "0", "100")
	var ids []string
	for range 3 {
		a := f.createSettlement(t, instructionBody("PG-"+uuid.NewString()[:8], f.venue, []map[string]any{legOf(f.btc, "BTC", "BTC", "0.1")}))
		ids = append(ids, a.SettlementRequestID)
	}
	var st settlementAnswer
	wantOK(t, settlementStatus(t, f.operatorClient(company), ids[1]), &st)
	if st.SettlementRequestID != ids[1] || st.Status != "SETTLEMENT_RECEIVED" || st.SettlementTrackingID == "" {
		t.Errorf("status %+v, want %s RECEIVED", st, ids[1])
	}
	wantError(t, settlementStatus(t, newClient(demo.CompanyZACME, company), ids[1]), http.StatusNotFound, "ER-102")
	wantError(t, settlementStatus(t, newClient(demo.CompanyZTEST, company), ids[1]), http.StatusNotFound, "ER-102")
	wantError(t, settlementStatus(t, f.operatorClient(company), "NOPE-1"), http.StatusNotFound, "ER-102")

	search := func(c *signing.Client, body map[string]any) (int, []string) {
		t.Helper()
		body["venueIds"] = []string{f.venue}
		var page struct {
			Total int `json:"total"`
			Items []struct {
				SettlementRequestID string            `json:"settlementRequestId"`
				Settlements         []json.RawMessage `json:"settlements"`
			} `json:"items"`
		}
		wantOK(t, do(t, c, http.MethodPost, settlementSearchPath, mustJSON(t, body)), &page)
		var got []string
		for _, it := range page.Items {
			got = append(got, it.SettlementRequestID)
		}
		return page.Total, got
	}
	sorted := append([]string(nil), ids...)
	slices.Sort(sorted)
	edges := []struct {
		name      string
		body      map[string]any
		wantItems []string
	}{
		{"first page", map[string]any{"paginationLimit": 2}, sorted[:2]},
		{"last page", map[string]any{"paginationLimit": 2, "paginationOffset": 2}, sorted[2:]},
		{"past the end", map[string]any{"paginationOffset": 3}, nil},
		{"limit 1024", map[string]any{"paginationLimit": 1024}, sorted},
		{"descending", map[string]any{"sort": map[string]string{"by": "id", "order": "DESC"}, "paginationLimit": 1}, sorted[2:]},
		{"by status", map[string]any{"statuses": []string{"SETTLEMENT_COMPLETE"}}, nil},
	}
	for _, e := range edges {
		total, got := search(f.operatorClient(company), e.body)
		wantTotal := 3
		if e.name == "by status" {
			wantTotal = 0
		}
		if total != wantTotal || strings.Join(got, ",") != strings.Join(e.wantItems, ",") {
			t.Errorf("%s: total %d, items %v; want %d, %v", e.name, total, got, wantTotal, e.wantItems)
		}
	}
	// ZTEST, whose wallet the legs name, sees them (its own legs: TestWhatEachSideSees);
	// ZACME, a client not in them, sees none.
	for other, want := range map[string]int{demo.CompanyZTEST: 3, demo.CompanyZACME: 0} {
		if total, _ := search(newClient(other, company), map[string]any{}); total != want {
			t.Errorf("%s sees %d of the venue's settlements, want %d", other, total, want)
		}
	}
	for name, body := range map[string]string{
		"limit 0": `{"paginationLimit":0}`, "limit 1025": `{"paginationLimit":1025}`, "offset -1": `{"paginationOffset":-1}`,
	} {
		if msg := wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, settlementSearchPath, []byte(body)), 400, "ER-103"); !strings.Contains(msg, "pagination") {
			t.Errorf("%s: message %q does not name the field", name, msg)
		}
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, settlementSearchPath, []byte(`{"sort":{"by":"amount"}}`)), 400, "ER-108")
	wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, settlementSearchPath, []byte(`{"statuses":["SETTLED"]}`)), 400, "ER-108")
}
