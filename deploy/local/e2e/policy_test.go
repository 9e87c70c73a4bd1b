package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
)

// Paths of the approval policy extensions.
const (
	policyPath         = "/v3/api/servicedesk/policy"
	policyVersionsPath = "/v3/api/servicedesk/policy/versions"
	policyDryRunPath   = "/v3/api/servicedesk/policy/dry-run"
	policyChange       = "0x0001-001"
)

type quorumAnswer struct {
	PolicyVersion string `json:"policyVersion"`
	Rule          string `json:"rule"`
	Action        string `json:"action"`
	Met           bool   `json:"met"`
	Groups        []struct {
		Name      string `json:"name"`
		Threshold int    `json:"threshold"`
		Approvals int    `json:"approvals"`
		Missing   int    `json:"missing"`
	} `json:"groups"`
	Approvers []string `json:"approvers"`
}

// String is "rule@version: group approvals/threshold (missing n) …".
func (q quorumAnswer) String() string {
	version := q.PolicyVersion
	if version == "" {
		version = "0" // a zero int64 is left out of the JSON
	}
	s := fmt.Sprintf("%s@%s %s met=%v", q.Rule, version, q.Action, q.Met)
	for _, g := range q.Groups {
		s += fmt.Sprintf(" %s %d/%d missing %d", g.Name, g.Approvals, g.Threshold, g.Missing)
	}
	return s
}

type policyAnswer struct {
	Version   string `json:"version"`
	RequestID string `json:"requestId"`
	Rules     []struct {
		Name   string `json:"name"`
		Action string `json:"action"`
	} `json:"rules"`
}

// ztestRules keeps ZTEST's behaviour for the other tests (beneficiaries on the maker's word,
// everything else one CHECKER) and makes policy changes need two approvers besides the
// proposer, from the MAKERs and CHECKERs (with only ZTEST's two CHECKERs, a proposal by
// admin, a MAKER and CHECKER, could never be approved: such a policy is refused).
var ztestRules = []map[string]any{
	{"name": "beneficiaries", "operations": []string{"0x0007-004"}, "action": "ALLOW"},
	{"name": "policy changes", "operations": []string{"policy.change"}, "action": "REQUIRE_APPROVAL",
		"groups": []map[string]any{{"name": "approvers", "roles": []string{"MAKER", "CHECKER"}, "threshold": 2}}},
	{"name": "default", "action": "REQUIRE_APPROVAL", "groups": []map[string]any{{"name": "checkers", "roles": []string{"CHECKER"}, "threshold": 1}}},
}

func pendingQuorum(t *testing.T, role, requestID string) quorumAnswer {
	t.Helper()
	var got struct {
		Quorum quorumAnswer `json:"quorum"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, role), http.MethodPost, pendingPath, mustJSON(t, map[string]string{"requestId": requestID})), &got)
	return got.Quorum
}

func readPolicy(t *testing.T) policyAnswer {
	t.Helper()
	var got policyAnswer
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, policyPath, []byte(`{}`)), &got)
	return got
}

// TestPolicyChangeNeedsTwoPeople: ZTEST reads its policy (the default, version 0) and dry-runs
// a request against it; an invalid proposal is refused at creation naming the rule and the
// field; a valid one is decided under the default's rule (the maker cannot approve it, one
// CHECKER does) and adopted as version 1, whose rule for policy changes then needs two
// approvers besides the proposer: the pending view shows the one still missing until the
// second approves.
func TestPolicyChangeNeedsTwoPeople(t *testing.T) {
	if got := readPolicy(t); got.Version != "0" || len(got.Rules) != 2 || got.Rules[1].Name != "default" {
		t.Fatalf("ZTEST's policy before any change = %+v, want the default (version 0)", got)
	}
	var dry struct {
		Quorum quorumAnswer `json:"quorum"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, policyDryRunPath,
		mustJSON(t, map[string]any{"serviceId": "0x0013-001", "payload": custodyWalletPayload("dry run")})), &dry)
	if got := dry.Quorum.String(); got != "default@0 REQUIRE_APPROVAL met=false checkers 0/1 missing 1" {
		t.Errorf("dry run = %s", got)
	}

	bad := []map[string]any{{"name": "rest", "action": "REQUIRE_APPROVAL", "groups": []map[string]any{{"name": "everyone", "roles": []string{"CHECKER"}, "threshold": 3}}}}
	r := do(t, newClient(demo.CompanyZTEST, maker), http.MethodPost, createPath, createBody(t, policyChange, map[string]any{"rules": bad}))
	if msg := wantError(t, r, http.StatusBadRequest, "ER-103"); !strings.Contains(msg, `rule "rest"`) || !strings.Contains(msg, "threshold") {
		t.Errorf("an invalid proposal is refused with %q, which names neither the rule nor the threshold", msg)
	}

	first := create(t, demo.CompanyZTEST, maker, createBody(t, policyChange, map[string]any{"rules": ztestRules})).RequestID
	wantStatus(t, act(t, demo.CompanyZTEST, maker, first, "", ""), "PENDING AUTHORISATION")
	wantError(t, act(t, demo.CompanyZTEST, maker, first, "Approve", ""), http.StatusForbidden, "ER-403") // never the maker
	if got := pendingQuorum(t, checker, first).String(); got != "default@0 REQUIRE_APPROVAL met=false checkers 0/1 missing 1" {
		t.Errorf("first proposal's quorum = %s", got)
	}
	wantStatus(t, act(t, demo.CompanyZTEST, checker, first, "Approve", ""), "COMPLETED")
	if got := readPolicy(t); got.Version != "1" || got.RequestID != first || len(got.Rules) != 3 {
		t.Fatalf("ZTEST's policy after the first change = %+v, want version 1 of %s", got, first)
	}

	second := create(t, demo.CompanyZTEST, maker, createBody(t, policyChange, map[string]any{"rules": ztestRules})).RequestID
	wantStatus(t, act(t, demo.CompanyZTEST, maker, second, "", ""), "PENDING AUTHORISATION")
	signed := pending(t, demo.CompanyZTEST, viewer, second).Request // what every approver of the quorum signs
	signed["type"] = "Approve"
	wantStatus(t, act(t, demo.CompanyZTEST, checker, second, "Approve", ""), "PENDING AUTHORISATION")
	q := pendingQuorum(t, admin, second)
	if got := q.String(); got != "policy changes@1 REQUIRE_APPROVAL met=false approvers 1/2 missing 1" || fmt.Sprint(q.Approvers) != "["+demo.UserEmail("ztest", checker)+"]" {
		t.Errorf("second proposal's quorum = %s, approvers %v", got, q.Approvers)
	}
	wantError(t, act(t, demo.CompanyZTEST, checker, second, "Approve", ""), http.StatusConflict, "ER-409") // once each
	wantStatus(t, act(t, demo.CompanyZTEST, admin, second, "Approve", ""), "COMPLETED")

	// The audit trail shows the rule, its version and each approval with a signature that
	// still verifies with the approver's registered key.
	var audit []struct {
		Items []struct {
			VersionNumber int    `json:"versionNumber"`
			PolicyVersion string `json:"policyVersion"`
			Rule          string `json:"rule"`
			Approvals     []struct {
				Approver  string   `json:"approver"`
				Roles     []string `json:"roles"`
				Signature string   `json:"signature"`
			} `json:"approvals"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/servicedesk/audit-trail",
		mustJSON(t, map[string]any{"requestIds": []string{second}, "sort": map[string]string{"by": "id", "order": "DESC"}, "paginationLimit": 1})), &audit)
	if len(audit) != 1 || len(audit[0].Items) != 1 {
		t.Fatalf("audit trail = %+v, want the last version of %s", audit, second)
	}
	last := audit[0].Items[0]
	if last.PolicyVersion != "1" || last.Rule != "policy changes" || len(last.Approvals) != 2 {
		t.Fatalf("audit trail's last version = %+v, want rule policy changes of version 1 with two approvals", last)
	}
	for i, role := range []string{checker, admin} {
		a := last.Approvals[i]
		pub, err := demo.Key("ztest-" + role + ".pub.pem")
		if err != nil {
			t.Fatal(err)
		}
		if a.Approver != demo.UserEmail("ztest", role) || len(a.Roles) == 0 {
			t.Errorf("approval %d = %+v, want %s with their roles", i, a, role)
		}
		if err := signing.VerifyApproval(string(pub), mustJSON(t, signed), a.Signature); err != nil {
			t.Errorf("%s's approval signature does not verify: %v", role, err)
		}
	}
	var versions struct {
		Items []policyAnswer `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, policyVersionsPath, []byte(`{}`)), &versions)
	var got []string
	for _, v := range versions.Items {
		got = append(got, v.Version+":"+v.RequestID)
	}
	if want := fmt.Sprintf("[2:%s 1:%s 0:]", second, first); fmt.Sprint(got) != want {
		t.Errorf("policy versions = %v, want %s", got, want)
	}
}

// TestWithdrawalAboveAThresholdNeedsTwoGroups: ZTEST adopts a rule for one trading wallet
// (two approvers still decide the change): withdrawals of 1,000 USD or more need one of
// "treasury" AND one of "risk". A withdrawal of 0.1 BTC (6,500 USD at the demo price) waits
// for both groups; one of 0.001 BTC (65 USD) is decided by the one-CHECKER catch-all. It
// runs after TestPolicyChangeNeedsTwoPeople (not in parallel: it changes ZTEST's policy; the
// new rule names a wallet only this test uses).
func TestWithdrawalAboveAThresholdNeedsTwoGroups(t *testing.T) {
	f := newVenueFixture(t, "1", "0", "0", "0")
	target := newCustodyWallet(t, "BTC", "btc-btc")
	large := map[string]any{"name": "large withdrawals", "operations": []string{"0x0003-004"}, "wallets": []string{f.btc}, "minUsd": "1000",
		"action": "REQUIRE_APPROVAL", "combine": "AND", "groups": []map[string]any{
			{"name": "treasury", "users": []string{demo.UserEmail("ztest", checker)}, "threshold": 1},
			{"name": "risk", "users": []string{demo.UserEmail("ztest", admin)}, "threshold": 1}}}
	change := create(t, demo.CompanyZTEST, maker, createBody(t, policyChange, map[string]any{"rules": append([]map[string]any{large}, ztestRules...)})).RequestID
	wantStatus(t, act(t, demo.CompanyZTEST, maker, change, "", ""), "PENDING AUTHORISATION")
	wantStatus(t, act(t, demo.CompanyZTEST, checker, change, "Approve", ""), "PENDING AUTHORISATION")
	wantStatus(t, act(t, demo.CompanyZTEST, admin, change, "Approve", ""), "COMPLETED")
	version := readPolicy(t).Version

	big, _ := requestWithdrawal(t, f.btc, target, "0.1")
	wantStatus(t, act(t, demo.CompanyZTEST, maker, big, "", ""), "PENDING AUTHORISATION")
	want := fmt.Sprintf("large withdrawals@%s REQUIRE_APPROVAL met=false treasury 0/1 missing 1 risk 0/1 missing 1", version)
	if got := pendingQuorum(t, viewer, big).String(); got != want {
		t.Fatalf("quorum of a 6,500 USD withdrawal = %s, want %s", got, want)
	}
	wantStatus(t, act(t, demo.CompanyZTEST, checker, big, "Approve", ""), "PENDING AUTHORISATION")
	wantError(t, act(t, demo.CompanyZTEST, checker, big, "Approve", ""), http.StatusConflict, "ER-409") // treasury once
	if got := requestStatus(t, demo.CompanyZTEST, big); got != "PENDING AUTHORISATION" {
		t.Fatalf("with treasury's approval only: %s, want still pending", got)
	}
	wantStatus(t, act(t, demo.CompanyZTEST, admin, big, "Approve", ""), "COMPLETED")

	small, _ := requestWithdrawal(t, f.btc, target, "0.001")
	wantStatus(t, act(t, demo.CompanyZTEST, maker, small, "", ""), "PENDING AUTHORISATION")
	if got := pendingQuorum(t, viewer, small).String(); got != fmt.Sprintf("default@%s REQUIRE_APPROVAL met=false checkers 0/1 missing 1", version) {
		t.Errorf("quorum of a 65 USD withdrawal = %s, want the one-CHECKER catch-all", got)
	}
	wantStatus(t, act(t, demo.CompanyZTEST, checker, small, "Approve", ""), "COMPLETED")
}

// TestWithdrawalLimits: ZTEST adopts a limit of 1 BTC a day on one of its trading wallets,
// at most 0.9 BTC per withdrawal (two approvers decide the change). Withdrawals the
// settlement engine records from that wallet reserve it in trading's journal: one over the
// per-withdrawal maximum or over what is left of the day is refused (409) naming the limit
// and what is left, with nothing held; a decline gives the allowance back at once. The
// policy shows the limit. Not in parallel: it changes ZTEST's policy (after
// TestWithdrawalAboveAThresholdNeedsTwoGroups).
func TestWithdrawalLimits(t *testing.T) {
	f := newVenueFixture(t, "3", "0", "0", "0")
	limit := map[string]any{"name": "daily BTC", "scope": "WALLET", "wallets": []string{f.btc}, "currency": "BTC",
		"maxPerTransaction": "0.9", "amount": "1", "window": "24h"}
	change := create(t, demo.CompanyZTEST, maker, createBody(t, policyChange, map[string]any{"rules": ztestRules, "limits": []map[string]any{limit}})).RequestID
	wantStatus(t, act(t, demo.CompanyZTEST, maker, change, "", ""), "PENDING AUTHORISATION")
	wantStatus(t, act(t, demo.CompanyZTEST, checker, change, "Approve", ""), "PENDING AUTHORISATION")
	wantStatus(t, act(t, demo.CompanyZTEST, admin, change, "Approve", ""), "COMPLETED")
	var pol struct {
		Limits []struct {
			Name   string `json:"name"`
			Amount string `json:"amount"`
			Window string `json:"window"`
		} `json:"limits"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, policyPath, []byte(`{}`)), &pol)
	if fmt.Sprint(pol.Limits) != "[{daily BTC 1 24h0m0s}]" {
		t.Errorf("the policy's limits = %v", pol.Limits)
	}

	conn, ctx := internalConn(t, "interchange")
	engine := interchangev1.NewSettlementEngineServiceClient(conn)
	withdraw := func(amount string) (string, error) {
		id := "WD-" + uuid.NewString()[:12]
		_, err := engine.CreateWithdrawal(ctx(), &interchangev1.CreateWithdrawalRequest{TransferId: id, CompanyId: demo.CompanyZTEST, WalletId: f.btc,
			Currency: "BTC", Amount: amount, DestinationAddress: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"})
		return id, err
	}
	refused := func(what string, err error, says string) {
		t.Helper()
		if status.Code(err) != codes.FailedPrecondition || grpcERCode(err) != "ER-409" || !strings.Contains(status.Convert(err).Message(), says) {
			t.Errorf("%s: %v, want ER-409 saying %q", what, err, says)
		}
	}
	_, err := withdraw("0.95")
	refused("0.95 BTC at once", err, `over the limit "daily BTC": at most 0.9 BTC`)
	first, err := withdraw("0.6")
	if err != nil {
		t.Fatal(err)
	}
	_, err = withdraw("0.6")
	refused("0.6 BTC more the same day", err, "0.4 BTC left of 1")
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"2.4", "3", "0.6", "0"}) {
		t.Errorf("wallet = %v, want only the first 0.6 held", got)
	}
	wantOK(t, confirmAs(t, f.operatorClient(maker), first, "DECLINE", "not today"), &struct{}{})
	if _, err := withdraw("0.9"); err != nil {
		t.Errorf("0.9 BTC once the first was declined: %v, want it to fit", err)
	}
}
