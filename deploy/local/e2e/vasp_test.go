package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

// Which test owns which (company, VASP) activation, so that parallel tests never see each
// other's changes:
//
//	ZTEST VASP-002: TestVASPActivation (lifecycle, then the concurrent calls)
//	ZTEST VASP-001, ZACME VASP-001: TestVASPCompaniesAreIndependent
//	ZACME VASP-003: TestAuthRefusalChangesNothing (auth_test.go)
//	ZACME VASP-004 (deactivation only): TestEveryDocumentedPathAnswers (paths_test.go)
//
// The other tests only send calls that are refused before any change.

// vaspAnswer is endpoint 15's answer.
type vaspAnswer struct {
	VaspID    string `json:"vaspId"`
	VaspName  string `json:"vaspName"`
	Valid     bool   `json:"valid"`
	UpdatedAt string `json:"updatedAt"`
}

func vaspPath(id, valid string) string {
	return "/v3/api/compliance/vasps/" + id + "/activate/" + valid
}

// setVASP calls endpoint 15 with c and returns the answer; it fails unless the answer is a
// 200 with exactly the documented fields and the asked VASP.
func setVASP(t *testing.T, c *signing.Client, id string, valid bool) vaspAnswer {
	t.Helper()
	r := do(t, c, http.MethodPost, vaspPath(id, fmt.Sprint(valid)), nil)
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	return decodeVASP(t, r.body, id)
}

func decodeVASP(t *testing.T, body []byte, id string) vaspAnswer {
	t.Helper()
	var got vaspAnswer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	if got.VaspID != id {
		t.Errorf("vaspId %q, want %q", got.VaspID, id)
	}
	if _, err := time.Parse(time.RFC3339Nano, got.UpdatedAt); err != nil {
		t.Errorf("updatedAt %q is not an ISO 8601 timestamp: %v", got.UpdatedAt, err)
	}
	return got
}

func updatedAt(t *testing.T, a vaspAnswer) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, a.UpdatedAt)
	if err != nil {
		t.Fatalf("updatedAt %q: %v", a.UpdatedAt, err)
	}
	return at
}

// TestVASPActivation runs on ZTEST's activation of VASP-002, step by step.
func TestVASPActivation(t *testing.T) {
	t.Parallel()
	ztest := newClient(demo.CompanyZTEST, company)
	var deactivated, activated vaspAnswer
	t.Run("deactivate", func(t *testing.T) {
		deactivated = setVASP(t, ztest, "VASP-002", false)
		want := vaspAnswer{VaspID: "VASP-002", VaspName: "ZTEST Private Venue", Valid: false, UpdatedAt: deactivated.UpdatedAt}
		if diff := cmp.Diff(want, deactivated); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
		if d := time.Since(updatedAt(t, deactivated)); d < -time.Minute || d > time.Minute {
			t.Errorf("updatedAt %s is not the time of this change", deactivated.UpdatedAt)
		}
	})
	t.Run("deactivate again is idempotent", func(t *testing.T) {
		again := setVASP(t, ztest, "VASP-002", false)
		if diff := cmp.Diff(deactivated, again); diff != "" {
			t.Errorf("a repeat changed the answer (-first +repeat):\n%s", diff)
		}
	})
	t.Run("a maker activates", func(t *testing.T) {
		activated = setVASP(t, newClient(demo.CompanyZTEST, maker), "VASP-002", true)
		if !activated.Valid {
			t.Errorf("valid false after activation: %+v", activated)
		}
		if updatedAt(t, activated).Before(updatedAt(t, deactivated)) {
			t.Errorf("updatedAt went back: %s before %s", activated.UpdatedAt, deactivated.UpdatedAt)
		}
	})
	t.Run("a checker activates again, idempotent", func(t *testing.T) {
		again := setVASP(t, newClient(demo.CompanyZTEST, checker), "VASP-002", true)
		if diff := cmp.Diff(activated, again); diff != "" {
			t.Errorf("a repeat changed the answer (-first +repeat):\n%s", diff)
		}
	})
	t.Run("concurrent calls", func(t *testing.T) { concurrentActivation(t, ztest, "VASP-002") })
	t.Run("state is consistent after the race", func(t *testing.T) {
		on := setVASP(t, ztest, "VASP-002", true)
		again := setVASP(t, ztest, "VASP-002", true)
		if !on.Valid || on != again {
			t.Errorf("after the race: activate %+v then repeat %+v, want valid and unchanged", on, again)
		}
	})
}

// raceResult is one of the concurrent calls: the value it set and what it got.
type raceResult struct {
	valid  bool
	status int
	body   []byte
	err    error
}

// raceActivation sends n parallel calls alternating true and false.
func raceActivation(c *signing.Client, id string, n int) []raceResult {
	results := make([]raceResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			valid := i%2 == 0
			status, body, err := c.Do(http.MethodPost, vaspPath(id, fmt.Sprint(valid)), nil)
			results[i] = raceResult{valid: valid, status: status, body: body, err: err}
		})
	}
	wg.Wait()
	return results
}

// concurrentActivation: 20 racing calls are all answered 200 with the VASP (never a 5xx),
// and each answer reports the value that call set.
func concurrentActivation(t *testing.T, c *signing.Client, id string) {
	const n = 20
	results := raceActivation(c, id, n)
	t.Run("every call answers 200", func(t *testing.T) {
		for i, r := range results {
			switch {
			case r.err != nil:
				t.Errorf("call %d: %v", i, r.err)
			case r.status != http.StatusOK:
				t.Errorf("call %d (valid=%t): status %d, want 200; body %s", i, r.valid, r.status, r.body)
			default:
				decodeVASP(t, r.body, id)
			}
		}
	})
	t.Run("every answer reports the value it set", func(t *testing.T) {
		var contradicting []string
		for _, r := range results {
			var got vaspAnswer
			if r.status == http.StatusOK && json.Unmarshal(r.body, &got) == nil && got.Valid != r.valid {
				contradicting = append(contradicting, fmt.Sprintf("set %t, answered %t", r.valid, got.Valid))
			}
		}
		if len(contradicting) > 0 {
			t.Errorf("%d of %d answers contradict their call: %v", len(contradicting), n, contradicting)
		}
	})
}

// TestVASPCompaniesAreIndependent: one company switching a shared VASP off does not switch
// it off for another.
func TestVASPCompaniesAreIndependent(t *testing.T) {
	t.Parallel()
	ztest, zacme := newClient(demo.CompanyZTEST, company), newClient(demo.CompanyZACME, company)
	before := setVASP(t, zacme, "VASP-001", true)
	if !before.Valid {
		t.Fatalf("ZACME activation: %+v", before)
	}
	if off := setVASP(t, ztest, "VASP-001", false); off.Valid {
		t.Fatalf("ZTEST deactivation answered valid: %+v", off)
	}
	after := setVASP(t, zacme, "VASP-001", true)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("ZACME's activation changed when ZTEST deactivated (-before +after):\n%s", diff)
	}
	if again := setVASP(t, ztest, "VASP-001", false); again.Valid {
		t.Errorf("ZTEST's own deactivation did not stick: %+v", again)
	}
	if on := setVASP(t, ztest, "VASP-001", true); !on.Valid {
		t.Errorf("ZTEST reactivation: %+v", on)
	}
}

func TestVASPRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		company  string
		role     string
		path     string
		wantCode int
		wantER   string
	}{
		{"unknown VASP", demo.CompanyZTEST, company, vaspPath("VASP-999", "false"), http.StatusNotFound, "ER-102"},
		{"ZTEST on ZACME's VASP", demo.CompanyZTEST, company, vaspPath("VASP-003", "false"), http.StatusNotFound, "ER-102"},
		{"ZACME on ZTEST's VASP", demo.CompanyZACME, company, vaspPath("VASP-002", "true"), http.StatusNotFound, "ER-102"},
		{"valid maybe", demo.CompanyZTEST, company, vaspPath("VASP-001", "maybe"), http.StatusBadRequest, "ER-108"},
		{"valid TRUE", demo.CompanyZTEST, company, vaspPath("VASP-001", "TRUE"), http.StatusBadRequest, "ER-108"},
		{"valid 1", demo.CompanyZTEST, company, vaspPath("VASP-001", "1"), http.StatusBadRequest, "ER-108"},
		{"valid 0", demo.CompanyZACME, company, vaspPath("VASP-003", "0"), http.StatusBadRequest, "ER-108"},
		{"operator-deactivated VASP", demo.CompanyZTEST, company, vaspPath("VASP-004", "true"), http.StatusConflict, "ER-113"},
		{"operator-deactivated VASP, ZACME", demo.CompanyZACME, maker, vaspPath("VASP-004", "true"), http.StatusConflict, "ER-113"},
		{"ZTEST viewer", demo.CompanyZTEST, viewer, vaspPath("VASP-002", "false"), http.StatusForbidden, "ER-403"},
		{"ZACME viewer", demo.CompanyZACME, viewer, vaspPath("VASP-003", "false"), http.StatusForbidden, "ER-403"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantError(t, do(t, newClient(tt.company, tt.role), http.MethodPost, tt.path, nil), tt.wantCode, tt.wantER)
		})
	}
}

// TestVASPOtherCompanyLooksUnknown: a VASP restricted to another company is answered exactly
// like one that does not exist, so a caller cannot learn which VASPs others use.
func TestVASPOtherCompanyLooksUnknown(t *testing.T) {
	t.Parallel()
	ztest := newClient(demo.CompanyZTEST, company)
	unknown := wantError(t, do(t, ztest, http.MethodPost, vaspPath("VASP-998", "false"), nil), http.StatusNotFound, "ER-102")
	restricted := wantError(t, do(t, ztest, http.MethodPost, vaspPath("VASP-003", "false"), nil), http.StatusNotFound, "ER-102")
	want := bytes.ReplaceAll([]byte(unknown), []byte("VASP-998"), []byte("VASP-003"))
	if diff := cmp.Diff(string(want), restricted); diff != "" {
		t.Errorf("message for another company's VASP differs from an unknown one (-unknown +restricted):\n%s", diff)
	}
}
