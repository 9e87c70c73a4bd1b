package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
)

// proposal is a v2 wallet proposed through custody's admin API.
type proposal struct{ walletID, intentID, proposalSignature string }

func propose(t *testing.T, companyID, createdBy string) proposal {
	t.Helper()
	admin, as := custodyAdmin(t)
	resp, err := admin.ProposeLegacyWallet(as(), &custodyv1.ProposeLegacyWalletRequest{CompanyId: companyID, CreatedBy: createdBy,
		WalletName: "E2E Proposed ETH", CurrencyId: "eth-eth"})
	if err != nil {
		t.Fatal(err)
	}
	return proposal{resp.GetWalletId(), resp.GetIntentId(), resp.GetProposalSignature()}
}

// actionRequest is the `request` a demo user of companyID (short: ztest, zacme) signs to act
// on p in their company's domain.
func actionRequest(p proposal, short, role, typ string) map[string]any {
	domain := demo.DomainID(companyOf(short))
	return map[string]any{"author": map[string]any{"id": demo.UserID(short, role), "domainId": domain},
		"targetDomainId": domain, "intentId": p.intentID, "proposalSignature": p.proposalSignature, "type": typ}
}

func companyOf(short string) string {
	if short == "ztest" {
		return demo.CompanyZTEST
	}
	return demo.CompanyZACME
}

// actionBody signs request with the demo key of short's role and wraps it as endpoint 4's body.
func actionBody(t *testing.T, request map[string]any, short, role string) map[string]any {
	t.Helper()
	sig, err := signing.SignApproval(userKey(t, companyOf(short), role), mustJSON(t, request))
	if err != nil {
		t.Fatal(err)
	}
	remember(sig)
	return map[string]any{"request": request, "signature": sig}
}

func actOn(t *testing.T, companyID, walletID string, body map[string]any) response {
	t.Helper()
	return do(t, newClient(companyID, company), http.MethodPost, walletActionPath(walletID), mustJSON(t, body))
}

func TestWalletApprove(t *testing.T) {
	t.Parallel()
	p := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", maker))
	if w := legacyWalletOf(t, demo.CompanyZTEST, p.walletID); w.Status != "PENDING_AUTH" || w.Valid {
		t.Fatalf("proposed wallet %+v, want PENDING_AUTH and not valid", w)
	}
	body := actionBody(t, actionRequest(p, "ztest", checker, "Approve"), "ztest", checker)
	var got map[string]any
	wantOK(t, actOn(t, demo.CompanyZTEST, p.walletID, body), &got)
	if diff := cmp.Diff(map[string]any{"id": p.walletID}, got); diff != "" {
		t.Errorf("endpoint 4 body mismatch (-want +got):\n%s", diff)
	}
	if w := legacyWalletOf(t, demo.CompanyZTEST, p.walletID); w.Status != "ACTIVE" || !w.Valid {
		t.Errorf("approved wallet %+v, want ACTIVE and valid", w)
	}
	// The same signed body again (a replay under a fresh request-identifier), and a second
	// decision by the same checker: the intent is used.
	wantError(t, actOn(t, demo.CompanyZTEST, p.walletID, body), http.StatusConflict, "ER-409")
	reject := actionBody(t, actionRequest(p, "ztest", checker, "Reject"), "ztest", checker)
	wantError(t, actOn(t, demo.CompanyZTEST, p.walletID, reject), http.StatusConflict, "ER-409")
}

func TestWalletReject(t *testing.T) {
	t.Parallel()
	p := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", maker))
	var got map[string]any
	wantOK(t, actOn(t, demo.CompanyZTEST, p.walletID, actionBody(t, actionRequest(p, "ztest", admin, "Reject"), "ztest", admin)), &got)
	if w := legacyWalletOf(t, demo.CompanyZTEST, p.walletID); w.Status != "REJECTED_BY_AUTHORISER" || w.Valid {
		t.Errorf("rejected wallet %+v, want REJECTED_BY_AUTHORISER and not valid", w)
	}
	approve := actionBody(t, actionRequest(p, "ztest", checker, "Approve"), "ztest", checker)
	wantError(t, actOn(t, demo.CompanyZTEST, p.walletID, approve), http.StatusConflict, "ER-409")
}

// TestWalletActionRace: racing decisions on one wallet; exactly one is recorded.
func TestWalletActionRace(t *testing.T) {
	t.Parallel()
	p := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", maker))
	bodies := make([]map[string]any, 10)
	for i := range bodies {
		typ := "Approve"
		if i%2 == 1 {
			typ = "Reject"
		}
		bodies[i] = actionBody(t, actionRequest(p, "ztest", checker, typ), "ztest", checker)
	}
	statuses := make([]int, len(bodies))
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() { statuses[i] = actOn(t, demo.CompanyZTEST, p.walletID, bodies[i]).status })
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if diff := cmp.Diff(map[int]int{http.StatusOK: 1, http.StatusConflict: len(bodies) - 1}, counts); diff != "" {
		t.Errorf("statuses of racing decisions (-want +got):\n%s", diff)
	}
}

// TestPendingDemoWallet: the demo's pending ZTEST wallet waits under its fixed intent; acts
// that must fail leave it pending (no test approves it, so it stays pending for `make run`).
func TestPendingDemoWallet(t *testing.T) {
	t.Parallel()
	if w := legacyWalletOf(t, demo.CompanyZTEST, demo.PendingWalletID); w.Status != "PENDING_AUTH" || w.Valid {
		t.Fatalf("demo wallet %+v, want PENDING_AUTH and not valid", w)
	}
	p := proposal{walletID: demo.PendingWalletID, intentID: demo.PendingIntentID, proposalSignature: "bm90IHRoZSBwcm9wb3NhbA=="}
	wantError(t, actOn(t, demo.CompanyZTEST, p.walletID, actionBody(t, actionRequest(p, "ztest", checker, "Approve"), "ztest", checker)), http.StatusConflict, "ER-409")
	// The proposer (the ZTEST maker) is no CHECKER.
	p.proposalSignature = ""
	req := actionRequest(p, "ztest", maker, "Approve")
	req["proposalSignature"] = "x"
	wantError(t, actOn(t, demo.CompanyZTEST, p.walletID, actionBody(t, req, "ztest", maker)), http.StatusForbidden, "ER-403")
	if w := legacyWalletOf(t, demo.CompanyZTEST, demo.PendingWalletID); w.Status != "PENDING_AUTH" {
		t.Errorf("demo wallet is %s after refused actions", w.Status)
	}
}

// TestWalletApprovalOverREST: a CHECKER approves a proposed wallet with REST calls and its own
// approval key alone: list (endpoint 14), fetch the proposal (extension), sign the object it
// returns as is, act (endpoint 4). The proposal names the caller as author, so the maker who
// proposed the wallet is refused there already (four eyes), and a decided wallet has none.
func TestWalletApprovalOverREST(t *testing.T) {
	t.Parallel()
	p := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", maker))
	if w := legacyWalletOf(t, demo.CompanyZTEST, p.walletID); w.Status != "PENDING_AUTH" {
		t.Fatalf("endpoint 14 lists %+v, want it PENDING_AUTH", w)
	}
	path := "/v2/api/core/wallets/" + p.walletID + "/proposal"
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodGet, path, nil), http.StatusForbidden, "ER-403")

	var prop struct {
		WalletID  string         `json:"walletId"`
		Status    string         `json:"status"`
		CreatedBy string         `json:"createdBy"`
		Request   map[string]any `json:"request"`
		Input     string         `json:"signingInput"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodGet, path, nil), &prop)
	if prop.WalletID != p.walletID || prop.Status != "PENDING_AUTH" || prop.CreatedBy != demo.UserEmail("ztest", maker) {
		t.Errorf("proposal %+v, want wallet %s PENDING_AUTH proposed by the maker", prop, p.walletID)
	}
	if diff := cmp.Diff(actionRequest(p, "ztest", checker, "Approve"), prop.Request); diff != "" {
		t.Errorf("the object to sign (-what endpoint 4 checks +proposal):\n%s", diff)
	}
	// The signing input is the request object's canonical JSON: keys sorted, no white space.
	var input map[string]any
	if err := json.Unmarshal([]byte(prop.Input), &input); err != nil || !cmp.Equal(input, prop.Request) || strings.ContainsAny(prop.Input, " \n") {
		t.Errorf("signingInput %q, want the canonical JSON of request (%v)", prop.Input, err)
	}
	sig, err := signing.SignApproval(userKey(t, demo.CompanyZTEST, checker), []byte(prop.Input))
	if err != nil {
		t.Fatal(err)
	}
	remember(sig)
	// As a shell client does: the signing input itself is the body's request.
	body := []byte(`{"request":` + prop.Input + `,"signature":"` + sig + `"}`)
	var got map[string]any
	wantOK(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, walletActionPath(p.walletID), body), &got)
	if w := legacyWalletOf(t, demo.CompanyZTEST, p.walletID); w.Status != "ACTIVE" || !w.Valid {
		t.Errorf("approved wallet %+v, want ACTIVE and valid", w)
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodGet, path, nil), http.StatusConflict, "ER-409")
	// Another company's checker cannot see it.
	wantError(t, do(t, newClient(demo.CompanyZACME, checker), http.MethodGet, path, nil), http.StatusNotFound, "ER-102")
}
