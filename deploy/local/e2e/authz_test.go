package e2e_test

import (
	"net/http"
	"testing"

	"github.com/zcustody/suite/deploy/local/demo"
)

// allowed marks a caller the endpoint admits; denied401 a caller the gateway refuses for a
// missing submitter-id; denied403 a caller the service's policy refuses.
const (
	allowed   = 0
	denied401 = http.StatusUnauthorized
	denied403 = http.StatusForbidden
)

// TestAuthorizationTable checks docs/security.md's table row by row: every endpoint × caller
// (company-level, VIEWER, MAKER, CHECKER) of ZTEST, a client, or of the row's company. Bodies
// name nothing that exists, so an admitted call ends in a validation or not-found answer and
// changes nothing.
func TestAuthorizationTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name, method, path, body        string
		company, viewer, maker, checker int
		as                              string // the callers' company; ZTEST when empty
	}{
		{"1 search requests", "POST", "/v3/api/servicedesk/requests", `{}`, denied401, allowed, allowed, allowed, ""},
		{"2 trading wallets", "POST", "/v3/api/trading/wallets", `{}`, denied401, allowed, allowed, allowed, ""},
		{"3 settlement create", "POST", "/v3/api/interchange/settlement/create", `{}`, allowed, denied403, allowed, allowed, demo.CompanyZBYBIT},
		{"3 settlement create by a client", "POST", "/v3/api/interchange/settlement/create", `{}`, denied403, denied403, denied403, denied403, ""},
		{"4 v2 wallet action", "POST", "/v2/api/core/wallets/ZTEST-NOBENF-NOSUCH0000/action", `{}`, allowed, denied403, denied403, allowed, ""},
		{"5 create request", "POST", "/v3/api/servicedesk/create", `{}`, denied401, denied403, allowed, denied403, ""},
		{"6 products", "POST", "/v3/api/servicedesk/products", `{}`, denied401, allowed, allowed, allowed, ""},
		{"7 vault addresses", "POST", "/v3/api/trading/vaults/addresses", `{}`, denied401, allowed, allowed, allowed, ""},
		{"8 settlement wallet addresses", "POST", "/v3/api/interchange/settlement/wallet/addresses", `{}`, denied401, allowed, allowed, allowed, ""},
		{"9 whitelisted addresses", "POST", "/v3/api/interchange/settlement/wallet/whitelisted/address", `{}`, allowed, allowed, allowed, allowed, ""},
		{"10 audit trail", "POST", "/v3/api/servicedesk/audit-trail", `{"requestIds":["SERV-REQ-NOSUCH0000"]}`, denied401, allowed, allowed, allowed, ""},
		{"11 withdrawal confirm", "POST", "/v3/api/interchange/withdrawal/confirm", `{"transferId":"NOSUCH","withdrawalConfirmation":"ACCEPT"}`, allowed, denied403, allowed, allowed, demo.CompanyZBYBIT},
		{"11 withdrawal confirm by a client", "POST", "/v3/api/interchange/withdrawal/confirm", `{"transferId":"NOSUCH","withdrawalConfirmation":"ACCEPT"}`, denied403, denied403, denied403, denied403, ""},
		{"12 ledger fees", "POST", "/v3/api/custody/currencies/fees", ``, denied401, allowed, allowed, allowed, ""},
		{"13 trustline", "POST", "/v3/api/custody/wallets/ZTEST-NOBENF-NOSUCH0000/activate/usdc-xlm", ``, denied401, denied403, allowed, denied403, ""},
		{"14 legacy wallets", "GET", "/v2/api/core/wallets", ``, allowed, allowed, allowed, allowed, ""},
		{"15 VASP activation", "POST", "/v3/api/compliance/vasps/VASP-NOSUCH/activate/true", ``, allowed, denied403, allowed, allowed, ""},
		{"pending", "POST", "/v3/api/servicedesk/pending", `{}`, denied401, allowed, allowed, allowed, ""},
		{"policy", "POST", "/v3/api/servicedesk/policy", `{"version":"999"}`, denied401, allowed, allowed, allowed, ""},
		{"policy versions", "POST", "/v3/api/servicedesk/policy/versions", `{}`, denied401, allowed, allowed, allowed, ""},
		{"policy dry run", "POST", "/v3/api/servicedesk/policy/dry-run", `{"serviceId":"0x0999-001"}`, denied401, allowed, allowed, allowed, ""},
		{"approve", "POST", "/v3/api/servicedesk/approve", `{}`, denied401, denied403, allowed, allowed, ""},
		{"cancel", "POST", "/v3/api/servicedesk/cancel", `{}`, denied401, denied403, allowed, denied403, ""},
		{"settlement status", "POST", "/v3/api/interchange/settlement/status", `{"settlementRequestId":"NOSUCH"}`, allowed, allowed, allowed, allowed, ""},
		{"settlement search", "POST", "/v3/api/interchange/settlement/search", `{}`, allowed, allowed, allowed, allowed, ""},
		{"VASP search", "POST", "/v3/api/compliance/vasps/search", `{}`, allowed, allowed, allowed, allowed, ""},
		{"wallet history", "POST", "/v3/api/trading/wallets/history", `{"walletId":"ZTEST-TW-NOSUCH0000"}`, allowed, allowed, allowed, allowed, ""},
	}
	for _, row := range rows {
		for _, caller := range []struct {
			role string
			want int
		}{{company, row.company}, {viewer, row.viewer}, {maker, row.maker}, {checker, row.checker}} {
			name := caller.role
			if name == company {
				name = "company"
			}
			t.Run(row.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				var body []byte
				if row.body != "" {
					body = []byte(row.body)
				}
				as := row.as
				if as == "" {
					as = demo.CompanyZTEST
				}
				r := do(t, newClient(as, caller.role), row.method, row.path, body)
				switch {
				case caller.want == allowed && (r.status == denied401 || r.status == denied403):
					t.Errorf("admitted caller refused: status %d, body %s", r.status, r.body)
				case caller.want == allowed && r.status >= 500:
					t.Errorf("admitted caller got %d: %s", r.status, r.body)
				case caller.want != allowed && r.status != caller.want:
					t.Errorf("status %d, want %d; body %s", r.status, caller.want, r.body)
				}
			})
		}
	}
}
