package e2e_test

import (
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
)

var requestIDPattern = regexp.MustCompile(`^SERV-REQ-[A-Z0-9]{10}$`)

type legacyWallets struct {
	Wallets []struct {
		WalletID      string `json:"walletId"`
		WalletName    string `json:"walletName"`
		WalletCompany string `json:"walletCompany"`
		CreatedBy     string `json:"createdBy"`
		Status        string `json:"status"`
	} `json:"wallets"`
}

// custodyWallets returns the ids of the company's custody wallets named name.
func custodyWallets(t *testing.T, companyID, name string) []string {
	t.Helper()
	var got legacyWallets
	wantOK(t, do(t, newClient(companyID, company), http.MethodGet, "/v2/api/core/wallets", nil), &got)
	var ids []string
	for _, w := range got.Wallets {
		if w.WalletName == name {
			ids = append(ids, w.WalletID)
		}
	}
	return ids
}

// authorise takes a request from PENDING CONFIRMATION through the checker's approval.
func authorise(t *testing.T, requestID string) response {
	t.Helper()
	wantStatus(t, act(t, demo.CompanyZTEST, maker, requestID, "", ""), "PENDING AUTHORISATION")
	return act(t, demo.CompanyZTEST, checker, requestID, "Approve", "")
}

func TestCustodyWalletRequestCompletes(t *testing.T) {
	t.Parallel()
	name := "Lifecycle " + uuid.NewString()[:8]
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload(name)))
	if !requestIDPattern.MatchString(got.RequestID) {
		t.Errorf("requestId %q does not match SERV-REQ-<10 uppercase alphanumerics>", got.RequestID)
	}
	if len(got.PluginDetail.EntityID) != 1 || !regexp.MustCompile(`^ZTEST-NOBENF-[A-Z0-9]{10}$`).MatchString(got.PluginDetail.EntityID[0]) {
		t.Fatalf("pluginDetail.entityId = %v, want one ZTEST-NOBENF-<10> wallet id", got.PluginDetail.EntityID)
	}
	if s := requestStatus(t, demo.CompanyZTEST, got.RequestID); s != "PENDING CONFIRMATION" {
		t.Fatalf("status after create %q, want PENDING CONFIRMATION", s)
	}
	if ids := custodyWallets(t, demo.CompanyZTEST, name); len(ids) != 0 {
		t.Fatalf("wallet exists before approval: %v", ids)
	}
	wantStatus(t, authorise(t, got.RequestID), "COMPLETED")
	ids := custodyWallets(t, demo.CompanyZTEST, name)
	if len(ids) != 1 || ids[0] != got.PluginDetail.EntityID[0] {
		t.Fatalf("custody wallets named %q = %v, want exactly the reserved %s", name, ids, got.PluginDetail.EntityID[0])
	}
	if other := custodyWallets(t, demo.CompanyZACME, name); len(other) != 0 {
		t.Errorf("ZACME sees ZTEST's new wallet: %v", other)
	}
}

func TestTradingWalletRequestCompletes(t *testing.T) {
	t.Parallel()
	name := "Trading " + uuid.NewString()[:8]
	payload := map[string]any{"name": name, "currency": "ETH", "tradingVenueId": "BYBIT", "accountUuid": uuid.NewString(), "userUuid": uuid.NewString()}
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0003-001", payload))
	wantStatus(t, authorise(t, got.RequestID), "COMPLETED")
	walletID := got.PluginDetail.EntityID[0]

	var wallets struct {
		Total int `json:"total"`
		Items []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Status   string `json:"status"`
			Balances []struct {
				Currency         string `json:"currency"`
				AvailableBalance struct {
					Amount string `json:"amount"`
				} `json:"availableBalance"`
			} `json:"balances"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/trading/wallets", mustJSON(t, map[string]any{"ids": []string{walletID}})), &wallets)
	if wallets.Total != 1 || wallets.Items[0].Name != name || wallets.Items[0].Status != "ACTIVE" {
		t.Fatalf("trading wallet search = %+v, want the new ACTIVE wallet %s", wallets, name)
	}
	for _, b := range wallets.Items[0].Balances {
		if b.AvailableBalance.Amount != "0" {
			t.Errorf("new wallet balance %s = %q, want 0", b.Currency, b.AvailableBalance.Amount)
		}
	}
	var addresses struct {
		Total int `json:"total"`
		Items []struct {
			Address    string `json:"address"`
			WalletID   string `json:"walletId"`
			CurrencyID string `json:"currencyId"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, "/v3/api/trading/vaults/addresses", mustJSON(t, map[string]any{"walletIds": []string{walletID}})), &addresses)
	if addresses.Total < 1 || !regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`).MatchString(addresses.Items[0].Address) {
		t.Fatalf("vault addresses of %s = %+v, want a generated ETH address", walletID, addresses)
	}
}

func TestRejectAndCancel(t *testing.T) {
	t.Parallel()
	name := "Rejected " + uuid.NewString()[:8]
	rejected := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload(name)))
	wantStatus(t, act(t, demo.CompanyZTEST, maker, rejected.RequestID, "", ""), "PENDING AUTHORISATION")
	wantError(t, act(t, demo.CompanyZTEST, checker, rejected.RequestID, "Reject", ""), http.StatusBadRequest, "ER-101")
	wantStatus(t, act(t, demo.CompanyZTEST, checker, rejected.RequestID, "Reject", "wrong currency"), "REJECTED")
	if ids := custodyWallets(t, demo.CompanyZTEST, name); len(ids) != 0 {
		t.Errorf("a rejected request created wallets %v", ids)
	}
	cancelBody := func(id string) []byte { return mustJSON(t, map[string]string{"requestId": id}) }
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, cancelBody(rejected.RequestID)), http.StatusConflict, "ER-409")

	cancelled := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload(name)))
	wantError(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, cancelPath, cancelBody(cancelled.RequestID)), http.StatusForbidden, "ER-403")
	wantError(t, do(t, newClient(demo.CompanyZACME, maker), http.MethodPost, cancelPath, cancelBody(cancelled.RequestID)), http.StatusNotFound, "ER-102")
	wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, cancelBody(cancelled.RequestID)), "CANCELLED")
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, pendingPath, cancelBody(cancelled.RequestID)), http.StatusConflict, "ER-409")
}

func TestFourEyesAndRoles(t *testing.T) {
	t.Parallel()
	body := createBody(t, "0x0013-001", custodyWalletPayload("Four eyes"))
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, createPath, body), http.StatusForbidden, "ER-403")
	wantError(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, createPath, body), http.StatusForbidden, "ER-403")

	own := create(t, demo.CompanyZTEST, admin, body)
	wantStatus(t, act(t, demo.CompanyZTEST, admin, own.RequestID, "", ""), "PENDING AUTHORISATION")
	msg := wantError(t, act(t, demo.CompanyZTEST, admin, own.RequestID, "Approve", ""), http.StatusForbidden, "ER-403")
	if !regexp.MustCompile(`(?i)four-eyes|maker`).MatchString(msg) {
		t.Errorf("self-approval refused with %q, want the four-eyes reason", msg)
	}
	wantError(t, act(t, demo.CompanyZTEST, maker, own.RequestID, "Approve", ""), http.StatusForbidden, "ER-403")
	req := map[string]string{"requestId": own.RequestID}
	wantError(t, do(t, newClient(demo.CompanyZACME, checker), http.MethodPost, pendingPath, mustJSON(t, req)), http.StatusNotFound, "ER-102")
	obj := pending(t, demo.CompanyZTEST, checker, own.RequestID).Request
	obj["type"] = "Approve"
	wantError(t, do(t, newClient(demo.CompanyZACME, checker), http.MethodPost, approvePath, approveBody(t, own.RequestID, obj, userKey(t, demo.CompanyZACME, checker))), http.StatusNotFound, "ER-102")
	if s := requestStatus(t, demo.CompanyZTEST, own.RequestID); s != "PENDING AUTHORISATION" {
		t.Errorf("status after refused approvals %q, want PENDING AUTHORISATION", s)
	}
	wantStatus(t, act(t, demo.CompanyZTEST, checker, own.RequestID, "Approve", ""), "COMPLETED")
}

func TestApprovalSignatures(t *testing.T) {
	t.Parallel()
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload("Signatures")))
	obj := pending(t, demo.CompanyZTEST, maker, got.RequestID).Request
	c := newClient(demo.CompanyZTEST, maker)

	wrongKey := approveBody(t, got.RequestID, obj, userKey(t, demo.CompanyZTEST, checker))
	wantError(t, do(t, c, http.MethodPost, approvePath, wrongKey), http.StatusForbidden, "ER-403")
	placeholder := mustJSON(t, map[string]any{"requestId": got.RequestID, "request": obj, "signature": "$$REPLACE$$"})
	wantError(t, do(t, c, http.MethodPost, approvePath, placeholder), http.StatusBadRequest, "ER-101")

	altered := map[string]any{}
	for k, v := range obj {
		altered[k] = v
	}
	altered["payload"] = custodyWalletPayload("Swapped")
	wantError(t, do(t, c, http.MethodPost, approvePath, approveBody(t, got.RequestID, altered, userKey(t, demo.CompanyZTEST, maker))), http.StatusConflict, "ER-409")

	confirm := approveBody(t, got.RequestID, obj, userKey(t, demo.CompanyZTEST, maker))
	wantStatus(t, do(t, c, http.MethodPost, approvePath, confirm), "PENDING AUTHORISATION")
	// The same signed confirmation again: it names the previous version, so it no longer applies.
	wantError(t, do(t, c, http.MethodPost, approvePath, confirm), http.StatusConflict, "ER-409")
	if s := requestStatus(t, demo.CompanyZTEST, got.RequestID); s != "PENDING AUTHORISATION" {
		t.Errorf("status after a replayed confirmation %q, want PENDING AUTHORISATION", s)
	}
}

func TestConcurrentApprovalsExecuteOnce(t *testing.T) {
	t.Parallel()
	name := "Race " + uuid.NewString()[:8]
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload(name)))
	wantStatus(t, act(t, demo.CompanyZTEST, maker, got.RequestID, "", ""), "PENDING AUTHORISATION")
	obj := pending(t, demo.CompanyZTEST, checker, got.RequestID).Request
	obj["type"] = "Approve"
	body := approveBody(t, got.RequestID, obj, userKey(t, demo.CompanyZTEST, checker))
	const n = 20
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, approvePath, body).status
		})
	}
	wg.Wait()
	if ok := count(statuses, http.StatusOK); ok != 1 || count(statuses, http.StatusConflict) != n-1 {
		t.Errorf("statuses of %d racing approvals = %v, want one 200 and %d 409", n, statuses, n-1)
	}
	if ids := custodyWallets(t, demo.CompanyZTEST, name); len(ids) != 1 {
		t.Errorf("wallets created by %d racing approvals: %v, want exactly one", n, ids)
	}
	if s := requestStatus(t, demo.CompanyZTEST, got.RequestID); s != "COMPLETED" {
		t.Errorf("status %q, want COMPLETED", s)
	}
}

func TestConcurrentCreatesWithOneEndToEndID(t *testing.T) {
	t.Parallel()
	body := createBody(t, "0x0013-001", custodyWalletPayload("Idempotent"))
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var got createAnswer
			wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, body), &got)
			ids[i] = got.RequestID
		})
	}
	wg.Wait()
	if distinct := slices.Compact(slices.Sorted(slices.Values(ids))); len(distinct) != 1 || distinct[0] == "" {
		t.Fatalf("%d identical creates answered request ids %v, want one", n, ids)
	}
	var sent struct {
		EndToEndID string `json:"endToEndId"`
	}
	mustUnmarshal(t, body, &sent)
	if got := search(t, demo.CompanyZTEST, maker, map[string]any{"endToEndIds": []string{sent.EndToEndID}}); got.Total != 1 {
		t.Errorf("requests with the endToEndId: %d, want 1", got.Total)
	}
	different := mustJSON(t, map[string]any{"serviceId": "0x0013-001", "payload": custodyWalletPayload("Other"), "endToEndId": sent.EndToEndID})
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, different), http.StatusConflict, "ER-104")
	// Another company may use the same endToEndId.
	zacme := mustJSON(t, map[string]any{"serviceId": "0x0007-004", "payload": map[string]any{}, "endToEndId": sent.EndToEndID})
	if r := do(t, newClient(demo.CompanyZACME, maker), http.MethodPost, createPath, zacme); r.status == http.StatusConflict {
		t.Errorf("ZACME reusing ZTEST's endToEndId got 409: %s", r.body)
	}
}

func count(list []int, v int) int {
	n := 0
	for _, e := range list {
		if e == v {
			n++
		}
	}
	return n
}
