package principal

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// ErrInvalidToken is returned for any token that does not verify.
var ErrInvalidToken = errors.New("invalid principal token")

// GatewayIssuer is the only issuer whose company and user principals are believed.
const GatewayIssuer = "gateway"

// MaxLifetime bounds how long a token may be valid, whatever its issuer says.
const MaxLifetime = 5 * time.Minute

var b64 = base64.RawURLEncoding

// Signer issues principal tokens.
type Signer struct {
	issuer string
	key    ed25519.PrivateKey
	ttl    time.Duration
	now    func() time.Time
}

// NewSigner returns a signer for issuer; tokens live for ttl (at most MaxLifetime).
func NewSigner(issuer string, key ed25519.PrivateKey, ttl time.Duration) *Signer {
	return &Signer{issuer: issuer, key: key, ttl: min(ttl, MaxLifetime), now: time.Now}
}

// Sign returns the token for p, stamping issuer and validity.
func (s *Signer) Sign(p Principal) (string, error) {
	now := s.now()
	p.Issuer = s.issuer
	p.IssuedAt = now.Unix()
	p.ExpiresAt = now.Add(s.ttl).Unix()
	body, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode principal: %w", err)
	}
	payload := b64.EncodeToString(body)
	sig := ed25519.Sign(s.key, []byte(payload))
	return payload + "." + b64.EncodeToString(sig), nil
}

// Verifier checks tokens against the public keys of trusted issuers.
type Verifier struct {
	keys map[string]ed25519.PublicKey
	now  func() time.Time

	mu       sync.Mutex
	verified map[string]Principal // token → principal, reused until the token expires
}

// maxVerified bounds the verified-token memo; it is emptied when full.
const maxVerified = 10000

// NewVerifier trusts the given issuer → key pairs.
func NewVerifier(keys map[string]ed25519.PublicKey) *Verifier {
	return &Verifier{keys: keys, now: time.Now, verified: map[string]Principal{}}
}

// Verify returns the principal of a valid, unexpired token from a trusted issuer. A token
// seen before is not verified again until it expires (a caller reuses its token).
func (v *Verifier) Verify(token string) (Principal, error) {
	v.mu.Lock()
	p, ok := v.verified[token]
	v.mu.Unlock()
	if ok && p.ExpiresAt >= v.now().Unix() {
		return p, nil
	}
	p, err := v.verify(token)
	if err != nil {
		return p, err
	}
	v.mu.Lock()
	if len(v.verified) >= maxVerified {
		clear(v.verified)
	}
	v.verified[token] = p
	v.mu.Unlock()
	return p, nil
}

func (v *Verifier) verify(token string) (Principal, error) {
	payload, sigText, ok := strings.Cut(token, ".")
	if !ok {
		return Principal{}, ErrInvalidToken
	}
	body, err := b64.DecodeString(payload)
	if err != nil {
		return Principal{}, ErrInvalidToken
	}
	sig, err := b64.DecodeString(sigText)
	if err != nil {
		return Principal{}, ErrInvalidToken
	}
	var p Principal
	if err := json.Unmarshal(body, &p); err != nil {
		return Principal{}, ErrInvalidToken
	}
	key, ok := v.keys[p.Issuer]
	if !ok || !ed25519.Verify(key, []byte(payload), sig) {
		return Principal{}, ErrInvalidToken
	}
	// An internal system speaks only for itself: its token's issuer is its own name. Companies
	// and their users are authenticated by the gateway alone, so only it vouches for them.
	if (p.Kind == KindSystem && p.System != p.Issuer) || (p.Kind != KindSystem && p.Issuer != GatewayIssuer) {
		return Principal{}, ErrInvalidToken
	}
	now := v.now().Unix()
	if p.ExpiresAt < now || p.IssuedAt > now+60 || p.ExpiresAt-p.IssuedAt > int64(MaxLifetime/time.Second) {
		return Principal{}, ErrInvalidToken
	}
	return p, nil
}

// LoadPrivateKey reads a PEM PKCS#8 Ed25519 private key.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse private key %s: %w", path, err)
	}
	edKey, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("private key %s: not Ed25519", path)
	}
	return edKey, nil
}

// LoadPublicKey reads a PEM PKIX Ed25519 public key.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse public key %s: %w", path, err)
	}
	edKey, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key %s: not Ed25519", path)
	}
	return edKey, nil
}

func readPEM(path string) (*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("key %s: no PEM block", path)
	}
	return block, nil
}
