package principal_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/principal"
)

func writePEM(t *testing.T, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadKeys(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	privPath, pubPath := writePEM(t, "PRIVATE KEY", privDER), writePEM(t, "PUBLIC KEY", pubDER)

	loadedPriv, err := principal.LoadPrivateKey(privPath)
	if err != nil {
		t.Fatalf("LoadPrivateKey: %v", err)
	}
	loadedPub, err := principal.LoadPublicKey(pubPath)
	if err != nil {
		t.Fatalf("LoadPublicKey: %v", err)
	}
	token, err := principal.NewSigner("gateway", loadedPriv, time.Minute).Sign(maker)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": loadedPub}).Verify(token); err != nil {
		t.Errorf("token signed with the loaded private key does not verify with the loaded public key: %v", err)
	}
}

func TestLoadKeysRefuses(t *testing.T) {
	t.Parallel()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	ecPub, err := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(notPEM, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give string
		load func(string) error
	}{
		{name: "private: missing file", give: filepath.Join(t.TempDir(), "none.pem"), load: loadPriv},
		{name: "private: not PEM", give: notPEM, load: loadPriv},
		{name: "private: EC key", give: writePEM(t, "PRIVATE KEY", ecPriv), load: loadPriv},
		{name: "private: garbage", give: writePEM(t, "PRIVATE KEY", []byte("nope")), load: loadPriv},
		{name: "public: missing file", give: filepath.Join(t.TempDir(), "none.pem"), load: loadPub},
		{name: "public: not PEM", give: notPEM, load: loadPub},
		{name: "public: EC key", give: writePEM(t, "PUBLIC KEY", ecPub), load: loadPub},
		{name: "public: garbage", give: writePEM(t, "PUBLIC KEY", []byte("nope")), load: loadPub},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.load(tt.give); err == nil {
				t.Errorf("load(%s) succeeded, want an error", tt.give)
			}
		})
	}
}

func loadPriv(path string) error { _, err := principal.LoadPrivateKey(path); return err }
func loadPub(path string) error  { _, err := principal.LoadPublicKey(path); return err }
