// Package webhook signs event deliveries the Standard Webhooks way, so that integrators verify
// them with a published library: the headers webhook-id, webhook-timestamp and
// webhook-signature, the signed string {id}.{timestamp}.{body}, a "v1" HMAC-SHA256 signature
// keyed with the decoded bytes of a per-subscription whsec_ secret, and beside it a "v1a"
// Ed25519 signature whose public key the API shows as whpk_.
package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Prefixes of the secret (HMAC) and of the public key (Ed25519) as the API shows them.
const (
	SecretPrefix    = "whsec_"
	PublicKeyPrefix = "whpk_"
)

// secretBytes is the size of a new secret; MinSecretBytes the least a secret may decode to.
const (
	secretBytes    = 32
	MinSecretBytes = 24
)

// Secret is a subscription's HMAC key: the decoded bytes after whsec_.
type Secret []byte

// NewSecret makes a random secret.
func NewSecret() (Secret, error) {
	s := make(Secret, secretBytes)
	if _, err := rand.Read(s); err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	return s, nil
}

// String is the secret as shown once to the customer: whsec_ and standard base64.
func (s Secret) String() string { return SecretPrefix + base64.StdEncoding.EncodeToString(s) }

// ParseSecret reads a whsec_ secret; one that decodes to fewer than MinSecretBytes is refused.
func ParseSecret(text string) (Secret, error) {
	b64, ok := strings.CutPrefix(text, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("webhook secret: want the prefix %s", SecretPrefix)
	}
	s, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: not standard base64: %w", err)
	}
	if len(s) < MinSecretBytes {
		return nil, fmt.Errorf("webhook secret: %d bytes, want at least %d", len(s), MinSecretBytes)
	}
	return s, nil
}

// PublicKey is the whpk_ form of an Ed25519 public key, as the API lists it.
func PublicKey(pub ed25519.PublicKey) string {
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey reads a whpk_ public key.
func ParsePublicKey(text string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(text, PublicKeyPrefix)
	if !ok {
		return nil, fmt.Errorf("webhook public key: want the prefix %s", PublicKeyPrefix)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("webhook public key: want 32 bytes in standard base64")
	}
	return ed25519.PublicKey(b), nil
}

// Keys sign one subscription's deliveries: every HMAC secret in force (two during a
// rotation's overlap, the new one first) and the Ed25519 key.
type Keys struct {
	Secrets []Secret
	Signing ed25519.PrivateKey
}

// signedString is what both signatures cover: the id, the attempt's Unix seconds and the body
// exactly as sent.
func signedString(id string, ts int64, body []byte) []byte {
	msg := make([]byte, 0, len(id)+len(body)+24)
	msg = append(msg, id...)
	msg = append(msg, '.')
	msg = strconv.AppendInt(msg, ts, 10)
	msg = append(msg, '.')
	return append(msg, body...)
}

// Sign returns the webhook-signature value of one attempt: a v1 entry per secret, then the
// v1a entry, separated by spaces.
func (k Keys) Sign(id string, at time.Time, body []byte) (string, error) {
	if strings.Contains(id, ".") || id == "" {
		return "", fmt.Errorf("webhook id %q: want a non-empty id without '.'", id)
	}
	if len(k.Secrets) == 0 && k.Signing == nil {
		return "", errors.New("webhook: no key to sign with")
	}
	msg := signedString(id, at.Unix(), body)
	entries := make([]string, 0, len(k.Secrets)+1)
	for _, s := range k.Secrets {
		mac := hmac.New(sha256.New, s)
		mac.Write(msg)
		entries = append(entries, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	if k.Signing != nil {
		entries = append(entries, "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(k.Signing, msg)))
	}
	return strings.Join(entries, " "), nil
}

// Headers are the three headers of one attempt at delivering body (the event with id),
// signed at the attempt's time: every attempt and resend is signed again.
func (k Keys) Headers(id string, at time.Time, body []byte) (http.Header, error) {
	sig, err := k.Sign(id, at, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// ErrSignature is returned by Verify for a delivery no key signed, or signed too long ago.
var ErrSignature = errors.New("webhook: no valid signature")

// Tolerance is how far a delivery's timestamp may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// Verify checks a delivery as a receiver would: the timestamp within Tolerance of now, and a
// v1 entry made with secret (when given) or a v1a entry made with pub (when given). It is the
// reference for receivers written in Go and for the tests.
func Verify(h http.Header, body []byte, secret Secret, pub ed25519.PublicKey, now time.Time) error {
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad %s", ErrSignature, HeaderTimestamp)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("%w: timestamp outside ±%s", ErrSignature, Tolerance)
	}
	msg := signedString(h.Get(HeaderID), ts, body)
	for entry := range strings.FieldsSeq(h.Get(HeaderSignature)) {
		version, b64, _ := strings.Cut(entry, ",")
		sig, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		switch {
		case version == "v1" && secret != nil:
			mac := hmac.New(sha256.New, secret)
			mac.Write(msg)
			if hmac.Equal(mac.Sum(nil), sig) {
				return nil
			}
		case version == "v1a" && pub != nil:
			if ed25519.Verify(pub, msg, sig) {
				return nil
			}
		}
	}
	return ErrSignature
}
