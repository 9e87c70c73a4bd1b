package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRetryAfterIsAtLeastOneSecond: a 429 never tells the client to retry at once; a wait is
// rounded up to whole seconds.
func TestRetryAfterIsAtLeastOneSecond(t *testing.T) {
	t.Parallel()
	for wait, want := range map[time.Duration]string{0: "1", time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", -time.Second: "1"} {
		rec := httptest.NewRecorder()
		tooMany(rec, wait)
		if got := rec.Header().Get("Retry-After"); got != want || rec.Code != http.StatusTooManyRequests {
			t.Errorf("wait %v: %d Retry-After %q, want 429 %q", wait, rec.Code, got, want)
		}
	}
}
