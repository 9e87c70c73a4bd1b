package auth_test

import (
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
