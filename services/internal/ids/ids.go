// Package ids makes the suite's unguessable identifiers.
package ids

import (
	"crypto/rand"
	"math/big"
)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// Random returns n uppercase alphanumerics from crypto/rand.
func Random(n int) string {
	out := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range out {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("crypto/rand failed: " + err.Error()) // the platform has no entropy: nothing is safe
		}
		out[i] = alphabet[k.Int64()]
	}
	return string(out)
}

// RequestID returns a new service-request id, SERV-REQ- plus 10 alphanumerics.
func RequestID() string { return "SERV-REQ-" + Random(10) }
