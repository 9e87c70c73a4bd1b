package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// The approval policies attacked from outside, through the gateway, as a hostile or careless
// client would: invalid proposals, approvals forged or replayed, four eyes through a second
// role, company isolation of the policy extensions, and races on one request.
//
// These tests share the demo companies with the rest of the suite, so none adopts a policy:
// every request they create ends cancelled, rejected or (for a custody wallet) completed.
// ZTEST's policy belongs to TestPolicyChangeNeedsTwoPeople, which runs first; the tests that
// need its two-CHECKER rule for policy changes skip themselves when it did not run.
//
// Tests skipped with "defect:" assert the behaviour the suite should have and does not.

// atkDryRunE2E is the endToEndId the dry run puts on its draft (nothing is stored under it).
const atkDryRunE2E = "00000000-0000-4000-8000-000000000000"

// atkRules is a valid policy for ZTEST: beneficiaries on the maker's word, everything else,
// policy changes included, one CHECKER. It is the default policy's behaviour, so that even a
// defect adopting one of these proposals would not change what the other tests see. Each
// call returns fresh maps.
func atkRules() []map[string]any {
	return []map[string]any{
		{"name": "beneficiaries", "operations": []string{"0x0007-004"}, "action": "ALLOW"},
		{"name": "policy changes", "operations": []string{"policy.change"}, "action": "REQUIRE_APPROVAL",
			"groups": []map[string]any{{"name": "checkers", "roles": []string{"CHECKER"}, "threshold": 1}}},
		atkCatchAll(),
	}
}

// atkCatchAll is a valid last rule: one CHECKER for anything.
func atkCatchAll() map[string]any {
	return map[string]any{"name": "default", "action": "REQUIRE_APPROVAL",
		"groups": []map[string]any{{"name": "checkers", "roles": []string{"CHECKER"}, "threshold": 1}}}
}

// atkPolicyChange is a valid rule for policy changes with the given groups.
func atkPolicyChange(groups ...map[string]any) map[string]any {
	return map[string]any{"name": "policy changes", "operations": []string{"policy.change"}, "action": "REQUIRE_APPROVAL", "groups": groups}
}

// atkBody is a create body for serviceID with a raw JSON payload under endToEndId e2e.
func atkBody(serviceID, e2e, payload string) []byte {
	return []byte(`{"serviceId":"` + serviceID + `","endToEndId":"` + e2e + `","payload":` + payload + `}`)
}

// atkClient signs as the company's demo user of role (ZCUSTODY's keys too).
func atkClient(t *testing.T, companyID, role string) *signing.Client {
	t.Helper()
	if companyID == demo.CompanyZCUSTODY {
		return custodianClient(t, role)
	}
	return newClient(companyID, role)
}

// atkStored is how many of the company's requests carry endToEndId e2e.
func atkStored(t *testing.T, companyID, e2e string) int {
	t.Helper()
	var got searchAnswer
	wantOK(t, do(t, atkClient(t, companyID, maker), http.MethodPost, requestsPath, mustJSON(t, map[string]any{"endToEndIds": []string{e2e}})), &got)
	return got.Total
}

// atkPolicyVersion is the version of the company's policy in force, as its viewer reads it.
func atkPolicyVersion(t *testing.T, companyID string) string {
	t.Helper()
	var got struct {
		CompanyID string `json:"companyId"`
		Version   string `json:"version"`
	}
	wantOK(t, do(t, atkClient(t, companyID, viewer), http.MethodPost, policyPath, []byte(`{}`)), &got)
	if got.CompanyID != companyID {
		t.Fatalf("%s's policy answers company %q", companyID, got.CompanyID)
	}
	if got.Version == "" {
		return "0" // a zero int64 is left out of the JSON
	}
	return got.Version
}

// atkPropose creates a valid policy change as ZTEST's role (never adopted: the test ends it)
// and registers its cancellation for the end of the test. It returns the request id.
func atkPropose(t *testing.T, role string) string {
	t.Helper()
	id := create(t, demo.CompanyZTEST, role, createBody(t, policyChange, map[string]any{"rules": atkRules()})).RequestID
	atkEnd(t, demo.CompanyZTEST, role, id)
	return id
}

// atkEnd cancels the request as its maker at the end of the test if it is still pending, so
// that nothing the test made can be adopted later.
func atkEnd(t *testing.T, companyID, role, requestID string) {
	t.Helper()
	t.Cleanup(func() {
		r := do(t, newClient(companyID, role), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": requestID}))
		if r.status != http.StatusOK && r.status != http.StatusConflict {
			t.Errorf("cancel %s at the end: status %d, body %s", requestID, r.status, r.body)
		}
	})
}

// atkClone is a deep copy of a pending object.
func atkClone(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	mustUnmarshal(t, mustJSON(t, obj), &out)
	return out
}

// atkDecision is the pending object obj with decision set (and reason, if any).
func atkDecision(t *testing.T, obj map[string]any, decision, reason string) map[string]any {
	t.Helper()
	out := atkClone(t, obj)
	out["type"] = decision
	if reason != "" {
		out["rejectReason"] = reason
	}
	return out
}

// atkApprove sends an approve call as role with an already built body.
func atkApprove(t *testing.T, companyID, role string, body []byte) response {
	t.Helper()
	return do(t, newClient(companyID, role), http.MethodPost, approvePath, body)
}

// atkTrail is the audit trail of one request as its company's viewer sees it.
type atkTrail struct {
	Total int `json:"total"`
	Items []struct {
		VersionNumber int    `json:"versionNumber"`
		VersionAction int    `json:"versionAction"`
		PolicyVersion string `json:"policyVersion"`
		Rule          string `json:"rule"`
		Approvals     []struct {
			Approver  string   `json:"approver"`
			Roles     []string `json:"roles"`
			Signature string   `json:"signature"`
		} `json:"approvals"`
	} `json:"items"`
}

func atkAudit(t *testing.T, companyID, requestID string) atkTrail {
	t.Helper()
	var got []atkTrail
	mustUnmarshal(t, auditTrail(t, companyID, map[string]any{"requestIds": []string{requestID}, "sort": map[string]string{"by": "id", "order": "ASC"}}), &got)
	if len(got) != 1 {
		t.Fatalf("audit trail of %s: %d elements, want 1", requestID, len(got))
	}
	return got[0]
}

// atkActions lists the versionAction of each version of the request, oldest first.
func atkActions(t *testing.T, companyID, requestID string) []int {
	t.Helper()
	var out []int
	for _, v := range atkAudit(t, companyID, requestID).Items {
		out = append(out, v.VersionAction)
	}
	return out
}

// atkMany is the list s(0), …, s(n-1).
func atkMany(n int, s func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s(i)
	}
	return out
}

// TestPolicyAttackInvalidProposals: a maker proposes policies no company could live with,
// or bodies that are not policies at all. Each is a 400 (413 for the oversized body) in the
// contract's error body, naming the rule or the field, and nothing is stored.
func TestPolicyAttackInvalidProposals(t *testing.T) {
	t.Parallel()
	js := func(v any) string { return string(mustJSON(t, v)) }
	rules := func(rs ...map[string]any) string { return js(map[string]any{"rules": rs}) }
	group := func(name string, threshold any, members map[string]any) map[string]any {
		g := map[string]any{"name": name, "threshold": threshold}
		for k, v := range members {
			g[k] = v
		}
		return g
	}
	checkers := map[string]any{"roles": []string{"CHECKER"}}
	pc := atkPolicyChange(group("checkers", 1, checkers))
	catchAll := atkCatchAll()
	// withCatchAll replaces the catch-all's groups (its rule is named "default").
	withCatchAll := func(groups ...map[string]any) string {
		last := atkCatchAll()
		last["groups"] = groups
		return rules(pc, last)
	}
	// rawThreshold puts raw JSON in place of the catch-all's only group's threshold.
	rawThreshold := func(raw string) string {
		return `{"rules":[` + js(pc) + `,{"name":"default","action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":` + raw + `}]}]}`
	}
	ruleWith := func(k string, v any) map[string]any {
		r := map[string]any{"name": "special", "action": "REQUIRE_APPROVAL", "groups": []map[string]any{group("checkers", 1, checkers)}}
		r[k] = v
		return r
	}
	ztestUsers := []string{demo.UserEmail("ztest", checker), demo.UserEmail("ztest", admin)}
	tooManyRules := []map[string]any{pc}
	for i := range 64 {
		tooManyRules = append(tooManyRules, map[string]any{"name": fmt.Sprintf("r%02d", i), "operations": []string{"0x0013-001"}, "action": "BLOCK"})
	}
	tooManyRules = append(tooManyRules, catchAll)
	nineGroups := make([]map[string]any, 9)
	for i := range nineGroups {
		nineGroups[i] = group(fmt.Sprintf("g%d", i), 1, checkers)
	}

	tests := []struct {
		name    string
		payload string
		status  int
		code    string
		want    []string // substrings of the message
	}{
		// Not a policy at all.
		{"no payload fields", `{}`, 400, "ER-101", []string{"rules"}},
		{"no rules", `{"rules":[]}`, 400, "ER-101", []string{"rules"}},
		{"rules null", `{"rules":null}`, 400, "ER-101", []string{"rules"}},
		{"rules a string", `{"rules":"all of them"}`, 400, "ER-108", []string{"rules"}},
		{"rules an object", `{"rules":{"name":"default","action":"ALLOW"}}`, 400, "ER-108", []string{"rules"}},
		{"rule a number", `{"rules":[1,2,3]}`, 400, "ER-108", []string{"rules"}},
		{"payload field outside the template", `{"rules":` + js([]map[string]any{pc, catchAll}) + `,"version":7}`, 400, "ER-108", []string{"version"}},
		{"company smuggled in the payload", `{"rules":` + js([]map[string]any{pc, catchAll}) + `,"companyId":"ZACME"}`, 400, "ER-108", []string{"companyId"}},
		{"unknown rule field", rules(pc, ruleWith("priority", 1), catchAll), 400, "ER-108", []string{"priority"}},
		{"unknown group field", withCatchAll(group("checkers", 1, map[string]any{"roles": []string{"CHECKER"}, "weight": 2})), 400, "ER-108", []string{"weight"}},
		{"nested junk in a rule", `{"rules":[{"name":{"a":{"b":{"c":[1,[2,[3]]]}}},"action":"ALLOW"}]}`, 400, "ER-108", []string{"name"}},
		{"junk nested deeper than the gateway allows", `{"rules":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, 400, "ER-103", []string{"nested"}},
		// Wrong types.
		{"rule name a number", rules(pc, map[string]any{"name": 7, "operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"name"}},
		{"operations a string", rules(pc, map[string]any{"name": "one", "operations": "0x0013-001", "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"operations"}},
		{"operation a number", rules(pc, map[string]any{"name": "one", "operations": []any{19}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"operations"}},
		{"groups an object", rules(pc, map[string]any{"name": "default", "action": "REQUIRE_APPROVAL", "groups": group("checkers", 1, checkers)}), 400, "ER-108", []string{"groups"}},
		{"threshold a string", rawThreshold(`"1"`), 400, "ER-108", []string{"threshold"}},
		{"threshold fractional", rawThreshold(`1.5`), 400, "ER-108", []string{"threshold"}},
		{"threshold astronomically large", rawThreshold(`1e300`), 400, "ER-108", []string{"threshold"}},
		{"threshold true", rawThreshold(`true`), 400, "ER-108", []string{"threshold"}},
		{"minUsd a number", rules(pc, map[string]any{"name": "big", "minUsd": 100000, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"minUsd"}},
		// Thresholds.
		{"threshold zero", rawThreshold(`0`), 400, "ER-103", []string{`rule "default"`, "threshold"}},
		{"threshold negative", rawThreshold(`-3`), 400, "ER-103", []string{`rule "default"`, "threshold"}},
		{"threshold above the group", rawThreshold(`3`), 400, "ER-103", []string{`rule "default"`, "threshold"}},
		{"threshold of a trillion", rawThreshold(`1000000000000`), 400, "ER-103", []string{`rule "default"`, "threshold"}},
		// USD thresholds.
		{"minUsd negative", rules(pc, map[string]any{"name": "big", "minUsd": "-1", "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "big"`, "minUsd"}},
		{"minUsd finer than cents", rules(pc, map[string]any{"name": "big", "minUsd": "0.001", "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "big"`, "minUsd"}},
		{"minUsd with an exponent", rules(pc, map[string]any{"name": "big", "minUsd": "1e6", "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "big"`, "minUsd"}},
		{"minUsd with a space", rules(pc, map[string]any{"name": "big", "minUsd": " 100", "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "big"`, "minUsd"}},
		{"minUsd of 100 digits", rules(pc, map[string]any{"name": "big", "minUsd": strings.Repeat("9", 100), "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "big"`, "minUsd"}},
		{"minUsd not a number", rules(pc, map[string]any{"name": "big", "minUsd": "lots", "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "big"`, "minUsd"}},
		// Sizes.
		{"66 rules", rules(tooManyRules...), 400, "ER-103", []string{"64"}},
		{"nine groups", withCatchAll(nineGroups...), 400, "ER-103", []string{`rule "default"`, "8"}},
		{"65 wallets", rules(pc, map[string]any{"name": "wallets", "wallets": atkMany(65, func(i int) string { return fmt.Sprintf("ZTEST-NOBENF-W%09d", i) }), "action": "BLOCK"}, catchAll), 400, "ER-103", []string{`rule "wallets"`, "wallets"}},
		{"100 users in a group", withCatchAll(group("crowd", 1, map[string]any{"users": atkMany(100, func(i int) string { return fmt.Sprintf("user%d@ztest.example", i) })})), 400, "ER-103", []string{`rule "default"`, "users"}},
		{"2000 users in a group", withCatchAll(group("crowd", 1, map[string]any{"users": atkMany(2000, func(i int) string { return fmt.Sprintf("user%d@ztest.example", i) })})), 400, "ER-103", []string{"1024"}},
		{"over-long wallet id", rules(pc, map[string]any{"name": "wallets", "wallets": []string{strings.Repeat("W", 300)}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "wallets"`, "wallets[0]"}},
		// Names.
		{"rule name missing", rules(pc, map[string]any{"operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-101", []string{"rules[1].name"}},
		{"rule name of 65 characters", rules(pc, map[string]any{"name": strings.Repeat("n", 65), "operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"rules[1].name"}},
		{"rule name with markup", rules(pc, map[string]any{"name": "<script>alert(1)</script>", "operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"rules[1].name"}},
		{"rule name with a newline", rules(pc, map[string]any{"name": "one\ntwo", "operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"rules[1].name"}},
		{"rule name starting with a space", rules(pc, map[string]any{"name": " hidden", "operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{"rules[1].name"}},
		{"duplicate rule names", rules(pc, map[string]any{"name": "default", "operations": []string{"0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`"default"`, "twice"}},
		{"group name missing", withCatchAll(map[string]any{"roles": []string{"CHECKER"}, "threshold": 1}), 400, "ER-101", []string{"groups[0].name"}},
		{"duplicate group names", withCatchAll(group("same", 1, checkers), group("same", 1, map[string]any{"users": ztestUsers[:1]})), 400, "ER-108", []string{`"same"`, "twice"}},
		// Structure.
		{"catch-all first", rules(catchAll, pc), 400, "ER-108", []string{`rule "default"`, "catch-all"}},
		{"no catch-all last", rules(pc, map[string]any{"name": "custody", "operations": []string{"0x0013-001"}, "action": "BLOCK"}), 400, "ER-108", []string{`"custody"`, "catch-all"}},
		{"policy changes on the maker's word", rules(map[string]any{"name": "policy changes", "operations": []string{"policy.change"}, "action": "ALLOW"}, catchAll), 400, "ER-108", []string{`rule "policy changes"`, "two people"}},
		{"policy changes blocked", rules(map[string]any{"name": "policy changes", "operations": []string{"policy.change"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "policy changes"`, "two people"}},
		{"a catch-all ALLOW decides policy changes", rules(map[string]any{"name": "anything", "action": "ALLOW"}), 400, "ER-108", []string{`rule "anything"`, "two people"}},
		{"unknown action", rules(pc, map[string]any{"name": "one", "operations": []string{"0x0013-001"}, "action": "APPROVE"}, catchAll), 400, "ER-108", []string{`rule "one"`, "action"}},
		{"action in lower case", rules(pc, map[string]any{"name": "one", "operations": []string{"0x0013-001"}, "action": "block"}, catchAll), 400, "ER-108", []string{`rule "one"`, "action"}},
		{"action missing", rules(pc, map[string]any{"name": "one", "operations": []string{"0x0013-001"}}, catchAll), 400, "ER-101", []string{"rules[1].action"}},
		{"unknown combine", rules(pc, ruleWith("combine", "XOR"), catchAll), 400, "ER-108", []string{`rule "special"`, "combine"}},
		{"groups on an ALLOW rule", rules(pc, map[string]any{"name": "one", "operations": []string{"0x0013-001"}, "action": "ALLOW", "groups": []map[string]any{group("checkers", 1, checkers)}}, catchAll), 400, "ER-108", []string{`rule "one"`, "groups"}},
		{"approvals without groups", rules(pc, map[string]any{"name": "one", "operations": []string{"0x0013-001"}, "action": "REQUIRE_APPROVAL"}, catchAll), 400, "ER-101", []string{"rules[1].groups"}},
		{"group without members", withCatchAll(group("nobody", 1, nil)), 400, "ER-108", []string{`rule "default"`, `"nobody"`}},
		// Names of things the company does not have.
		{"unknown user", withCatchAll(group("people", 1, map[string]any{"users": []string{"nobody@ztest.example"}})), 400, "ER-108", []string{`rule "default"`, "nobody@ztest.example"}},
		{"another company's user", withCatchAll(group("people", 1, map[string]any{"users": []string{demo.UserEmail("zacme", checker)}})), 400, "ER-108", []string{`rule "default"`, demo.UserEmail("zacme", checker)}},
		{"user e-mail in upper case", withCatchAll(group("people", 1, map[string]any{"users": []string{strings.ToUpper(demo.UserEmail("ztest", checker))}})), 400, "ER-108", []string{`rule "default"`, "not known"}},
		{"repeated user", withCatchAll(group("people", 1, map[string]any{"users": []string{ztestUsers[0], ztestUsers[0]}})), 400, "ER-108", []string{`rule "default"`, "twice"}},
		{"unknown role", withCatchAll(group("admins", 1, map[string]any{"roles": []string{"ADMIN"}})), 400, "ER-108", []string{`rule "default"`, "ADMIN"}},
		{"role in lower case", withCatchAll(group("checkers", 1, map[string]any{"roles": []string{"checker"}})), 400, "ER-108", []string{`rule "default"`, "checker"}},
		{"unknown service", rules(pc, map[string]any{"name": "one", "operations": []string{"0x9999-999"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "one"`, "0x9999-999"}},
		{"unknown operation", rules(pc, map[string]any{"name": "one", "operations": []string{"venue.everything"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "one"`, "venue.everything"}},
		{"repeated operation", rules(pc, map[string]any{"name": "one", "operations": []string{"0x0013-001", "0x0013-001"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "one"`, "twice"}},
		{"unknown currency", rules(pc, map[string]any{"name": "one", "currencies": []string{"DOGE"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "one"`, "DOGE"}},
		{"currency in lower case", rules(pc, map[string]any{"name": "one", "currencies": []string{"btc"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "one"`, "btc"}},
		{"unknown destination", rules(pc, map[string]any{"name": "one", "destinations": []string{"MOON"}, "action": "BLOCK"}, catchAll), 400, "ER-108", []string{`rule "one"`, "MOON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e2e := uuid.NewString()
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, tt.payload))
			if r.status == http.StatusOK {
				var got createAnswer
				mustUnmarshal(t, r.body, &got)
				atkEnd(t, demo.CompanyZTEST, maker, got.RequestID)
			}
			msg := wantError(t, r, tt.status, tt.code)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not name %q", msg, w)
				}
			}
			if n := atkStored(t, demo.CompanyZTEST, e2e); n != 0 {
				t.Errorf("a refused proposal stored %d requests", n)
			}
		})
	}
	// The refusal of another company's user says no more than that of a user who does not
	// exist: it is no oracle for other companies' users.
	t.Run("no oracle for other companies' users", func(t *testing.T) {
		refusal := func(email string) string {
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath,
				atkBody(policyChange, uuid.NewString(), withCatchAll(group("people", 1, map[string]any{"users": []string{email}}))))
			return strings.ReplaceAll(wantError(t, r, http.StatusBadRequest, "ER-108"), email, "EMAIL")
		}
		if a, b := refusal(demo.UserEmail("zacme", checker)), refusal("nobody-at-all@zacme.example"); a != b {
			t.Errorf("another company's user is refused with %q, a user who does not exist with %q", a, b)
		}
	})
	t.Run("oversized proposal", func(t *testing.T) {
		e2e := uuid.NewString()
		huge := `{"rules":[{"name":"` + strings.Repeat("n", 16000) + `","action":"ALLOW"}` + strings.Repeat(`,{"name":"`+strings.Repeat("x", 16000)+`","action":"ALLOW"}`, 70) + `]}`
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, huge)), http.StatusRequestEntityTooLarge, "ER-413")
		if n := atkStored(t, demo.CompanyZTEST, e2e); n != 0 {
			t.Errorf("an oversized proposal stored %d requests", n)
		}
	})
}

// TestPolicyAttackWhoProposes: only a MAKER entitled to the policy change proposes one; a
// CHECKER, a VIEWER, the company itself (no submitter) and the makers of companies not
// entitled to it are refused, and nothing is stored.
func TestPolicyAttackWhoProposes(t *testing.T) {
	t.Parallel()
	payload := atkJS(t, map[string]any{"rules": atkRules()})
	for _, tt := range []struct {
		name, companyID, role string
		status                int
		code                  string
	}{
		{"ZTEST checker", demo.CompanyZTEST, checker, http.StatusForbidden, "ER-403"},
		{"ZTEST viewer", demo.CompanyZTEST, viewer, http.StatusForbidden, "ER-403"},
		{"ZTEST without a submitter", demo.CompanyZTEST, company, http.StatusUnauthorized, "ER-401"},
		{"ZACME maker, not entitled", demo.CompanyZACME, maker, http.StatusForbidden, "ER-403"},
		{"ZBYBIT maker, a venue's operator", demo.CompanyZBYBIT, maker, http.StatusForbidden, "ER-403"},
		{"ZCUSTODY maker, the custodian", demo.CompanyZCUSTODY, maker, http.StatusForbidden, "ER-403"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e2e := uuid.NewString()
			wantError(t, do(t, atkClient(t, tt.companyID, tt.role), http.MethodPost, createPath, atkBody(policyChange, e2e, payload)), tt.status, tt.code)
			if n := atkStored(t, tt.companyID, e2e); n != 0 {
				t.Errorf("a refused proposal of %s stored %d requests", tt.companyID, n)
			}
		})
	}
}

func atkJS(t *testing.T, v any) string {
	t.Helper()
	return string(mustJSON(t, v))
}

// TestPolicyAttackProposalReplays: the same proposal sent again (keys in another order) is
// the same request; another policy under the same endToEndId is 409 ER-104; twelve
// identical proposals racing store one request and all answer it.
func TestPolicyAttackProposalReplays(t *testing.T) {
	t.Parallel()
	e2e := uuid.NewString()
	first := atkBody(policyChange, e2e, atkJS(t, map[string]any{"rules": atkRules()}))
	var a, b createAnswer
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, first), &a)
	atkEnd(t, demo.CompanyZTEST, maker, a.RequestID)
	// The same rules with their keys in another order: the same canonical payload.
	reordered := `{"endToEndId":"` + e2e + `","payload":{"rules":[` +
		`{"action":"ALLOW","operations":["0x0007-004"],"name":"beneficiaries"},` +
		`{"groups":[{"threshold":1,"roles":["CHECKER"],"name":"checkers"}],"action":"REQUIRE_APPROVAL","operations":["policy.change"],"name":"policy changes"},` +
		`{"groups":[{"threshold":1,"roles":["CHECKER"],"name":"checkers"}],"action":"REQUIRE_APPROVAL","name":"default"}]},"serviceId":"` + policyChange + `"}`
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, []byte(reordered)), &b)
	if a.RequestID != b.RequestID || fmt.Sprint(a.PluginDetail.EntityID) != fmt.Sprint(b.PluginDetail.EntityID) {
		t.Errorf("the replayed proposal answered %+v, the first %+v", b, a)
	}
	other := atkRules()
	other[2]["name"] = "everything else"
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, atkJS(t, map[string]any{"rules": other}))), http.StatusConflict, "ER-104")
	// Another maker of the company reusing the endToEndId for another body is refused too.
	wantError(t, do(t, newClient(demo.CompanyZTEST, admin), http.MethodPost, createPath, atkBody(policyChange, e2e, atkJS(t, map[string]any{"rules": other}))), http.StatusConflict, "ER-104")
	if n := atkStored(t, demo.CompanyZTEST, e2e); n != 1 {
		t.Errorf("%d requests under one endToEndId, want 1", n)
	}

	racing := uuid.NewString()
	body := atkBody(policyChange, racing, atkJS(t, map[string]any{"rules": atkRules()}))
	var same []atkCall
	for range 12 {
		same = append(same, atkCall{maker, createPath, "Create", body})
	}
	answers := atkRace(t, demo.CompanyZTEST, same)
	ids := map[string]int{}
	for _, r := range answers {
		if r.status != http.StatusOK {
			t.Errorf("a racing identical proposal: status %d, body %s", r.status, r.body)
			continue
		}
		var got createAnswer
		mustUnmarshal(t, r.body, &got)
		ids[got.RequestID]++
	}
	for id := range ids {
		atkEnd(t, demo.CompanyZTEST, maker, id)
	}
	if len(ids) != 1 {
		t.Errorf("racing identical proposals answered %d request ids %v, want one", len(ids), ids)
	}
	if got := atkStored(t, demo.CompanyZTEST, racing); got != 1 {
		t.Errorf("racing identical proposals stored %d requests, want 1", got)
	}

	// Eight different proposals racing under one endToEndId: one is stored, the others are
	// 409 ER-104.
	contested := uuid.NewString()
	var calls []atkCall
	for i := range 8 {
		r := atkRules()
		r[2]["name"] = fmt.Sprintf("contested %d", i)
		calls = append(calls, atkCall{maker, createPath, "Create", atkBody(policyChange, contested, atkJS(t, map[string]any{"rules": r}))})
	}
	won := 0
	for i, r := range atkRace(t, demo.CompanyZTEST, calls) {
		switch r.status {
		case http.StatusOK:
			won++
			var got createAnswer
			mustUnmarshal(t, r.body, &got)
			atkEnd(t, demo.CompanyZTEST, maker, got.RequestID)
		case http.StatusConflict:
			if got := decodeError(t, r); got.Code != "ER-104" {
				t.Errorf("racing proposal %d under one endToEndId: %+v, want ER-104", i, got)
			}
		default:
			t.Errorf("racing proposal %d under one endToEndId: status %d, body %s", i, r.status, r.body)
		}
	}
	if got := atkStored(t, demo.CompanyZTEST, contested); won != 1 || got != 1 {
		t.Errorf("different proposals racing under one endToEndId: %d answered 200, %d stored; want one", won, got)
	}
}

// TestPolicyAttackConcurrentProposals: one maker sends twenty different proposals at once.
// Each is its own request reserving the version after the one in force, none changes the
// policy in force, and the maker withdraws them all at once.
func TestPolicyAttackConcurrentProposals(t *testing.T) {
	t.Parallel()
	before := atkPolicyVersion(t, demo.CompanyZTEST)
	var proposals []atkCall
	for i := range 20 {
		r := atkRules()
		r[2]["name"] = fmt.Sprintf("default %d", i)
		proposals = append(proposals, atkCall{maker, createPath, "Create", createBody(t, policyChange, map[string]any{"rules": r})})
	}
	answers := atkRace(t, demo.CompanyZTEST, proposals)
	var ids []string
	entities := map[string]bool{}
	for _, r := range answers {
		if r.status != http.StatusOK {
			t.Errorf("a concurrent proposal: status %d, body %s", r.status, r.body)
			continue
		}
		var got createAnswer
		mustUnmarshal(t, r.body, &got)
		atkEnd(t, demo.CompanyZTEST, maker, got.RequestID)
		ids = append(ids, got.RequestID)
		entities[strings.Join(got.PluginDetail.EntityID, ",")] = true
	}
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("concurrent proposals share request ids: %v", ids)
	}
	version := 0
	if _, err := fmt.Sscan(before, &version); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s:policy:%d", demo.CompanyZTEST, version+1); len(entities) != 1 || !entities[want] {
		t.Errorf("concurrent proposals reserved %v, want each %s", entities, want)
	}
	// The version they reserve is not in force, nor listed, while they are pending.
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, policyPath, mustJSON(t, map[string]int{"version": version + 1})), http.StatusNotFound, "ER-102")
	var listed struct {
		Items []policyAnswer `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, policyVersionsPath, []byte(`{}`)), &listed)
	if len(listed.Items) == 0 || (listed.Items[0].Version != before && !(before == "0" && listed.Items[0].Version == "")) {
		t.Errorf("while proposals are pending the newest listed version is %+v, want %s", listed.Items, before)
	}
	// All withdrawn at once: each is cancelled exactly once.
	var cancels []atkCall
	for _, id := range ids {
		cancels = append(cancels, atkCall{maker, cancelPath, "Cancel", mustJSON(t, map[string]string{"requestId": id})})
	}
	for i, r := range atkRace(t, demo.CompanyZTEST, cancels) {
		wantStatus(t, r, "CANCELLED")
		if s := requestStatus(t, demo.CompanyZTEST, ids[i]); s != "CANCELLED" {
			t.Errorf("%s is %s after its cancellation", ids[i], s)
		}
	}
	if after := atkPolicyVersion(t, demo.CompanyZTEST); after != before {
		t.Errorf("ZTEST's policy moved from version %s to %s though no proposal was approved", before, after)
	}
}

// TestPolicyAttackFourEyesThroughASecondRole: ZTEST's admin holds MAKER and CHECKER. Their own
// request (a custody wallet, and a policy change) cannot be approved or rejected by them;
// a MAKER who is no approver, a VIEWER and another company's CHECKER cannot either, and a
// CHECKER cannot confirm in the maker's place. Nothing changes the request until its maker
// withdraws it.
func TestPolicyAttackFourEyesThroughASecondRole(t *testing.T) {
	t.Parallel()
	wallet := create(t, demo.CompanyZTEST, admin, createBody(t, "0x0013-001", custodyWalletPayload("Four eyes "+uuid.NewString()[:8]))).RequestID
	atkEnd(t, demo.CompanyZTEST, admin, wallet)
	proposal := atkPropose(t, admin)
	for _, id := range []string{wallet, proposal} {
		confirmView := pending(t, demo.CompanyZTEST, admin, id).Request
		// Before confirmation: nobody but the maker confirms, and nobody decides yet.
		wantError(t, atkApprove(t, demo.CompanyZTEST, checker, approveBody(t, id, atkClone(t, confirmView), userKey(t, demo.CompanyZTEST, checker))), http.StatusForbidden, "ER-403")
		wantError(t, atkApprove(t, demo.CompanyZTEST, maker, approveBody(t, id, atkClone(t, confirmView), userKey(t, demo.CompanyZTEST, maker))), http.StatusForbidden, "ER-403")
		wantError(t, atkApprove(t, demo.CompanyZTEST, checker, approveBody(t, id, atkDecision(t, confirmView, "Approve", ""), userKey(t, demo.CompanyZTEST, checker))), http.StatusBadRequest, "ER-108")
		wantError(t, atkApprove(t, demo.CompanyZTEST, checker, approveBody(t, id, atkDecision(t, confirmView, "Reject", "too early"), userKey(t, demo.CompanyZTEST, checker))), http.StatusBadRequest, "ER-108")
		if s := requestStatus(t, demo.CompanyZTEST, id); s != "PENDING CONFIRMATION" {
			t.Fatalf("%s is %s after others tried to confirm it", id, s)
		}
		wantStatus(t, act(t, demo.CompanyZTEST, admin, id, "", ""), "PENDING AUTHORISATION")

		view := pending(t, demo.CompanyZTEST, admin, id).Request
		for _, tt := range []struct {
			name, companyID, role, decision string
			status                          int
			code                            string
		}{
			{"the maker approves through their CHECKER role", demo.CompanyZTEST, admin, "Approve", http.StatusForbidden, "ER-403"},
			{"the maker rejects through their CHECKER role", demo.CompanyZTEST, admin, "Reject", http.StatusForbidden, "ER-403"},
			{"a MAKER who is no approver", demo.CompanyZTEST, maker, "Approve", http.StatusForbidden, "ER-403"},
			{"a VIEWER", demo.CompanyZTEST, viewer, "Approve", http.StatusForbidden, "ER-403"},
			{"another company's CHECKER", demo.CompanyZACME, checker, "Approve", http.StatusNotFound, "ER-102"},
			{"another company's CHECKER rejecting", demo.CompanyZACME, checker, "Reject", http.StatusNotFound, "ER-102"},
		} {
			if tt.role == maker && id == proposal {
				// ZTEST's policy of TestPolicyChangeNeedsTwoPeople lets MAKERs approve others'
				// policy changes (two approvers besides the proposer): the case holds for the
				// wallet request, decided by one CHECKER.
				continue
			}
			t.Run(tt.name, func(t *testing.T) {
				reason := ""
				if tt.decision == "Reject" {
					reason = "not on my watch"
				}
				body := approveBody(t, id, atkDecision(t, view, tt.decision, reason), userKey(t, tt.companyID, tt.role))
				msg := wantError(t, atkApprove(t, tt.companyID, tt.role, body), tt.status, tt.code)
				// A VIEWER is stopped before any policy is read: no rule can make one an approver.
				if tt.role == viewer && !strings.Contains(msg, "may not use") {
					t.Errorf("a VIEWER's approval is refused with %q, not by the role gate", msg)
				}
			})
		}
		q := pendingQuorum(t, viewer, id)
		if st := requestStatus(t, demo.CompanyZTEST, id); q.Met || len(q.Approvers) != 0 || st != "PENDING AUTHORISATION" {
			t.Errorf("after the refused decisions %s is %s with quorum %s, approvers %v", id, st, q, q.Approvers)
		}
		if got := atkActions(t, demo.CompanyZTEST, id); fmt.Sprint(got) != "[1 2]" {
			t.Errorf("audit trail of %s after the refused decisions: actions %v, want [1 2] (created, confirmed)", id, got)
		}
		// Another maker cannot withdraw it either; its own maker can.
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), http.StatusForbidden, "ER-403")
		wantError(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), http.StatusForbidden, "ER-403")
		wantStatus(t, do(t, newClient(demo.CompanyZTEST, admin), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), "CANCELLED")
	}
}

// TestPolicyAttackForgedApprovals: a CHECKER tries every way of bending the signed object of
// a pending request: another request's object, the maker's confirmation object reused, the
// decision changed after signing, someone else's or the company's signature, a tampered
// versionNumber, payload or field set, a placeholder or junk signature. Each is refused
// (400, 403 or 409 in the contract's body) and the request is unchanged; a genuine
// rejection then ends it, and nothing approves it afterwards.
func TestPolicyAttackForgedApprovals(t *testing.T) {
	t.Parallel()
	nameA := "Forged A " + uuid.NewString()[:8]
	a := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload(nameA)))
	b := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload("Forged B "+uuid.NewString()[:8])))
	atkEnd(t, demo.CompanyZTEST, maker, a.RequestID)
	atkEnd(t, demo.CompanyZTEST, maker, b.RequestID)
	confirmView := pending(t, demo.CompanyZTEST, checker, a.RequestID).Request
	wantStatus(t, act(t, demo.CompanyZTEST, maker, a.RequestID, "", ""), "PENDING AUTHORISATION")
	wantStatus(t, act(t, demo.CompanyZTEST, maker, b.RequestID, "", ""), "PENDING AUTHORISATION")
	view := pending(t, demo.CompanyZTEST, checker, a.RequestID).Request
	viewB := pending(t, demo.CompanyZTEST, checker, b.RequestID).Request
	checkerKey, adminKey := userKey(t, demo.CompanyZTEST, checker), userKey(t, demo.CompanyZTEST, admin)
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := a.RequestID

	signedBy := func(key *ecdsa.PrivateKey, obj map[string]any) []byte { return approveBody(t, id, obj, key) }
	withSig := func(obj map[string]any, sig string) []byte {
		return mustJSON(t, map[string]any{"requestId": id, "request": obj, "signature": sig})
	}
	tampered := func(f func(m map[string]any)) map[string]any {
		m := atkDecision(t, view, "Approve", "")
		f(m)
		return m
	}
	// The decision changed after signing: sign Approve, send Reject (and the other way).
	approveSig, err := signing.SignApproval(checkerKey, mustJSON(t, atkDecision(t, view, "Approve", "")))
	if err != nil {
		t.Fatal(err)
	}
	remember(approveSig)
	rejectSig, err := signing.SignApproval(checkerKey, mustJSON(t, atkDecision(t, view, "Reject", "no")))
	if err != nil {
		t.Fatal(err)
	}
	remember(rejectSig)
	versionNumber, _ := view["versionNumber"].(float64)
	tests := []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"another request's object", signedBy(checkerKey, atkDecision(t, viewB, "Approve", "")), http.StatusConflict, "ER-409"},
		{"the object of another request's id sent for it", mustJSON(t, map[string]any{"requestId": b.RequestID, "request": atkDecision(t, view, "Approve", ""), "signature": approveSig}), http.StatusConflict, "ER-409"},
		{"the maker's confirmation object reused", signedBy(checkerKey, atkDecision(t, confirmView, "Approve", "")), http.StatusConflict, "ER-409"},
		{"signed Approve, sent Reject", withSig(atkDecision(t, view, "Reject", "no"), approveSig), http.StatusForbidden, "ER-403"},
		{"signed Reject, sent Approve", withSig(atkDecision(t, view, "Approve", ""), rejectSig), http.StatusForbidden, "ER-403"},
		{"signed Reject, reason changed", withSig(atkDecision(t, view, "Reject", "yes"), rejectSig), http.StatusForbidden, "ER-403"},
		{"another approver's signature", signedBy(adminKey, atkDecision(t, view, "Approve", "")), http.StatusForbidden, "ER-403"},
		{"the maker's signature", signedBy(userKey(t, demo.CompanyZTEST, maker), atkDecision(t, view, "Approve", "")), http.StatusForbidden, "ER-403"},
		{"another company's checker's signature", signedBy(userKey(t, demo.CompanyZACME, checker), atkDecision(t, view, "Approve", "")), http.StatusForbidden, "ER-403"},
		{"a key nobody registered", signedBy(stranger, atkDecision(t, view, "Approve", "")), http.StatusForbidden, "ER-403"},
		{"versionNumber one ahead", signedBy(checkerKey, tampered(func(m map[string]any) { m["versionNumber"] = versionNumber + 1 })), http.StatusConflict, "ER-409"},
		{"versionNumber one behind", signedBy(checkerKey, tampered(func(m map[string]any) { m["versionNumber"] = versionNumber - 1 })), http.StatusConflict, "ER-409"},
		{"versionNumber as a string", signedBy(checkerKey, tampered(func(m map[string]any) { m["versionNumber"] = fmt.Sprint(versionNumber) })), http.StatusConflict, "ER-409"},
		{"status rewritten", signedBy(checkerKey, tampered(func(m map[string]any) { m["status"] = "PENDING CONFIRMATION" })), http.StatusConflict, "ER-409"},
		{"payload changed", signedBy(checkerKey, tampered(func(m map[string]any) { m["payload"].(map[string]any)["name"] = []any{"Renamed"} })), http.StatusConflict, "ER-409"},
		{"a field added", signedBy(checkerKey, tampered(func(m map[string]any) { m["approvers"] = []any{demo.UserEmail("ztest", admin)} })), http.StatusConflict, "ER-409"},
		{"a field removed", signedBy(checkerKey, tampered(func(m map[string]any) { delete(m, "entityId") })), http.StatusConflict, "ER-409"},
		{"createdBy rewritten", signedBy(checkerKey, tampered(func(m map[string]any) { m["createdBy"] = demo.UserEmail("ztest", admin) })), http.StatusConflict, "ER-409"},
		{"type Confirm", signedBy(checkerKey, atkDecision(t, view, "Confirm", "")), http.StatusBadRequest, "ER-108"},
		{"type in lower case", signedBy(checkerKey, atkDecision(t, view, "approve", "")), http.StatusBadRequest, "ER-108"},
		{"type removed", signedBy(checkerKey, tampered(func(m map[string]any) { delete(m, "type") })), http.StatusBadRequest, "ER-108"},
		{"Reject without a reason", signedBy(checkerKey, atkDecision(t, view, "Reject", "")), http.StatusBadRequest, "ER-101"},
		{"the signature placeholder", withSig(atkDecision(t, view, "Approve", ""), "$$REPLACE$$"), http.StatusBadRequest, "ER-101"},
		{"no signature", mustJSON(t, map[string]any{"requestId": id, "request": atkDecision(t, view, "Approve", "")}), http.StatusBadRequest, "ER-101"},
		{"a junk signature", withSig(atkDecision(t, view, "Approve", ""), "MEUCIQDjunkjunkjunkjunkjunkjunkjunkjunkjunkjunkjunkjunkAiEAjunk="), http.StatusForbidden, "ER-403"},
		{"a signature that is no base64", withSig(atkDecision(t, view, "Approve", ""), "not base64 at all!"), http.StatusForbidden, "ER-403"},
		{"a signature of 600 characters", withSig(atkDecision(t, view, "Approve", ""), strings.Repeat("A", 600)), http.StatusBadRequest, "ER-103"},
		{"no request object", mustJSON(t, map[string]any{"requestId": id, "signature": approveSig}), http.StatusBadRequest, "ER-101"},
		{"no request id", mustJSON(t, map[string]any{"request": atkDecision(t, view, "Approve", ""), "signature": approveSig}), http.StatusBadRequest, "ER-101"},
		{"an unknown request id", mustJSON(t, map[string]any{"requestId": "SERV-REQ-NOSUCH0000", "request": atkDecision(t, view, "Approve", ""), "signature": approveSig}), http.StatusNotFound, "ER-102"},
		{"the request object a string", mustJSON(t, map[string]any{"requestId": id, "request": "approve please", "signature": approveSig}), http.StatusBadRequest, "ER-100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, atkApprove(t, demo.CompanyZTEST, checker, tt.body), tt.status, tt.code)
		})
	}
	if s := requestStatus(t, demo.CompanyZTEST, id); s != "PENDING AUTHORISATION" {
		t.Fatalf("after the forged decisions %s is %s", id, s)
	}
	if got := atkActions(t, demo.CompanyZTEST, id); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("audit trail after the forged decisions: actions %v, want [1 2] (created, confirmed)", got)
	}
	if q := pendingQuorum(t, viewer, id); len(q.Approvers) != 0 {
		t.Errorf("forged decisions counted: approvers %v", q.Approvers)
	}
	// A genuine rejection ends it; nothing approves it afterwards, not even the same signed
	// approval object that would have been valid before.
	wantStatus(t, atkApprove(t, demo.CompanyZTEST, checker, signedBy(checkerKey, atkDecision(t, view, "Reject", "forgery drill"))), "REJECTED")
	wantError(t, atkApprove(t, demo.CompanyZTEST, admin, signedBy(adminKey, atkDecision(t, view, "Approve", ""))), http.StatusConflict, "ER-409")
	wantError(t, atkApprove(t, demo.CompanyZTEST, checker, withSig(atkDecision(t, view, "Approve", ""), approveSig)), http.StatusConflict, "ER-409")
	wantError(t, do(t, newClient(demo.CompanyZTEST, checker), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": id})), http.StatusConflict, "ER-409")
	if got := atkActions(t, demo.CompanyZTEST, id); fmt.Sprint(got) != "[1 2 4]" {
		t.Errorf("audit trail after the rejection: actions %v, want [1 2 4]", got)
	}
	if ids := custodyWallets(t, demo.CompanyZTEST, nameA); len(ids) != 0 {
		t.Errorf("the rejected wallet exists: %v", ids)
	}
	wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": b.RequestID})), "CANCELLED")
}

// TestPolicyAttackCompanyIsolation: another company's users never see ZTEST's policy, its
// versions or its proposals: their policy extensions answer their own company only, a
// version only ZTEST has is 404 to them, smuggling a company id is refused, and ZTEST's
// pending proposal is not found through pending, approve or the audit trail.
func TestPolicyAttackCompanyIsolation(t *testing.T) {
	t.Parallel()
	proposal := atkPropose(t, maker)
	wantStatus(t, act(t, demo.CompanyZTEST, maker, proposal, "", ""), "PENDING AUTHORISATION")
	view := pending(t, demo.CompanyZTEST, viewer, proposal).Request
	ztestMarkers := []string{`"ZTEST"`, "ztest.example", proposal, "ZTEST:policy"}
	clean := func(t *testing.T, who string, body []byte) {
		t.Helper()
		for _, m := range ztestMarkers {
			if strings.Contains(string(body), m) {
				t.Errorf("%s sees %q of ZTEST: %s", who, m, body)
			}
		}
	}
	for _, other := range []string{demo.CompanyZACME, demo.CompanyZBYBIT, demo.CompanyZDERIBIT, demo.CompanyZCUSTODY} {
		for _, role := range []string{maker, checker, viewer} {
			who := other + " " + role
			t.Run(who, func(t *testing.T) {
				c := atkClient(t, other, role)
				r := do(t, c, http.MethodPost, policyPath, []byte(`{}`))
				var own struct {
					CompanyID string `json:"companyId"`
				}
				wantOK(t, r, &own)
				if own.CompanyID != other {
					t.Errorf("%s reads the policy of %q", who, own.CompanyID)
				}
				clean(t, who, r.body)
				// Versions ZTEST may have adopted are not theirs: 404, whatever ZTEST has.
				for _, v := range []string{`1`, `2`, `"3"`} {
					wantError(t, do(t, c, http.MethodPost, policyPath, []byte(`{"version":`+v+`}`)), http.StatusNotFound, "ER-102")
				}
				wantError(t, do(t, c, http.MethodPost, policyPath, []byte(`{"companyId":"ZTEST"}`)), http.StatusBadRequest, "ER-108")
				wantError(t, do(t, c, http.MethodPost, policyVersionsPath, []byte(`{"companyId":"ZTEST"}`)), http.StatusBadRequest, "ER-108")
				r = do(t, c, http.MethodPost, policyVersionsPath, []byte(`{}`))
				var versions struct {
					Items []struct {
						CompanyID string `json:"companyId"`
						Version   string `json:"version"`
					} `json:"items"`
				}
				wantOK(t, r, &versions)
				for _, v := range versions.Items {
					if v.CompanyID != other {
						t.Errorf("%s's policy versions list %+v", who, v)
					}
				}
				clean(t, who, r.body)
				wantError(t, do(t, c, http.MethodPost, policyDryRunPath, []byte(`{"serviceId":"0x0013-001","payload":{},"companyId":"ZTEST"}`)), http.StatusBadRequest, "ER-108")
				wantError(t, do(t, c, http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": proposal})), http.StatusNotFound, "ER-102")
				if role != viewer {
					key := userKey(t, other, role)
					wantError(t, do(t, c, http.MethodPost, approvePath, approveBody(t, proposal, atkDecision(t, view, "Reject", "not yours"), key)), http.StatusNotFound, "ER-102")
				}
				if role == maker {
					wantError(t, do(t, c, http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": proposal})), http.StatusNotFound, "ER-102")
				}
				r = do(t, c, http.MethodPost, auditPath, mustJSON(t, map[string]any{"requestIds": []string{proposal}}))
				if r.status != http.StatusOK || string(r.body) != `[{"total":0,"items":[]}]` {
					t.Errorf("%s's audit trail of ZTEST's proposal: %d %s", who, r.status, r.body)
				}
				r = do(t, c, http.MethodPost, requestsPath, mustJSON(t, map[string]any{"requestIds": []string{proposal}}))
				if r.status != http.StatusOK {
					t.Errorf("%s searching ZTEST's proposal: %d %s", who, r.status, r.body)
				}
				clean(t, who, r.body)
			})
		}
	}
	if st := requestStatus(t, demo.CompanyZTEST, proposal); st != "PENDING AUTHORISATION" {
		t.Errorf("ZTEST's proposal is %s after the other companies' attempts", st)
	}
	if q := pendingQuorum(t, viewer, proposal); len(q.Approvers) != 0 {
		t.Errorf("other companies' decisions counted: %v", q.Approvers)
	}
}

// TestPolicyAttackReadPolicyVersions: the version to read is checked (a negative, too large,
// fractional or non-numeric one is a 400, an unknown one a 404), the versions listing takes
// no parameters, and both need an API user.
func TestPolicyAttackReadPolicyVersions(t *testing.T) {
	t.Parallel()
	c := newClient(demo.CompanyZTEST, viewer)
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"negative", `{"version":-1}`, http.StatusBadRequest, "ER-103"},
		{"the largest int64", `{"version":9223372036854775807}`, http.StatusBadRequest, "ER-103"},
		{"beyond int64", `{"version":99999999999999999999}`, http.StatusBadRequest, "ER-108"},
		{"above the bound", `{"version":1000001}`, http.StatusBadRequest, "ER-103"},
		{"fractional", `{"version":1.5}`, http.StatusBadRequest, "ER-108"},
		{"a word", `{"version":"latest"}`, http.StatusBadRequest, "ER-108"},
		{"a boolean", `{"version":true}`, http.StatusBadRequest, "ER-108"},
		{"a list", `{"version":[1]}`, http.StatusBadRequest, "ER-108"},
		{"an unknown field", `{"version":0,"all":true}`, http.StatusBadRequest, "ER-108"},
		{"not JSON", `{"version":`, http.StatusBadRequest, "ER-100"},
		{"unknown version", `{"version":999999}`, http.StatusNotFound, "ER-102"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, do(t, c, http.MethodPost, policyPath, []byte(tt.body)), tt.status, tt.code)
		})
	}
	t.Run("in force by default, as a string or a number", func(t *testing.T) {
		var a, b, d policyAnswer
		wantOK(t, do(t, c, http.MethodPost, policyPath, []byte(`{}`)), &a)
		wantOK(t, do(t, c, http.MethodPost, policyPath, []byte(`{"version":"0"}`)), &b)
		wantOK(t, do(t, c, http.MethodPost, policyPath, []byte(`{"version":null}`)), &d)
		if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) != fmt.Sprint(d) {
			t.Errorf("the policy in force read three ways: %+v, %+v, %+v", a, b, d)
		}
	})
	t.Run("versions", func(t *testing.T) {
		wantError(t, do(t, c, http.MethodPost, policyVersionsPath, []byte(`{"limit":1000}`)), http.StatusBadRequest, "ER-108")
		var got struct {
			Items []policyAnswer `json:"items"`
		}
		wantOK(t, do(t, c, http.MethodPost, policyVersionsPath, nil), &got)
		if n := len(got.Items); n == 0 || n > 100 || got.Items[n-1].RequestID != "" || (got.Items[n-1].Version != "" && got.Items[n-1].Version != "0") {
			t.Errorf("versions %+v: want newest first, the default (version 0) last", got.Items)
		}
		for i := 1; i < len(got.Items); i++ {
			var prev, cur int
			fmt.Sscan(got.Items[i-1].Version, &prev)
			fmt.Sscan(got.Items[i].Version, &cur)
			if cur >= prev && got.Items[i].Version != "" {
				t.Errorf("versions not newest first: %+v", got.Items)
			}
		}
	})
	t.Run("company without a submitter", func(t *testing.T) {
		for _, path := range []string{policyPath, policyVersionsPath} {
			wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, path, []byte(`{}`)), http.StatusUnauthorized, "ER-401")
		}
		wantError(t, do(t, newClient(demo.CompanyZTEST, company), http.MethodPost, policyDryRunPath, []byte(`{"serviceId":"0x0013-001","payload":{}}`)), http.StatusUnauthorized, "ER-401")
	})
	t.Run("unsigned", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, env.stack.GatewayURL+policyPath, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		wantError(t, send(t, req), http.StatusUnauthorized, "ER-401")
	})
}

// TestPolicyAttackDryRun: the dry run refuses what create refuses before any owner is asked
// (unknown or unentitled service, venue- or custodian-only service, fields outside the
// template, malformed or oversized bodies), answers only for the caller's own policy, and
// stores nothing.
func TestPolicyAttackDryRun(t *testing.T) {
	t.Parallel()
	dry := func(companyID, role, body string) response {
		return do(t, newClient(companyID, role), http.MethodPost, policyDryRunPath, []byte(body))
	}
	for _, tt := range []struct {
		name, companyID, role, body string
		status                      int
		code                        string
	}{
		{"no serviceId", demo.CompanyZTEST, maker, `{"payload":{}}`, http.StatusBadRequest, "ER-101"},
		{"empty serviceId", demo.CompanyZTEST, maker, `{"serviceId":"","payload":{}}`, http.StatusBadRequest, "ER-101"},
		{"serviceId of 65 characters", demo.CompanyZTEST, maker, `{"serviceId":"` + strings.Repeat("0", 65) + `"}`, http.StatusBadRequest, "ER-103"},
		{"unknown service", demo.CompanyZTEST, maker, `{"serviceId":"0x9999-999","payload":{}}`, http.StatusNotFound, "ER-102"},
		{"an operation, not a service", demo.CompanyZTEST, maker, `{"serviceId":"policy.change","payload":{}}`, http.StatusNotFound, "ER-102"},
		{"a viewer not entitled to policy changes", demo.CompanyZTEST, viewer, `{"serviceId":"0x0001-001","payload":{"rules":[]}}`, http.StatusForbidden, "ER-403"},
		{"ZACME not entitled to custody wallets", demo.CompanyZACME, maker, `{"serviceId":"0x0013-001","payload":{}}`, http.StatusForbidden, "ER-403"},
		{"ZACME not entitled to policy changes", demo.CompanyZACME, maker, `{"serviceId":"0x0001-001","payload":{}}`, http.StatusForbidden, "ER-403"},
		{"a venue's service by a client", demo.CompanyZTEST, maker, `{"serviceId":"0x0003-003","payload":{}}`, http.StatusForbidden, "ER-403"},
		{"the custodian's service by a client", demo.CompanyZTEST, maker, `{"serviceId":"0x0009-001","payload":{"journal":"trading"}}`, http.StatusForbidden, "ER-403"},
		{"a field outside the template", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{"name":["x"],"owner":"ZACME"}}`, http.StatusBadRequest, "ER-108"},
		{"a policy change with a field outside the template", demo.CompanyZTEST, maker, `{"serviceId":"0x0001-001","payload":{"rules":[],"version":3}}`, http.StatusBadRequest, "ER-108"},
		// The gateway's convention for a value of the wrong JSON kind (TestBodyErrors).
		{"payload a list", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":[1,2]}`, http.StatusBadRequest, "ER-100"},
		{"payload a string", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":"x"}`, http.StatusBadRequest, "ER-100"},
		{"an endToEndId", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{},"endToEndId":"` + uuid.NewString() + `"}`, http.StatusBadRequest, "ER-108"},
		{"a company id", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{},"companyId":"ZACME"}`, http.StatusBadRequest, "ER-108"},
		{"a policy version", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{},"version":1}`, http.StatusBadRequest, "ER-108"},
		{"nested deeper than allowed", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{"name":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}}`, http.StatusBadRequest, "ER-103"},
		{"2000 names", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{"name":["` + strings.Repeat(`x","`, 1999) + `x"]}}`, http.StatusBadRequest, "ER-103"},
		{"a string of 20000 bytes", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{"name":["` + strings.Repeat("x", 20000) + `"]}}`, http.StatusBadRequest, "ER-103"},
		{"oversized", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":{"name":["` + strings.Repeat(`xxxxxxxxxxxxxxxx","`, 70000) + `x"]}}`, http.StatusRequestEntityTooLarge, "ER-413"},
		{"not JSON", demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001",`, http.StatusBadRequest, "ER-100"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, dry(tt.companyID, tt.role, tt.body), tt.status, tt.code)
		})
	}
	t.Run("answers for the caller's own policy", func(t *testing.T) {
		for _, tt := range []struct{ companyID, role, body string }{
			{demo.CompanyZTEST, viewer, `{"serviceId":"0x0013-001","payload":{"name":["dry"],"currency":["BTC"],"currencyId":["btc-btc"]}}`},
			{demo.CompanyZTEST, checker, `{"serviceId":"0x0001-001","payload":{"rules":[]}}`},
			{demo.CompanyZACME, viewer, `{"serviceId":"0x0003-001","payload":{}}`},
			{demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001"}`},
			{demo.CompanyZTEST, maker, `{"serviceId":"0x0013-001","payload":null}`},
		} {
			var got struct {
				Quorum quorumAnswer `json:"quorum"`
			}
			r := dry(tt.companyID, tt.role, tt.body)
			wantOK(t, r, &got)
			want := atkPolicyVersion(t, tt.companyID)
			if v := got.Quorum.PolicyVersion; (v == "" && want != "0") || (v != "" && v != want) || got.Quorum.Rule == "" || got.Quorum.Met {
				t.Errorf("%s %s dry run %s: quorum %s, want a rule of %s's version %s, not met", tt.companyID, tt.role, tt.body, got.Quorum, tt.companyID, want)
			}
			if tt.companyID != demo.CompanyZTEST && strings.Contains(string(r.body), "ztest") {
				t.Errorf("%s's dry run names ZTEST: %s", tt.companyID, r.body)
			}
		}
	})
	// The dry run of a proposal is not the proposal's validation (docs: "not by its owner"):
	// an invalid policy dry-runs to the rule that would decide it, and is refused at create.
	t.Run("a policy create refuses dry-runs to its rule", func(t *testing.T) {
		bad := `{"rules":[{"name":"anything","action":"ALLOW"}]}`
		var got struct {
			Quorum quorumAnswer `json:"quorum"`
		}
		wantOK(t, dry(demo.CompanyZTEST, maker, `{"serviceId":"0x0001-001","payload":`+bad+`}`), &got)
		if got.Quorum.Action != "REQUIRE_APPROVAL" {
			t.Errorf("a proposal dry-runs to %s", got.Quorum)
		}
		e2e := uuid.NewString()
		wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, bad)), http.StatusBadRequest, "ER-108")
		if n := atkStored(t, demo.CompanyZTEST, e2e); n != 0 {
			t.Errorf("the refused proposal stored %d requests", n)
		}
	})
	if n := atkStored(t, demo.CompanyZTEST, atkDryRunE2E); n != 0 {
		t.Errorf("dry runs stored %d requests under their placeholder endToEndId", n)
	}
}

// atkRace sends each body at once (after all are signed and ready) as its role, and returns
// the answers in order.
func atkRace(t *testing.T, companyID string, calls []atkCall) []response {
	t.Helper()
	answers := make([]response, len(calls))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range calls {
		req, err := newClient(companyID, c.role).NewRequest(http.MethodPost, c.path, c.body)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = atkSend(req)
		}()
	}
	close(start)
	wg.Wait()
	for i, r := range answers {
		if r.status == 0 {
			t.Fatalf("%s %s %s: %s", calls[i].role, calls[i].what, calls[i].path, r.body)
		}
	}
	return answers
}

// atkSend is send for a goroutine other than the test's: a failure to talk to the gateway
// comes back as status 0 with the error as body, for the test's goroutine to report.
func atkSend(req *http.Request) response {
	remember(req.Header.Get(signing.HeaderSignature))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return response{body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{body: []byte(err.Error())}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

type atkCall struct {
	role, path, what string
	body             []byte
}

// atkDecisions are n signed approvals and n signed rejections of view by each of roles, and n
// cancellations by the maker.
func atkDecisions(t *testing.T, companyID, id string, view map[string]any, n int, makerRole string, roles ...string) []atkCall {
	t.Helper()
	var calls []atkCall
	for i := range n {
		for _, role := range roles {
			key := userKey(t, companyID, role)
			calls = append(calls,
				atkCall{role, approvePath, "Approve", approveBody(t, id, atkDecision(t, view, "Approve", ""), key)},
				atkCall{role, approvePath, "Reject", approveBody(t, id, atkDecision(t, view, "Reject", fmt.Sprintf("race %d", i)), key)})
		}
		calls = append(calls, atkCall{makerRole, cancelPath, "Cancel", mustJSON(t, map[string]string{"requestId": id})})
	}
	return calls
}

// TestPolicyAttackDecisionRace: a custody wallet request (one CHECKER) gets twenty-five
// decisions at once: approvals and rejections by both its CHECKERs, and cancellations by its
// maker. Exactly one lands, every other is a 409, the trail shows one decision, and the
// wallet exists once if the approval won, never otherwise.
func TestPolicyAttackDecisionRace(t *testing.T) {
	t.Parallel()
	name := "Race " + uuid.NewString()[:8]
	got := create(t, demo.CompanyZTEST, maker, createBody(t, "0x0013-001", custodyWalletPayload(name)))
	id := got.RequestID
	atkEnd(t, demo.CompanyZTEST, maker, id)
	wantStatus(t, act(t, demo.CompanyZTEST, maker, id, "", ""), "PENDING AUTHORISATION")
	if q := pendingQuorum(t, viewer, id); len(q.Groups) != 1 || q.Groups[0].Threshold != 1 {
		t.Fatalf("a custody wallet's quorum is %s; the race expects one approval", q)
	}
	view := pending(t, demo.CompanyZTEST, checker, id).Request
	calls := atkDecisions(t, demo.CompanyZTEST, id, view, 5, maker, checker, admin)
	answers := atkRace(t, demo.CompanyZTEST, calls)
	var won []string
	for i, r := range answers {
		if r.status == http.StatusOK {
			var st statusAnswer
			mustUnmarshal(t, r.body, &st)
			won = append(won, calls[i].role+" "+calls[i].what+" → "+st.Status)
			continue
		}
		if r.status != http.StatusConflict {
			t.Errorf("%s %s lost with status %d, want 409: %s", calls[i].role, calls[i].what, r.status, r.body)
			continue
		}
		decodeError(t, r)
	}
	if len(won) != 1 {
		t.Fatalf("%d decisions landed, want exactly one: %v", len(won), won)
	}
	final := requestStatus(t, demo.CompanyZTEST, id)
	actions := atkActions(t, demo.CompanyZTEST, id)
	wallets := custodyWallets(t, demo.CompanyZTEST, name)
	switch {
	case strings.Contains(won[0], "Approve"):
		if final != "COMPLETED" || fmt.Sprint(actions) != "[1 2 3 7]" || len(wallets) != 1 {
			t.Errorf("approval won (%s): status %s, actions %v, wallets %v; want COMPLETED, [1 2 3 7], one wallet", won[0], final, actions, wallets)
		}
	case strings.Contains(won[0], "Reject"):
		if final != "REJECTED" || fmt.Sprint(actions) != "[1 2 4]" || len(wallets) != 0 {
			t.Errorf("rejection won (%s): status %s, actions %v, wallets %v; want REJECTED, [1 2 4], no wallet", won[0], final, actions, wallets)
		}
	default:
		if final != "CANCELLED" || fmt.Sprint(actions) != "[1 2 5]" || len(wallets) != 0 {
			t.Errorf("cancellation won (%s): status %s, actions %v, wallets %v; want CANCELLED, [1 2 5], no wallet", won[0], final, actions, wallets)
		}
	}
}

// TestPolicyAttackProposalRejectionRace: a pending proposal gets rejections by both
// CHECKERs and cancellations by its maker at once; exactly one lands, the proposal ends
// rejected or cancelled, and the policy in force does not move.
func TestPolicyAttackProposalRejectionRace(t *testing.T) {
	t.Parallel()
	before := atkPolicyVersion(t, demo.CompanyZTEST)
	id := atkPropose(t, maker)
	wantStatus(t, act(t, demo.CompanyZTEST, maker, id, "", ""), "PENDING AUTHORISATION")
	view := pending(t, demo.CompanyZTEST, checker, id).Request
	var calls []atkCall
	for i := range 6 {
		for _, role := range []string{checker, admin} {
			calls = append(calls, atkCall{role, approvePath, "Reject", approveBody(t, id, atkDecision(t, view, "Reject", fmt.Sprintf("race %d", i)), userKey(t, demo.CompanyZTEST, role))})
		}
		calls = append(calls, atkCall{maker, cancelPath, "Cancel", mustJSON(t, map[string]string{"requestId": id})})
	}
	answers := atkRace(t, demo.CompanyZTEST, calls)
	var won []string
	for i, r := range answers {
		switch r.status {
		case http.StatusOK:
			var st statusAnswer
			mustUnmarshal(t, r.body, &st)
			won = append(won, calls[i].role+" "+calls[i].what+" → "+st.Status)
		case http.StatusConflict:
			decodeError(t, r)
		default:
			t.Errorf("%s %s: status %d, want 200 or 409: %s", calls[i].role, calls[i].what, r.status, r.body)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d decisions landed, want exactly one: %v", len(won), won)
	}
	final := requestStatus(t, demo.CompanyZTEST, id)
	if want := map[bool]string{true: "REJECTED", false: "CANCELLED"}[strings.Contains(won[0], "Reject")]; final != want {
		t.Errorf("%s won, the proposal is %s", won[0], final)
	}
	if after := atkPolicyVersion(t, demo.CompanyZTEST); after != before {
		t.Errorf("ZTEST's policy moved from version %s to %s", before, after)
	}
}

// TestPolicyAttackQuorumOfTwo: under ZTEST's policy of TestPolicyChangeNeedsTwoPeople, a
// policy change needs two CHECKERs. One CHECKER sends ten approvals at once: one counts, the
// others are 409, and the quorum still misses one; the same CHECKER cannot then reject (409:
// each approver acts once). The object the approvers sign has not moved, so the other
// CHECKER's rejection signed before the approval still lands and ends the proposal; its
// trail shows the approval with a signature that verifies; the policy in force does not
// move. Without that policy (the test run alone) the proposal's quorum is one CHECKER, and
// approving it would adopt it: the test is skipped.
func TestPolicyAttackQuorumOfTwo(t *testing.T) {
	t.Parallel()
	before := atkPolicyVersion(t, demo.CompanyZTEST)
	id := atkPropose(t, maker)
	wantStatus(t, act(t, demo.CompanyZTEST, maker, id, "", ""), "PENDING AUTHORISATION")
	q := pendingQuorum(t, viewer, id)
	missing := 0
	for _, g := range q.Groups {
		missing += g.Missing
	}
	if q.Action != "REQUIRE_APPROVAL" || len(q.Groups) != 1 || missing < 2 || q.Groups[0].Threshold < 2 {
		wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), "CANCELLED")
		t.Skipf("ZTEST's policy change quorum is %s: this test needs two approvals (run it with TestPolicyChangeNeedsTwoPeople)", q)
	}
	view := pending(t, demo.CompanyZTEST, checker, id).Request
	adminReject := approveBody(t, id, atkDecision(t, view, "Reject", "second thoughts"), userKey(t, demo.CompanyZTEST, admin))
	var calls []atkCall
	for range 10 {
		calls = append(calls, atkCall{checker, approvePath, "Approve", approveBody(t, id, atkDecision(t, view, "Approve", ""), userKey(t, demo.CompanyZTEST, checker))})
	}
	answers := atkRace(t, demo.CompanyZTEST, calls)
	landed := 0
	for _, r := range answers {
		switch r.status {
		case http.StatusOK:
			landed++
			var st statusAnswer
			mustUnmarshal(t, r.body, &st)
			if st.Status != "PENDING AUTHORISATION" {
				t.Errorf("one CHECKER's approval left the proposal %s", st.Status)
			}
		case http.StatusConflict:
			decodeError(t, r)
		default:
			t.Errorf("a repeated approval: status %d, want 409: %s", r.status, r.body)
		}
	}
	if landed != 1 {
		t.Fatalf("%d of one CHECKER's ten approvals landed, want one", landed)
	}
	after := pendingQuorum(t, viewer, id)
	if after.Met || fmt.Sprint(after.Approvers) != "["+demo.UserEmail("ztest", checker)+"]" || after.Groups[0].Approvals != 1 {
		t.Errorf("after one CHECKER's approvals the quorum is %s, approvers %v", after, after.Approvers)
	}
	if v := pending(t, demo.CompanyZTEST, admin, id).Request["versionNumber"]; v != view["versionNumber"] {
		t.Errorf("the object to sign moved from version %v to %v with an approval short of the quorum", view["versionNumber"], v)
	}
	wantError(t, act(t, demo.CompanyZTEST, checker, id, "Reject", "changed my mind"), http.StatusConflict, "ER-409")
	wantError(t, act(t, demo.CompanyZTEST, checker, id, "Approve", ""), http.StatusConflict, "ER-409")
	wantError(t, act(t, demo.CompanyZTEST, maker, id, "Approve", ""), http.StatusForbidden, "ER-403")
	wantStatus(t, atkApprove(t, demo.CompanyZTEST, admin, adminReject), "REJECTED")
	wantError(t, atkApprove(t, demo.CompanyZTEST, checker, approveBody(t, id, atkDecision(t, view, "Approve", ""), userKey(t, demo.CompanyZTEST, checker))), http.StatusConflict, "ER-409")
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": id})), http.StatusConflict, "ER-409")
	wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), http.StatusConflict, "ER-409")

	trail := atkAudit(t, demo.CompanyZTEST, id)
	var actions []int
	for _, v := range trail.Items {
		actions = append(actions, v.VersionAction)
	}
	if fmt.Sprint(actions) != "[1 2 3 4]" {
		t.Fatalf("trail actions %v, want [1 2 3 4] (created, confirmed, approved, rejected)", actions)
	}
	last := trail.Items[len(trail.Items)-1]
	if len(last.Approvals) != 1 || last.Approvals[0].Approver != demo.UserEmail("ztest", checker) || !slices.Contains(last.Approvals[0].Roles, "CHECKER") {
		t.Fatalf("trail's approvals %+v, want the CHECKER's one", last.Approvals)
	}
	pub, err := demo.Key("ztest-checker.pub.pem")
	if err != nil {
		t.Fatal(err)
	}
	if err := signing.VerifyApproval(string(pub), mustJSON(t, atkDecision(t, view, "Approve", "")), last.Approvals[0].Signature); err != nil {
		t.Errorf("the recorded approval signature does not verify with the CHECKER's key: %v", err)
	}
	if a := atkPolicyVersion(t, demo.CompanyZTEST); a != before {
		t.Errorf("ZTEST's policy moved from version %s to %s", before, a)
	}
}

// TestPolicyAttackPendingReads: any user of the company reads a pending request's object and
// quorum; a request that is no longer pending, an unknown id and a missing id are refused.
func TestPolicyAttackPendingReads(t *testing.T) {
	t.Parallel()
	id := atkPropose(t, maker)
	for _, role := range []string{maker, checker, viewer, admin} {
		var got struct {
			Request   map[string]any `json:"request"`
			Signature string         `json:"signature"`
			Quorum    quorumAnswer   `json:"quorum"`
		}
		wantOK(t, do(t, newClient(demo.CompanyZTEST, role), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": id})), &got)
		if got.Request["requestId"] != id || got.Request["type"] != "Confirm" || got.Signature != "$$REPLACE$$" || got.Quorum.Rule == "" {
			t.Errorf("%s's pending view: %+v", role, got)
		}
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, pendingPath, []byte(`{}`)), http.StatusBadRequest, "ER-101")
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, pendingPath, []byte(`{"requestId":"SERV-REQ-NOSUCH0000"}`)), http.StatusNotFound, "ER-102")
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, pendingPath, []byte(`{"requestId":"`+strings.Repeat("S", 129)+`"}`)), http.StatusBadRequest, "ER-103")
	wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), "CANCELLED")
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": id})), http.StatusConflict, "ER-409")
}

// TestPolicyAttackUnsatisfiablePolicyChange: a policy whose rule for policy changes no
// proposal could ever meet locks the company's policy for good. Every proposal is made by a
// MAKER (only a MAKER creates) who never counts, and only MAKERs and CHECKERs may decide: a
// rule that needs VIEWERs, or every MAKER of the company, can never be met, and must be
// refused like a rule that lets one person change the policy.
func TestPolicyAttackUnsatisfiablePolicyChange(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		group map[string]any
	}{
		{"VIEWERs decide policy changes", map[string]any{"name": "viewers", "roles": []string{"VIEWER"}, "threshold": 1}},
		{"a named VIEWER decides policy changes", map[string]any{"name": "auditor", "users": []string{demo.UserEmail("ztest", viewer)}, "threshold": 1}},
		{"every MAKER approves a MAKER's proposal", map[string]any{"name": "makers", "roles": []string{"MAKER"}, "threshold": 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e2e := uuid.NewString()
			payload := atkJS(t, map[string]any{"rules": []map[string]any{atkPolicyChange(tt.group), atkCatchAll()}})
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, payload))
			if r.status == http.StatusOK {
				var got createAnswer
				mustUnmarshal(t, r.body, &got)
				atkEnd(t, demo.CompanyZTEST, maker, got.RequestID)
			}
			if msg := wantError(t, r, http.StatusBadRequest, "ER-103"); !strings.Contains(msg, `rule "policy changes"`) {
				t.Errorf("message %q does not name the rule", msg)
			}
			if n := atkStored(t, demo.CompanyZTEST, e2e); n != 0 {
				t.Errorf("the refused proposal stored %d requests", n)
			}
		})
	}
}

// TestPolicyAttackQuorumRace: under ZTEST's policy of TestPolicyChangeNeedsTwoPeople (two
// CHECKERs for a policy change), a proposal gets, all at once, approvals by one CHECKER,
// rejections by the other and cancellations by its maker. However they land, the quorum is
// never met: the proposal ends rejected or cancelled by exactly one of those, at most one
// approval counts, and the policy in force does not move. Skipped without that policy (the
// proposal's quorum would be one CHECKER).
func TestPolicyAttackQuorumRace(t *testing.T) {
	t.Parallel()
	before := atkPolicyVersion(t, demo.CompanyZTEST)
	id := atkPropose(t, maker)
	wantStatus(t, act(t, demo.CompanyZTEST, maker, id, "", ""), "PENDING AUTHORISATION")
	if q := pendingQuorum(t, viewer, id); len(q.Groups) != 1 || q.Groups[0].Threshold < 2 {
		wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": id})), "CANCELLED")
		t.Skipf("ZTEST's policy change quorum is %s: this test needs two approvals (run it with TestPolicyChangeNeedsTwoPeople)", q)
	}
	view := pending(t, demo.CompanyZTEST, checker, id).Request
	var calls []atkCall
	for i := range 8 {
		calls = append(calls,
			atkCall{checker, approvePath, "Approve", approveBody(t, id, atkDecision(t, view, "Approve", ""), userKey(t, demo.CompanyZTEST, checker))},
			atkCall{admin, approvePath, "Reject", approveBody(t, id, atkDecision(t, view, "Reject", fmt.Sprintf("race %d", i)), userKey(t, demo.CompanyZTEST, admin))})
		if i%2 == 0 {
			calls = append(calls, atkCall{maker, cancelPath, "Cancel", mustJSON(t, map[string]string{"requestId": id})})
		}
	}
	answers := atkRace(t, demo.CompanyZTEST, calls)
	landed := map[string]int{}
	var ended string
	for i, r := range answers {
		switch r.status {
		case http.StatusOK:
			var st statusAnswer
			mustUnmarshal(t, r.body, &st)
			landed[calls[i].what]++
			if calls[i].what == "Approve" && st.Status != "PENDING AUTHORISATION" {
				t.Errorf("one CHECKER's approval left the proposal %s", st.Status)
			}
			if calls[i].what != "Approve" {
				ended = st.Status
			}
		case http.StatusConflict:
			decodeError(t, r)
		default:
			t.Errorf("%s %s: status %d, want 200 or 409: %s", calls[i].role, calls[i].what, r.status, r.body)
		}
	}
	if landed["Approve"] > 1 || landed["Reject"]+landed["Cancel"] != 1 {
		t.Fatalf("landed %v: want at most one approval and exactly one rejection or cancellation", landed)
	}
	final := requestStatus(t, demo.CompanyZTEST, id)
	if final != ended || (final != "REJECTED" && final != "CANCELLED") {
		t.Errorf("the proposal is %s, the landed decision answered %s", final, ended)
	}
	want := "[1 2"
	if landed["Approve"] == 1 {
		want += " 3"
	}
	want += map[string]string{"REJECTED": " 4]", "CANCELLED": " 5]"}[final]
	if got := fmt.Sprint(atkActions(t, demo.CompanyZTEST, id)); got != want {
		// An approval that landed after the end would show as a 3 after the 4 or 5.
		t.Errorf("trail actions %s, want %s", got, want)
	}
	if after := atkPolicyVersion(t, demo.CompanyZTEST); after != before {
		t.Errorf("ZTEST's policy moved from version %s to %s", before, after)
	}
}

// TestPolicyAttackProposalBounds: the largest proposal the bounds allow (64 rules, names of
// 64 characters, 8 groups, 64 values in a condition, a threshold equal to its group) is a
// valid request, the smallest step beyond each bound is not (TestPolicyAttackInvalidProposals),
// and proposing changes nothing in force. The proposal is withdrawn.
func TestPolicyAttackProposalBounds(t *testing.T) {
	t.Parallel()
	before := atkPolicyVersion(t, demo.CompanyZTEST)
	checkers := []map[string]any{}
	for i := range 8 {
		checkers = append(checkers, map[string]any{"name": fmt.Sprintf("g%d", i), "roles": []string{"CHECKER"}, "threshold": 2})
	}
	rules := []map[string]any{atkPolicyChange(map[string]any{"name": "checkers", "users": []string{demo.UserEmail("ztest", maker), demo.UserEmail("ztest", checker), demo.UserEmail("ztest", admin)}, "threshold": 2})}
	for i := range 62 {
		name := fmt.Sprintf("%02d", i) + strings.Repeat("r", 62)
		r := map[string]any{"name": name, "wallets": atkMany(64, func(j int) string { return fmt.Sprintf("ZTEST-NOBENF-%02d%08d", i, j) }), "action": "BLOCK"}
		if i == 0 {
			r["action"], r["groups"], r["combine"] = "REQUIRE_APPROVAL", checkers, "OR"
		}
		rules = append(rules, r)
	}
	rules = append(rules, atkCatchAll())
	got := create(t, demo.CompanyZTEST, maker, createBody(t, policyChange, map[string]any{"rules": rules}))
	atkEnd(t, demo.CompanyZTEST, maker, got.RequestID)
	q := pendingQuorum(t, viewer, got.RequestID)
	if q.Rule == "" || q.Action != "REQUIRE_APPROVAL" {
		t.Errorf("the largest proposal's quorum is %s", q)
	}
	wantStatus(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, cancelPath, mustJSON(t, map[string]string{"requestId": got.RequestID})), "CANCELLED")
	if after := atkPolicyVersion(t, demo.CompanyZTEST); after != before {
		t.Errorf("ZTEST's policy moved from version %s to %s", before, after)
	}
}

// TestPolicyAttackUnknownWallets: a rule naming a wallet the company does not have (a typo,
// or another company's wallet) would never match anything, silently: a careless client
// believes the wallet protected. It must be refused like an unknown currency or user.
func TestPolicyAttackUnknownWallets(t *testing.T) {
	t.Parallel()
	for _, wallet := range []string{"ZTEST-NOBENF-DEMO00001", "ZACME-NOBENF-DEMO000001", "ZACME-TW-DEMO000001"} {
		t.Run(wallet, func(t *testing.T) {
			e2e := uuid.NewString()
			block := map[string]any{"name": "frozen wallet", "wallets": []string{wallet}, "action": "BLOCK"}
			payload := atkJS(t, map[string]any{"rules": []map[string]any{atkPolicyChange(map[string]any{"name": "checkers", "roles": []string{"CHECKER"}, "threshold": 1}), block, atkCatchAll()}})
			r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, payload))
			if r.status == http.StatusOK {
				var got createAnswer
				mustUnmarshal(t, r.body, &got)
				atkEnd(t, demo.CompanyZTEST, maker, got.RequestID)
			}
			if msg := wantError(t, r, http.StatusBadRequest, "ER-108"); !strings.Contains(msg, wallet) || !strings.Contains(msg, `rule "frozen wallet"`) {
				t.Errorf("message %q names neither the wallet nor the rule", msg)
			}
			if n := atkStored(t, demo.CompanyZTEST, e2e); n != 0 {
				t.Errorf("the refused proposal stored %d requests", n)
			}
		})
	}
}

// TestPolicyAttackTypeErrorsNameTheRule: a proposal whose second rule has a field of the wrong
// type or an unknown field is refused naming that rule (its index under payload.rules, as
// the other refusals do), in the API's words rather than the server's Go types.
func TestPolicyAttackTypeErrorsNameTheRule(t *testing.T) {
	t.Parallel()
	pc := atkJS(t, atkPolicyChange(map[string]any{"name": "checkers", "roles": []string{"CHECKER"}, "threshold": 1}))
	for _, tt := range []struct{ name, rule, field string }{
		{"threshold a string", `{"name":"default","action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":"1"}]}`, "threshold"},
		{"name a number", `{"name":7,"action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":1}]}`, "name"},
		{"unknown field", `{"name":"default","priority":1,"action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":1}]}`, "priority"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e2e := uuid.NewString()
			msg := wantError(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, atkBody(policyChange, e2e, `{"rules":[`+pc+`,`+tt.rule+`]}`)), http.StatusBadRequest, "ER-108")
			if !strings.Contains(msg, "rules[1]") || !strings.Contains(msg, tt.field) || strings.Contains(msg, "Go struct") || strings.Contains(msg, "JSON.") {
				t.Errorf("message %q: want it to name rules[1] and %s, in the API's terms", msg, tt.field)
			}
			if n := atkStored(t, demo.CompanyZTEST, e2e); n != 0 {
				t.Errorf("the refused proposal stored %d requests", n)
			}
		})
	}
}
