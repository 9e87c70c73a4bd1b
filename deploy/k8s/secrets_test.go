package k8s_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// checkKeypair asserts that the Secrets hold an Ed25519 keypair in the
// formats the services and gateway load (PKIX public, PKCS#8 private) and that
// the two halves match.
func checkKeypair(t *testing.T, r rendered) {
	public, private := generatedSecret(r, "principal-public-key"), generatedSecret(r, "principal-signing-key")
	if public == nil || private == nil {
		t.Fatal("generated Secrets principal-public-key and principal-signing-key: not found")
	}
	pubKey, err := parsePEM(public.Data["public.pem"], x509.ParsePKIXPublicKey)
	if err != nil {
		t.Fatalf("Secret principal-public-key, public.pem: %v", err)
	}
	privKey, err := parsePEM(private.Data["private.pem"], x509.ParsePKCS8PrivateKey)
	if err != nil {
		t.Fatalf("Secret principal-signing-key, private.pem: %v", err)
	}
	edPriv, ok := privKey.(ed25519.PrivateKey)
	if !ok {
		t.Fatalf("Secret principal-signing-key, private.pem: %T, want Ed25519", privKey)
	}
	if !edPriv.Public().(ed25519.PublicKey).Equal(pubKey) {
		t.Error("principal-public-key does not match principal-signing-key")
	}
}

// generatedSecret finds the Secret a secretGenerator named name, whatever
// content-hash suffix kustomize gave it.
func generatedSecret(r rendered, name string) *corev1.Secret {
	i := slices.IndexFunc(r.secrets, func(s corev1.Secret) bool {
		suffix, ok := strings.CutPrefix(s.Name, name+"-")
		return s.Name == name || ok && !strings.Contains(suffix, "-")
	})
	if i < 0 {
		return nil
	}
	return &r.secrets[i]
}

func parsePEM(data []byte, parse func([]byte) (any, error)) (any, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	return parse(block.Bytes)
}
