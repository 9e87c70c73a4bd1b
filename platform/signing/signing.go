// Package signing implements the REST request signature of the contract's reference API:
// the string company:requestIdentifier:timestampMs:fullURL:rawBody, signed with the company
// key (RSA PKCS#1 v1.5 with SHA-256, or Ed25519), standard base64.
package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
)

// Header names of a signed request.
const (
	HeaderCompany    = "company-identifier"
	HeaderSubmitter  = "submitter-id"
	HeaderRequestID  = "request-identifier"
	HeaderTimestamp  = "request-timestamp"
	HeaderSignature  = "signature"
	HeaderXSignature = "X-Signature"
)

// ErrBadSignature is returned when a signature does not verify.
var ErrBadSignature = errors.New("signature does not verify")

// StringToSign builds the signed string; GET requests have an empty body, so it ends with ':'.
func StringToSign(company, requestID, timestampMs, fullURL string, body []byte) []byte {
	s := make([]byte, 0, len(company)+len(requestID)+len(timestampMs)+len(fullURL)+len(body)+4)
	s = append(s, company...)
	s = append(s, ':')
	s = append(s, requestID...)
	s = append(s, ':')
	s = append(s, timestampMs...)
	s = append(s, ':')
	s = append(s, fullURL...)
	s = append(s, ':')
	return append(s, body...)
}

// Sign signs msg with an RSA or Ed25519 private key and returns standard base64.
func Sign(key crypto.PrivateKey, msg []byte) (string, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sum := sha256.Sum256(msg)
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		if err != nil {
			return "", fmt.Errorf("rsa sign: %w", err)
		}
		return base64.StdEncoding.EncodeToString(sig), nil
	case ed25519.PrivateKey:
		return base64.StdEncoding.EncodeToString(ed25519.Sign(k, msg)), nil
	}
	return "", fmt.Errorf("unsupported private key type %T", key)
}

// Verify checks a base64 signature of msg against an RSA or Ed25519 public key.
func Verify(pub crypto.PublicKey, msg []byte, sigB64 string) error {
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil {
		return ErrBadSignature
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		sum := sha256.Sum256(msg)
		if rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) != nil {
			return ErrBadSignature
		}
		return nil
	case ed25519.PublicKey:
		if !ed25519.Verify(k, msg, sig) {
			return ErrBadSignature
		}
		return nil
	}
	return ErrBadSignature
}

// ParsePublicKey reads a PEM public key (PKIX, or PKCS#1 RSA); only RSA ≥ 2048 bits and
// Ed25519 are accepted.
func ParsePublicKey(pemText string) (crypto.PublicKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("public key: no PEM block")
	}
	var key any
	var err error
	if block.Type == "RSA PUBLIC KEY" {
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	} else {
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return nil, errors.New("public key: RSA keys need at least 2048 bits")
		}
		return k, nil
	case ed25519.PublicKey:
		return k, nil
	}
	return nil, fmt.Errorf("public key: unsupported type %T", key)
}

// ParsePrivateKey reads a PEM private key (PKCS#8, or PKCS#1 RSA).
func ParsePrivateKey(pemText []byte) (crypto.PrivateKey, error) {
	block, _ := pem.Decode(pemText)
	if block == nil {
		return nil, errors.New("private key: no PEM block")
	}
	if block.Type == "RSA PRIVATE KEY" {
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	return key, nil
}
