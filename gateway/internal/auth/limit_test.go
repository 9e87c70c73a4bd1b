package auth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zcustody/suite/gateway/internal/auth"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	l := auth.NewLimiter(0.001, 0.001, 2) // two requests, then the bucket is dry for minutes
	for i := range 2 {
		if _, ok := l.Allow("ZT", "a@zt"); !ok {
			t.Fatalf("request %d refused within the burst", i+1)
		}
	}
	wait, ok := l.Allow("ZT", "a@zt")
	if ok || wait <= 0 {
		t.Fatalf("third request: allowed=%v wait=%v, want refused with a wait", ok, wait)
	}
	if _, ok := l.Allow("ZOTHER", "b@zo"); !ok {
		t.Error("another company was throttled by ZT's traffic")
	}
}

func TestLimiterUserAndCompanyBuckets(t *testing.T) {
	t.Parallel()
	l := auth.NewLimiter(0.001, 0.001, 1)
	if _, ok := l.Allow("ZT", "a@zt"); !ok {
		t.Fatal("first request refused")
	}
	// Another user of the same company: the company's bucket is dry.
	if _, ok := l.Allow("ZT", "b@zt"); ok {
		t.Error("the company limit did not apply across its users")
	}
	// A refused request takes nothing: b's own bucket is still full for another company-free
	// check, shown by a limiter without a company limit.
	u := auth.NewLimiter(0, 0.001, 1)
	for _, user := range []string{"a@zt", "b@zt"} {
		if _, ok := u.Allow("ZT", user); !ok {
			t.Errorf("%s refused by a per-user limit on its first request", user)
		}
	}
	if _, ok := u.Allow("ZT", "a@zt"); ok {
		t.Error("a@zt's second request passed a dry per-user bucket")
	}
	var off *auth.Limiter
	if _, ok := off.Allow("ZT", "a@zt"); !ok {
		t.Error("a nil limiter refused a request")
	}
}

// TestPeerLimitBeforeAuthentication: unsigned floods from one address are cut off before the
// gateway does any work for them.
func TestPeerLimitBeforeAuthentication(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.authn.PeerLimits = auth.NewLimiter(0.001, 0, 2)
	codes := []int{}
	for range 3 {
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, base+vaspPath, nil))
		codes = append(codes, rec.Code)
	}
	if codes[0] != http.StatusUnauthorized || codes[2] != http.StatusTooManyRequests {
		t.Errorf("statuses of 3 unsigned requests from one address = %v, want 401 … 429", codes)
	}
	calls := f.identity.Calls()
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, request(t, call{company: "ZNOPE", key: f.edKey, method: http.MethodPost, path: vaspPath}))
	if rec.Code != http.StatusTooManyRequests || f.identity.Calls() != calls {
		t.Errorf("a throttled address still reached the identity service (status %d)", rec.Code)
	}
}
