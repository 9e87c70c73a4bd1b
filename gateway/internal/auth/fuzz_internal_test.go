package auth

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/uuid"
)

// FuzzReadHeaders: whatever the signed headers hold, parsing never panics, and what it
// accepts is a UUID request identifier and an integer timestamp.
func FuzzReadHeaders(f *testing.F) {
	f.Add("ZTEST", "8a6e0804-2bd0-4672-b79d-d97027f9071a", "1700000000000", "c2ln", "api@z.example")
	f.Add("", "x", "-1", "", "")
	f.Add("Z", "urn:uuid:8a6e0804-2bd0-4672-b79d-d97027f9071a", "99999999999999999999", "%%%", "\x00")
	f.Fuzz(func(t *testing.T, company, requestID, timestamp, signature, submitter string) {
		r := httptest.NewRequest("POST", "/v3/api/servicedesk/products", nil)
		for name, v := range map[string]string{"company-identifier": company, "request-identifier": requestID,
			"request-timestamp": timestamp, "signature": signature, "submitter-id": submitter} {
			r.Header[http.CanonicalHeaderKey(name)] = []string{v}
		}
		h, err := readHeaders(r)
		if err != nil {
			return
		}
		if _, perr := uuid.Parse(h.requestID); perr != nil || len(h.requestID) != 36 {
			t.Fatalf("accepted request-identifier %q", h.requestID)
		}
		if strconv.FormatInt(h.timestampMs, 10) == "" || h.company == "" || h.signature == "" {
			t.Fatalf("accepted incomplete headers %+v", h)
		}
	})
}
