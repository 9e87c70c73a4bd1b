package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	"github.com/zcustody/suite/platform/testdb"
	pluginv1 "github.com/zcustody/suite/proto/plugin/v1"
	"github.com/zcustody/suite/services/internal/catalog"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/policy"
	"github.com/zcustody/suite/services/servicedesk/server"
	"github.com/zcustody/suite/services/servicedesk/store"
)

// quorumDesk is a desk over a real store whose owners only record what they execute, with
// the users of company ZQ and their approval keys.
type quorumDesk struct {
	desk  *servicedesk.Desk
	st    *store.Store
	owner *journalOwner
	keys  map[string]*ecdsa.PrivateKey
	roles map[string][]string
}

func newQuorumDesk(t *testing.T, users map[string][]string) *quorumDesk {
	t.Helper()
	ctx := context.Background()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.SyncCatalog(ctx, servicedesk.Catalog()); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCompany(ctx, servicedesk.Company{ID: "ZQ", Name: "Quorum", Active: true}); err != nil {
		t.Fatal(err)
	}
	q := &quorumDesk{st: st, owner: &journalOwner{}, keys: map[string]*ecdsa.PrivateKey{}, roles: users}
	for email, roles := range users {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		q.keys[email] = key
		u := servicedesk.User{ID: uuid.NewString(), Email: email, CompanyID: "ZQ", Roles: roles, Active: true,
			PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
		if err := st.PutUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	owners := map[string]pluginv1.PluginServiceClient{}
	for _, o := range []string{catalog.Trading, catalog.Custody, catalog.Interchange, catalog.Compliance} {
		owners[o] = q.owner
	}
	plugins := server.NewPlugins(owners, principal.NewSigner("servicedesk", make([]byte, 64), time.Minute))
	q.desk = servicedesk.New(servicedesk.Config{Store: st, Owners: plugins, Grace: grace})
	return q
}

func (q *quorumDesk) actor(email string) servicedesk.Actor {
	return servicedesk.Actor{Email: email, CompanyID: "ZQ", Roles: q.roles[email], Entitlements: []string{servicedesk.ServiceTradingWithdrawal, servicedesk.ServicePolicyChange}}
}

// withdraw is the maker's new withdrawal out of wallet, confirmed.
func (q *quorumDesk) withdraw(t *testing.T, wallet string) servicedesk.Request {
	t.Helper()
	r, err := q.desk.Create(context.Background(), q.actor("m@zq"), servicedesk.Draft{ServiceID: servicedesk.ServiceTradingWithdrawal,
		EndToEndID: uuid.NewString(), Payload: []byte(fmt.Sprintf(`{"sender":%q,"destination":"ZQ-CW-1","amount":"1"}`, wallet))})
	if err != nil {
		t.Fatal(err)
	}
	if r, err = q.decide("m@zq", r.ID, servicedesk.TypeConfirm); err != nil {
		t.Fatal(err)
	}
	return r
}

// decide signs the request's pending view with typ as email and sends it.
func (q *quorumDesk) decide(email, id, typ string) (servicedesk.Request, error) {
	ctx := context.Background()
	view, _, err := q.desk.Pending(ctx, q.actor(email), id)
	if err != nil {
		return servicedesk.Request{}, err
	}
	view["type"] = typ
	if typ == servicedesk.TypeReject {
		view["rejectReason"] = "not now"
	}
	signed, err := json.Marshal(view)
	if err != nil {
		return servicedesk.Request{}, err
	}
	sig, err := signing.SignApproval(q.keys[email], signed)
	if err != nil {
		return servicedesk.Request{}, err
	}
	return q.desk.Approve(ctx, q.actor(email), servicedesk.Approval{RequestID: id, Signed: signed, Signature: sig})
}

func (q *quorumDesk) adopt(t *testing.T, version int64, rules ...policy.Rule) {
	t.Helper()
	if err := q.st.InsertPolicy(context.Background(), policy.Policy{CompanyID: "ZQ", Version: version, Rules: rules, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func (q *quorumDesk) executions(id string) int {
	q.owner.mu.Lock()
	defer q.owner.mu.Unlock()
	n := 0
	for _, e := range q.owner.executed {
		if e == id {
			n++
		}
	}
	return n
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var e *apperr.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

var (
	checkers   = []string{principal.RoleChecker}
	catchAll   = policy.Rule{Name: "rest", Action: policy.ActionApprove, Combine: policy.CombineAnd, Groups: []policy.Group{{Name: "checkers", Roles: checkers, Threshold: 1}}}
	treasury   = policy.Group{Name: "treasury", Users: []string{"t1@zq", "t2@zq", "t3@zq", "both@zq"}, Threshold: 2}
	risk       = policy.Group{Name: "risk", Users: []string{"r1@zq", "both@zq"}, Threshold: 1}
	largeRule  = policy.Rule{Name: "large", Wallets: []string{"ZQ-TW-LARGE00001"}, Action: policy.ActionApprove, Combine: policy.CombineAnd, Groups: []policy.Group{treasury, risk}}
	quorumTeam = map[string][]string{"m@zq": {principal.RoleMaker, principal.RoleChecker}, "t1@zq": checkers, "t2@zq": checkers, "t3@zq": checkers,
		"both@zq": checkers, "r1@zq": checkers, "v@zq": {principal.RoleViewer}}
)

// TestTwoOfTreasuryAndOneOfRisk: a request the policy's rule routes to "two of treasury AND
// one of risk" waits for three distinct eligible people: the maker (a CHECKER too) and a
// user outside the groups are refused, an approver counts once, and the request executes
// once, on the approval that completes the quorum. Every approval stays in the audit trail
// with its signature and roles, and the trail verifies.
func TestTwoOfTreasuryAndOneOfRisk(t *testing.T) {
	t.Parallel()
	q := newQuorumDesk(t, quorumTeam)
	q.adopt(t, 1, largeRule, catchAll)
	r := q.withdraw(t, "ZQ-TW-LARGE00001")
	if r.PolicyVersion != 1 || r.Rule == nil || r.Rule.Name != "large" || r.Status != servicedesk.StatusPendingAuthorisation {
		t.Fatalf("request under policy %d rule %+v, %s; want version 1 rule large, pending authorisation", r.PolicyVersion, r.Rule, r.Status)
	}
	_, err := q.decide("m@zq", r.ID, servicedesk.TypeApprove)
	wantCode(t, "the maker approves through their CHECKER role", err, apperr.CodeForbidden)
	_, err = q.decide("v@zq", r.ID, servicedesk.TypeApprove)
	wantCode(t, "a viewer outside the groups", err, apperr.CodeForbidden)

	steps := []struct {
		who, want string
		missing   [2]int // treasury, risk
	}{
		{"both@zq", servicedesk.StatusPendingAuthorisation, [2]int{1, 1}},
		{"t1@zq", servicedesk.StatusPendingAuthorisation, [2]int{0, 1}},
	}
	for _, s := range steps {
		got, err := q.decide(s.who, r.ID, servicedesk.TypeApprove)
		if err != nil {
			t.Fatalf("%s approves: %v", s.who, err)
		}
		tally := got.Tally()
		if got.Status != s.want || tally.Groups[0].Missing()+tally.Groups[1].Missing() != s.missing[0]+s.missing[1] {
			t.Fatalf("after %s: %s, %+v; want %s with %v missing", s.who, got.Status, tally.Groups, s.want, s.missing)
		}
	}
	_, err = q.decide("t1@zq", r.ID, servicedesk.TypeApprove)
	wantCode(t, "t1 approves twice", err, apperr.CodeConflict)
	if q.executions(r.ID) != 0 {
		t.Fatal("executed before its quorum")
	}
	// both@zq sits in risk now that t1 fills treasury's second seat: r1 is not needed.
	done, err := q.decide("t2@zq", r.ID, servicedesk.TypeApprove)
	if err != nil || done.Status != servicedesk.StatusCompleted || q.executions(r.ID) != 1 {
		t.Fatalf("the third approval: %s, %v, %d executions; want COMPLETED once", done.Status, err, q.executions(r.ID))
	}
	_, err = q.decide("r1@zq", r.ID, servicedesk.TypeApprove)
	wantCode(t, "an approval after the quorum", err, apperr.CodeConflict)
	var approvals []string
	for _, v := range done.Versions {
		if v.Action == servicedesk.ActionApproved {
			approvals = append(approvals, v.Actor)
			if err := signing.VerifyApproval(publicPEM(t, q.keys[v.Actor]), signedView(t, done, v), v.Signature); err != nil {
				t.Errorf("approval of %s does not verify later: %v", v.Actor, err)
			}
		}
	}
	if fmt.Sprint(approvals) != "[both@zq t1@zq t2@zq]" {
		t.Errorf("approvals in the audit trail = %v", approvals)
	}
	if err := servicedesk.VerifyChain(done.ID, done.BodyHash, done.Status, done.Versions); err != nil {
		t.Errorf("audit trail: %v", err)
	}
}

// publicPEM is key's public half as PEM.
func publicPEM(t *testing.T, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// signedView is the object an approval of r recorded as v signed: r's pending view as it
// stood while pending authorisation, with the decision.
func signedView(t *testing.T, r servicedesk.Request, v servicedesk.Version) []byte {
	t.Helper()
	pending := r
	pending.Status = servicedesk.StatusPendingAuthorisation
	pending.Versions = r.Versions[:v.Number-1]
	view, err := servicedesk.PendingView(pending)
	if err != nil {
		t.Fatal(err)
	}
	view["type"] = servicedesk.TypeApprove
	out, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRacingApprovalsExecuteOnce: 25 eligible approvers race on a rule that needs 20; the
// request executes exactly once, with exactly 20 approvals recorded, and the approvals
// that came after the quorum are refused (409).
func TestRacingApprovalsExecuteOnce(t *testing.T) {
	t.Parallel()
	team := map[string][]string{"m@zq": {principal.RoleMaker}}
	var board []string
	for i := range 25 {
		email := fmt.Sprintf("b%02d@zq", i)
		team[email], board = checkers, append(board, email)
	}
	q := newQuorumDesk(t, team)
	q.adopt(t, 1, policy.Rule{Name: "board", Action: policy.ActionApprove, Combine: policy.CombineAnd,
		Groups: []policy.Group{{Name: "board", Users: board, Threshold: 20}}})
	r := q.withdraw(t, "ZQ-TW-BOARD")
	var wg sync.WaitGroup
	errs := make([]error, len(board))
	for i, email := range board {
		wg.Go(func() { _, errs[i] = q.decide(email, r.ID, servicedesk.TypeApprove) })
	}
	wg.Wait()
	ok, refused := 0, 0
	for i, err := range errs {
		var e *apperr.Error
		switch {
		case err == nil:
			ok++
		case errors.As(err, &e) && e.Code == apperr.CodeConflict:
			refused++
		default:
			t.Errorf("%s: %v", board[i], err)
		}
	}
	got, err := q.st.Request(context.Background(), "ZQ", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 20 || refused != 5 || len(got.Approvers()) != 20 || q.executions(r.ID) != 1 || got.Status != servicedesk.StatusCompleted {
		t.Errorf("%d approvals accepted, %d refused, %d recorded, %d executions, %s; want 20, 5, 20, 1, COMPLETED",
			ok, refused, len(got.Approvers()), q.executions(r.ID), got.Status)
	}
}

// TestPolicyChangeNeverAppliesToWaitingRequests: a request keeps the rule it was made
// under; a request made after the change follows the new version. An eligible rejection
// ends a request.
func TestPolicyChangeNeverAppliesToWaitingRequests(t *testing.T) {
	t.Parallel()
	q := newQuorumDesk(t, quorumTeam)
	q.adopt(t, 1, largeRule, catchAll)
	waiting := q.withdraw(t, "ZQ-TW-LARGE00001")
	q.adopt(t, 2, catchAll) // the large rule is gone: one CHECKER for everything
	later := q.withdraw(t, "ZQ-TW-LARGE00001")
	if waiting.PolicyVersion != 1 || later.PolicyVersion != 2 || later.Rule.Name != "rest" {
		t.Fatalf("versions %d and %d (rule %q), want 1 and 2 (rest)", waiting.PolicyVersion, later.PolicyVersion, later.Rule.Name)
	}
	got, err := q.decide("t1@zq", waiting.ID, servicedesk.TypeApprove)
	if err != nil || got.Status != servicedesk.StatusPendingAuthorisation {
		t.Errorf("one approval of the request made under version 1: %s, %v; want still pending", got.Status, err)
	}
	if got, err := q.decide("t1@zq", later.ID, servicedesk.TypeApprove); err != nil || got.Status != servicedesk.StatusCompleted {
		t.Errorf("one approval of the request made under version 2: %s, %v; want COMPLETED", got.Status, err)
	}
	_, err = q.decide("v@zq", waiting.ID, servicedesk.TypeReject)
	wantCode(t, "a rejection by a user outside the groups", err, apperr.CodeForbidden)
	if got, err := q.decide("r1@zq", waiting.ID, servicedesk.TypeReject); err != nil || got.Status != servicedesk.StatusRejected || q.executions(waiting.ID) != 0 {
		t.Errorf("an eligible rejection: %s, %v; want REJECTED, never executed", got.Status, err)
	}
}

// TestBlockedAndAllowedRules: a BLOCK rule refuses the request when it is made (nothing
// stored); an ALLOW rule authorises it on the maker's confirmation.
func TestBlockedAndAllowedRules(t *testing.T) {
	t.Parallel()
	q := newQuorumDesk(t, quorumTeam)
	q.adopt(t, 1, policy.Rule{Name: "frozen", Wallets: []string{"ZQ-TW-FROZEN"}, Action: policy.ActionBlock},
		policy.Rule{Name: "trusted", Wallets: []string{"ZQ-TW-TRUSTED"}, Action: policy.ActionAllow}, catchAll)
	_, err := q.desk.Create(context.Background(), q.actor("m@zq"), servicedesk.Draft{ServiceID: servicedesk.ServiceTradingWithdrawal,
		EndToEndID: uuid.NewString(), Payload: []byte(`{"sender":"ZQ-TW-FROZEN","destination":"ZQ-CW-1","amount":"1"}`)})
	wantCode(t, "a blocked withdrawal", err, apperr.CodeForbidden)
	if r := q.withdraw(t, "ZQ-TW-TRUSTED"); r.Status != servicedesk.StatusCompleted || q.executions(r.ID) != 1 {
		t.Errorf("an allowed withdrawal after its confirmation: %s, %d executions; want COMPLETED once", r.Status, q.executions(r.ID))
	}
}

// propose is the maker's proposal of a policy whose rules are rulesJSON, confirmed.
func (q *quorumDesk) propose(t *testing.T, rulesJSON string) (servicedesk.Request, error) {
	t.Helper()
	r, err := q.desk.Create(context.Background(), q.actor("m@zq"), servicedesk.Draft{ServiceID: servicedesk.ServicePolicyChange,
		EndToEndID: uuid.NewString(), Payload: []byte(`{"rules":` + rulesJSON + `}`)})
	if err != nil {
		return r, err
	}
	return q.decide("m@zq", r.ID, servicedesk.TypeConfirm)
}

// TestPolicyChangesUnderFourEyes: a new policy version is a service request, refused when
// it is proposed if it is invalid (naming the rule and the field), decided under the rule
// the version in force has for policy changes (the default: one CHECKER besides the maker),
// and adopted once authorised. Requests made afterwards follow it; of two proposals
// against the same version, the second to be authorised fails.
func TestPolicyChangesUnderFourEyes(t *testing.T) {
	t.Parallel()
	q := newQuorumDesk(t, quorumTeam)
	invalid := []struct{ name, rules, code, field string }{
		{"no catch-all", `[{"name":"large","wallets":["ZQ-TW-LARGE00001"],"action":"BLOCK"}]`, apperr.CodeFormat, "payload.rules[0]"},
		{"a threshold larger than its group", `[{"name":"rest","action":"REQUIRE_APPROVAL","groups":[{"name":"risk","users":["r1@zq"],"threshold":2}]}]`,
			apperr.CodeLength, "payload.rules[0].groups[0].threshold"},
		{"an unknown user", `[{"name":"rest","action":"REQUIRE_APPROVAL","groups":[{"name":"risk","users":["ghost@zq"],"threshold":1}]}]`,
			apperr.CodeFormat, "payload.rules[0].groups[0].users[0]"},
		{"an unknown service", `[{"name":"x","operations":["0x0999-001"],"action":"BLOCK"},{"name":"rest","action":"ALLOW"}]`,
			apperr.CodeFormat, "payload.rules[0].operations[0]"},
		{"policy changes by one person", `[{"name":"rest","action":"ALLOW"}]`, apperr.CodeFormat, "payload.rules[0].action"},
		{"an unknown field", `[{"name":"rest","action":"ALLOW","quorum":3}]`, apperr.CodeFormat, "payload.rules[0]"},
	}
	for _, tt := range invalid {
		_, err := q.propose(t, tt.rules)
		var e *apperr.Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Field != tt.field {
			t.Errorf("%s: %v, want %s on %s", tt.name, err, tt.code, tt.field)
		}
	}
	if _, err := q.st.ActivePolicy(context.Background(), "ZQ"); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("a refused proposal left a policy: %v", err)
	}

	v1 := `[{"name":"large","wallets":["ZQ-TW-LARGE00001"],"action":"REQUIRE_APPROVAL","combine":"AND","groups":[
		{"name":"treasury","users":["t1@zq","t2@zq","t3@zq","both@zq"],"threshold":2},{"name":"risk","users":["r1@zq","both@zq"],"threshold":1}]},
		{"name":"policy","operations":["policy.change"],"action":"REQUIRE_APPROVAL","groups":[{"name":"treasury","users":["t1@zq","t2@zq"],"threshold":2}]},
		{"name":"rest","action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":1}]}]`
	proposal, err := q.propose(t, v1)
	if err != nil || proposal.Rule == nil || proposal.Rule.Name != "default" || proposal.PolicyVersion != 0 {
		t.Fatalf("proposal %+v, %v; want decided by the default policy's rule", proposal.Rule, err)
	}
	rival, err := q.propose(t, `[{"name":"rest","action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":1}]}]`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.decide("m@zq", proposal.ID, servicedesk.TypeApprove)
	wantCode(t, "the maker approves their own proposal", err, apperr.CodeForbidden)
	if got, err := q.decide("r1@zq", proposal.ID, servicedesk.TypeApprove); err != nil || got.Status != servicedesk.StatusCompleted {
		t.Fatalf("the checker approves: %s, %v; want COMPLETED", got.Status, err)
	}
	adopted, err := q.st.ActivePolicy(context.Background(), "ZQ")
	if err != nil || adopted.Version != 1 || len(adopted.Rules) != 3 || adopted.RequestID != proposal.ID || adopted.Rules[0].Groups[1].Threshold != 1 {
		t.Fatalf("policy in force: %+v, %v; want version 1 of request %s", adopted, err, proposal.ID)
	}
	if got, err := q.decide("r1@zq", rival.ID, servicedesk.TypeApprove); err != nil || got.Status != servicedesk.StatusFailed {
		t.Errorf("a rival proposal against version 0 authorised after version 1 was adopted: %s, %v; want FAILED", got.Status, err)
	}
	if r := q.withdraw(t, "ZQ-TW-LARGE00001"); r.PolicyVersion != 1 || r.Rule.Name != "large" {
		t.Errorf("a withdrawal after the change: version %d rule %+v, want version 1 rule large", r.PolicyVersion, r.Rule)
	}

	// Version 1's rule for policy changes needs two of treasury.
	next, err := q.propose(t, `[{"name":"policy","operations":["policy.change"],"action":"REQUIRE_APPROVAL","groups":[{"name":"treasury","users":["t1@zq","t2@zq"],"threshold":2}]},
		{"name":"rest","action":"REQUIRE_APPROVAL","groups":[{"name":"checkers","roles":["CHECKER"],"threshold":1}]}]`)
	if err != nil || next.Rule.Name != "policy" || next.PolicyVersion != 1 {
		t.Fatalf("second proposal: rule %+v version %d, %v; want rule policy of version 1", next.Rule, next.PolicyVersion, err)
	}
	_, err = q.decide("r1@zq", next.ID, servicedesk.TypeApprove)
	wantCode(t, "a CHECKER outside treasury", err, apperr.CodeForbidden)
	if got, err := q.decide("t1@zq", next.ID, servicedesk.TypeApprove); err != nil || got.Status != servicedesk.StatusPendingAuthorisation {
		t.Fatalf("one of two: %s, %v; want still pending", got.Status, err)
	}
	if got, err := q.decide("t2@zq", next.ID, servicedesk.TypeApprove); err != nil || got.Status != servicedesk.StatusCompleted {
		t.Fatalf("two of two: %s, %v; want COMPLETED", got.Status, err)
	}
	if p, err := q.st.ActivePolicy(context.Background(), "ZQ"); err != nil || p.Version != 2 {
		t.Errorf("policy in force: version %d, %v; want 2", p.Version, err)
	}
}
