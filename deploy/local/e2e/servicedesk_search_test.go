package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
)

// searchFixture creates three ZTEST requests with a shared marker in their wallet names.
type searchFixture struct {
	marker    string
	ids       []string // in creation order
	e2e       []string
	completed string // ids[0] is taken to COMPLETED
	entity    string // entity id of ids[1]
}

func newSearchFixture(t *testing.T) searchFixture {
	t.Helper()
	f := searchFixture{marker: "Srch" + strings.ToUpper(uuid.NewString()[:6])}
	for i := range 3 {
		e2e := uuid.NewString()
		body := mustJSON(t, map[string]any{"serviceId": "0x0013-001", "payload": custodyWalletPayload(f.marker + " w" + string(rune('a'+i))), "endToEndId": e2e})
		got := create(t, demo.CompanyZTEST, maker, body)
		f.ids, f.e2e = append(f.ids, got.RequestID), append(f.e2e, e2e)
		if i == 1 {
			f.entity = got.PluginDetail.EntityID[0]
		}
		env.deskAhead.Add(int64(5 * time.Millisecond)) // distinct createdAt for the sort test, without waiting
	}
	wantStatus(t, authorise(t, f.ids[0]), "COMPLETED")
	f.completed = f.ids[0]
	return f
}

func requestIDs(items []serviceRequest) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.RequestID)
	}
	return out
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	mine := map[string]any{"details": []string{strings.ToLower(f.marker)}, "sort": map[string]string{"by": "createdAt"}}
	with := func(extra map[string]any) map[string]any {
		body := map[string]any{}
		for k, v := range mine {
			body[k] = v
		}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	today := time.Now().UTC().Format(time.DateOnly)
	tests := []struct {
		name string
		give map[string]any
		want []string
	}{
		{"details matches case-insensitively", with(nil), f.ids},
		{"requestIds", with(map[string]any{"requestIds": []string{f.ids[2], f.ids[0]}}), []string{f.ids[0], f.ids[2]}},
		{"endToEndIds", with(map[string]any{"endToEndIds": []string{f.e2e[1]}}), f.ids[1:2]},
		{"statuses", with(map[string]any{"statuses": []string{"COMPLETED"}}), f.ids[:1]},
		{"statuses OR-ed", with(map[string]any{"statuses": []string{"COMPLETED", "PENDING CONFIRMATION"}}), f.ids},
		{"serviceIds and productIds AND-ed", with(map[string]any{"serviceIds": []string{"0x0013-001"}, "productIds": []string{"0x0013"}}), f.ids},
		{"productIds decimal", with(map[string]any{"productIds": []string{"19"}}), f.ids},
		{"productIds other product", with(map[string]any{"productIds": []string{"0x0003"}}), []string{}},
		{"requestTypes", with(map[string]any{"requestTypes": []string{"DEACTIVATE"}}), []string{}},
		{"entityIds", with(map[string]any{"entityIds": []string{f.entity}}), f.ids[1:2]},
		{"modifiedAt today", with(map[string]any{"modifiedAt": []string{"2001-01-01", today}}), f.ids},
		{"modifiedAt another day", with(map[string]any{"modifiedAt": []string{"2001-01-01"}}), []string{}},
		{"own companyIds", with(map[string]any{"companyIds": []string{demo.CompanyZTEST}}), f.ids},
		{"another company's companyIds", with(map[string]any{"companyIds": []string{demo.CompanyZACME}}), []string{}},
		{"sort DESC", with(map[string]any{"sort": map[string]string{"by": "createdAt", "order": "DESC"}}), []string{f.ids[2], f.ids[1], f.ids[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := search(t, demo.CompanyZTEST, viewer, tt.give)
			if diff := cmp.Diff(tt.want, requestIDs(got.Items)); diff != "" || got.Total != len(tt.want) {
				t.Errorf("total %d, ids (-want +got):\n%s", got.Total, diff)
			}
		})
	}
	if got := search(t, demo.CompanyZACME, maker, mine); got.Total != 0 {
		t.Errorf("ZACME sees %d of ZTEST's requests", got.Total)
	}
}

func TestSearchPagination(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	base := map[string]any{"details": []string{f.marker}, "sort": map[string]string{"by": "createdAt"}}
	page := func(limit, offset int) map[string]any {
		body := map[string]any{"paginationLimit": limit, "paginationOffset": offset}
		for k, v := range base {
			body[k] = v
		}
		return body
	}
	for _, tt := range []struct {
		limit, offset int
		want          []string
	}{
		{1, 0, f.ids[:1]}, {1, 2, f.ids[2:]}, {1024, 0, f.ids}, {2, 1, f.ids[1:]}, {10, 3, []string{}}, {10, 500, []string{}},
	} {
		got := search(t, demo.CompanyZTEST, maker, page(tt.limit, tt.offset))
		if diff := cmp.Diff(tt.want, requestIDs(got.Items)); diff != "" || got.Total != 3 {
			t.Errorf("limit %d offset %d: total %d (want 3), ids (-want +got):\n%s", tt.limit, tt.offset, got.Total, diff)
		}
	}
	for _, bad := range []map[string]any{page(0, 0), page(1025, 0), page(10, -1)} {
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, requestsPath, mustJSON(t, bad)), http.StatusBadRequest, "ER-103")
	}
	for _, bad := range []map[string]any{
		{"statuses": []string{"DONE"}}, {"requestTypes": []string{"create"}}, {"modifiedAt": []string{"21-11-2026"}},
		{"sort": map[string]string{"by": "status"}}, {"sort": map[string]string{"order": "UP"}},
	} {
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, requestsPath, mustJSON(t, bad)), http.StatusBadRequest, "ER-108")
	}
	if got := search(t, demo.CompanyZTEST, maker, map[string]any{}); len(got.Items) > 10 {
		t.Errorf("default page holds %d items, want at most 10", len(got.Items))
	}
}

// TestExpiredRequests moves the service desk's clock past a request's deadline. It is not
// parallel: Go runs it while every parallel test waits, so no other test's request expires.
func TestExpiredRequests(t *testing.T) {
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload("Expiring")))
	if status := requestStatus(t, demo.CompanyZTEST, got.RequestID); status == "EXPIRED" {
		t.Fatalf("request %s EXPIRED before its deadline", got.RequestID)
	}
	// Every catalog deadline is within 31 days.
	env.deskAhead.Store(int64(31 * 24 * time.Hour))
	defer env.deskAhead.Store(0)
	deadline := time.Now().Add(10 * time.Second)
	for requestStatus(t, demo.CompanyZTEST, got.RequestID) != "EXPIRED" {
		if time.Now().After(deadline) {
			t.Fatalf("request %s not EXPIRED 10s after its deadline", got.RequestID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": got.RequestID})), http.StatusConflict, "ER-409")
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	e2e := uuid.NewString()
	body := func(serviceID string, payload any, endToEndID string) []byte {
		b := map[string]any{"serviceId": serviceID, "endToEndId": endToEndID}
		if payload != nil {
			b["payload"] = payload
		}
		return mustJSON(t, b)
	}
	wallet := custodyWalletPayload("Valid name")
	tests := []struct {
		name       string
		company    string
		give       []byte
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"missing serviceId", demo.CompanyZTEST, body("", wallet, e2e), 400, "ER-101", "serviceId"},
		{"missing endToEndId", demo.CompanyZTEST, body("0x0013-001", wallet, ""), 400, "ER-101", "endToEndId"},
		{"endToEndId not a UUID", demo.CompanyZTEST, body("0x0013-001", wallet, "order-42"), 400, "ER-108", "endToEndId"},
		{"missing payload", demo.CompanyZTEST, body("0x0013-001", nil, e2e), 400, "ER-101", "payload"},
		{"unknown service", demo.CompanyZTEST, body("0x0099-001", wallet, e2e), 404, "ER-102", "0x0099-001"},
		{"not entitled", demo.CompanyZACME, body("0x0013-001", wallet, e2e), 403, "ER-403", "0x0013-001"},
		{"field outside the template", demo.CompanyZTEST, body("0x0013-001", map[string]any{"name": []string{"x"}, "color": "red"}, e2e), 400, "ER-108", "color"},
		{"unsupported currency", demo.CompanyZTEST, body("0x0013-001", map[string]any{"name": []string{"x"}, "currency": []string{"DOGE"}, "currencyId": []string{"doge-doge"}}, e2e), 400, "ER-111", "currencyId"},
		{"service not available yet", demo.CompanyZTEST, body("0x0014-007", map[string]any{"amount": "1"}, e2e), 501, "ER-501", "0x0014-007"},
		{"settlement instructions are the venue's", demo.CompanyZTEST, body("0x0003-003", map[string]any{"amount": "1"}, e2e), 403, "ER-403", "0x0003-003"},
		{"a settlement instruction names its venue", demo.CompanyZBYBIT, body("0x0003-003", map[string]any{"amount": "1"}, e2e), 400, "ER-101", "venueId"},
		{"a settlement instruction at another operator's venue", demo.CompanyZBYBIT, body("0x0003-003", map[string]any{"venueId": "DERIBIT", "amount": "1"}, e2e), 403, "ER-403", "DERIBIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := wantError(t, do(t, newClient(tt.company, maker), http.MethodPost, createPath, tt.give), tt.wantStatus, tt.wantCode)
			if !strings.Contains(msg, tt.wantField) {
				t.Errorf("message %q does not name %s", msg, tt.wantField)
			}
		})
	}
	if got := search(t, demo.CompanyZTEST, maker, map[string]any{"endToEndIds": []string{e2e}}); got.Total != 0 {
		t.Errorf("refused creates left %d requests behind", got.Total)
	}
}
