package edge

import (
	"net/http"

	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/services/apperr"
)

// Shed admits at most maxInFlight requests at once and answers the rest at once with 503 and
// Retry-After, so that an overloaded gateway sheds load instead of queueing without bound.
// A maxInFlight of 0 admits everything.
func Shed(maxInFlight int, next http.Handler) http.Handler {
	if maxInFlight <= 0 {
		return next
	}
	slots := make(chan struct{}, maxInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			httperr.Write(w, http.StatusServiceUnavailable, apperr.CodeUnavailable, "the gateway is at capacity; retry shortly")
		}
	})
}
