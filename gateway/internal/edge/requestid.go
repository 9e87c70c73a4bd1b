package edge

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/zcustody/suite/gateway/signing"
)

// EchoRequestID answers every request that carries a well-formed request-identifier (a UUID of
// 36 characters) with the same header, so that a client and support find a request, failed or
// not, by the id the client chose. Anything else is not echoed: the header never carries
// caller-chosen text other than a UUID.
func EchoRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(signing.HeaderRequestID); len(id) == 36 {
			if _, err := uuid.Parse(id); err == nil {
				w.Header().Set(signing.HeaderRequestID, id)
			}
		}
		next.ServeHTTP(w, r)
	})
}
