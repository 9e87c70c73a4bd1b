package signing

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/zcustody/suite/services/canonical"
)

// SignApproval signs a service-request object (the `request` that /v3/api/servicedesk/pending
// returned, with the caller's decision set) for /v3/api/servicedesk/approve: ECDSA P-256 with
// SHA-256 over its canonical JSON (keys sorted, no whitespace, empty fields left out), DER,
// standard base64.
func SignApproval(key *ecdsa.PrivateKey, requestJSON []byte) (string, error) {
	msg, err := canonical.FromJSON(requestJSON)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign approval: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}
