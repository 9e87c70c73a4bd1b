package e2e_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
)

// TestWalletActionRefusals: every refused action on one pending wallet leaves it pending and
// its intent unused, so a correct approval afterwards still succeeds.
func TestWalletActionRefusals(t *testing.T) {
	t.Parallel()
	p := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", maker))
	other := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", maker))
	good := func() map[string]any { return actionRequest(p, "ztest", checker, "Approve") }
	with := func(key string, value any) map[string]any {
		r := good()
		r[key] = value
		return r
	}
	forged := actionBody(t, actionRequest(p, "ztest", checker, "Reject"), "ztest", checker)
	forged["request"] = good() // the signature covers Reject, the body says Approve
	unknownField := actionBody(t, good(), "ztest", checker)
	unknownField["request"].(map[string]any)["walletId"] = p.walletID
	tests := []struct {
		name      string
		companyID string
		walletID  string
		body      map[string]any
		status    int
		code      string
	}{
		{"forged", demo.CompanyZTEST, p.walletID, forged, http.StatusForbidden, "ER-403"},
		{"wrong key", demo.CompanyZTEST, p.walletID, actionBody(t, good(), "ztest", maker), http.StatusForbidden, "ER-403"},
		{"not a signature", demo.CompanyZTEST, p.walletID, map[string]any{"request": good(), "signature": "MEUCIQDnotasignature"}, http.StatusForbidden, "ER-403"},
		{"signed by another company's user", demo.CompanyZTEST, p.walletID, actionBody(t, good(), "zacme", checker), http.StatusForbidden, "ER-403"},
		{"wrong company", demo.CompanyZTEST, p.walletID, actionBody(t, zacmeAuthor(p, demo.DomainID(demo.CompanyZTEST)), "zacme", checker), http.StatusBadRequest, "ER-114"},
		{"wrong company in its own domain", demo.CompanyZTEST, p.walletID, actionBody(t, actionRequest(p, "zacme", checker, "Approve"), "zacme", checker), http.StatusBadRequest, "ER-114"},
		{"author domain mismatch", demo.CompanyZTEST, p.walletID, actionBody(t, with("author", map[string]any{"id": demo.UserID("ztest", checker), "domainId": demo.DomainID(demo.CompanyZACME)}), "ztest", checker),
			http.StatusBadRequest, "ER-114"},
		{"target domain mismatch", demo.CompanyZTEST, p.walletID, actionBody(t, with("targetDomainId", demo.DomainID(demo.CompanyZACME)), "ztest", checker), http.StatusBadRequest, "ER-114"},
		{"unknown author", demo.CompanyZTEST, p.walletID, actionBody(t, with("author", map[string]any{"id": uuid.NewString(), "domainId": demo.DomainID(demo.CompanyZTEST)}), "ztest", checker),
			http.StatusBadRequest, "ER-114"},
		{"maker as author", demo.CompanyZTEST, p.walletID, actionBody(t, actionRequest(p, "ztest", maker, "Approve"), "ztest", maker), http.StatusForbidden, "ER-403"},
		{"intent of another wallet", demo.CompanyZTEST, p.walletID, actionBody(t, actionRequest(other, "ztest", checker, "Approve"), "ztest", checker), http.StatusConflict, "ER-409"},
		{"unknown intent", demo.CompanyZTEST, p.walletID, actionBody(t, with("intentId", uuid.NewString()), "ztest", checker), http.StatusConflict, "ER-409"},
		{"other proposal", demo.CompanyZTEST, p.walletID, actionBody(t, with("proposalSignature", other.proposalSignature), "ztest", checker), http.StatusConflict, "ER-409"},
		{"lower-case type", demo.CompanyZTEST, p.walletID, actionBody(t, with("type", "approve"), "ztest", checker), http.StatusBadRequest, "ER-108"},
		{"author id not a UUID", demo.CompanyZTEST, p.walletID, actionBody(t, with("author", map[string]any{"id": demo.UserEmail("ztest", checker), "domainId": demo.DomainID(demo.CompanyZTEST)}), "ztest", checker),
			http.StatusBadRequest, "ER-108"},
		{"no signature", demo.CompanyZTEST, p.walletID, map[string]any{"request": good()}, http.StatusBadRequest, "ER-101"},
		{"unknown field", demo.CompanyZTEST, p.walletID, unknownField, http.StatusBadRequest, "ER-108"},
		{"another company's wallet", demo.CompanyZACME, p.walletID, actionBody(t, good(), "ztest", checker), http.StatusNotFound, "ER-102"},
		{"unknown wallet", demo.CompanyZTEST, "ZTEST-NOBENF-NOSUCHWLT", actionBody(t, good(), "ztest", checker), http.StatusNotFound, "ER-102"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, actOn(t, tt.companyID, tt.walletID, tt.body), tt.status, tt.code)
		})
	}
	t.Run("submitter other than the author", func(t *testing.T) {
		r := do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, walletActionPath(p.walletID), mustJSON(t, actionBody(t, good(), "ztest", checker)))
		wantError(t, r, http.StatusForbidden, "ER-403")
	})
	t.Run("four eyes", func(t *testing.T) {
		mine := propose(t, demo.CompanyZTEST, demo.UserEmail("ztest", admin))
		wantError(t, actOn(t, demo.CompanyZTEST, mine.walletID, actionBody(t, actionRequest(mine, "ztest", admin, "Approve"), "ztest", admin)), http.StatusForbidden, "ER-403")
	})
	if w := legacyWalletOf(t, demo.CompanyZTEST, p.walletID); w.Status != "PENDING_AUTH" || w.Valid {
		t.Fatalf("after refused actions the wallet is %+v, want still PENDING_AUTH", w)
	}
	var got map[string]any
	wantOK(t, actOn(t, demo.CompanyZTEST, p.walletID, actionBody(t, good(), "ztest", checker)), &got)
	wantOK(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, walletActionPath(other.walletID),
		mustJSON(t, actionBody(t, actionRequest(other, "ztest", checker, "Approve"), "ztest", checker))), &got) // the author as submitter
}

// zacmeAuthor is an approval of p by ZACME's checker, in ZACME's domain, aimed at target.
func zacmeAuthor(p proposal, target string) map[string]any {
	r := actionRequest(p, "zacme", checker, "Approve")
	r["targetDomainId"] = target
	return r
}
