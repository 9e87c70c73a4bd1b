package edge_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/zcustody/suite/gateway/internal/edge"
)

func TestShedRefusesBeyondCapacity(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	h := edge.Shed(2, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusNoContent)
	}))
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
			codes[i] = rec.Code
		})
	}
	<-entered
	<-entered
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("third request at capacity: %d (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	close(release)
	wg.Wait()
	if codes[0] != http.StatusNoContent || codes[1] != http.StatusNoContent {
		t.Errorf("admitted requests answered %v, want 204s", codes)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("after the load dropped: %d, want 204", rec.Code)
	}
}
