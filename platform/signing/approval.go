package signing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/zcustody/suite/platform/canonical"
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

// ErrBadApprovalSignature is returned when an approval signature does not verify.
var ErrBadApprovalSignature = errors.New("approval signature does not verify")

// VerifyApproval checks a base64 DER ECDSA P-256 SHA-256 signature over the canonical JSON
// of the request object (requestJSON, any JSON encoding) against the user's PEM public key.
func VerifyApproval(publicKeyPEM string, requestJSON []byte, signatureB64 string) error {
	block, _ := pem.Decode([]byte(publicKeyPEM))
	if block == nil {
		return fmt.Errorf("user key: no PEM block")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("user key: %w", err)
	}
	ecKey, ok := key.(*ecdsa.PublicKey)
	if !ok || ecKey.Curve != elliptic.P256() {
		return fmt.Errorf("user key: not EC P-256")
	}
	msg, err := canonical.FromJSON(requestJSON)
	if err != nil {
		return ErrBadApprovalSignature
	}
	sig, err := base64.StdEncoding.DecodeString(signatureB64)
	if err != nil {
		return ErrBadApprovalSignature
	}
	sum := sha256.Sum256(msg)
	if !ecdsa.VerifyASN1(ecKey, sum[:], sig) {
		return ErrBadApprovalSignature
	}
	return nil
}
