package signing_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/zcustody/suite/platform/canonical"
	"github.com/zcustody/suite/platform/signing"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/approval-vectors.json with a new key and signatures")

// vectorFile is testdata/approval-vectors.json: the approval signature's test vectors, which
// the TypeScript client checks too (docs/approval-signature.md). The key is a test key.
type vectorFile struct {
	Comment    string   `json:"comment"`
	PublicKey  string   `json:"publicKey"`
	PrivateKey string   `json:"privateKey"`
	Vectors    []vector `json:"vectors"`
}

type vector struct {
	Name      string          `json:"name"`
	Request   json.RawMessage `json:"request"`
	Canonical string          `json:"canonical"`
	SHA256    string          `json:"sha256"`
	Signature string          `json:"signature"`
}

// vectorRequests are the cases: what the canonical form sorts, drops and keeps.
var vectorRequests = []struct{ name, request string }{
	{"wallet approval", `{"type":"Approve","author":{"id":"5b0f8a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b","domainId":"9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"},"targetDomainId":"9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a","intentId":"0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0","proposalSignature":"q1w2e3r4t5y6u7i8o9p0=="}`},
	{"service request decision", `{"requestId":"SR-ZTEST-0000000001","type":"Approve","serviceId":"0x0013-001","payload":{"walletName":"Treasury","amount":"1.50","tags":[]},"rejectReason":""}`},
	{"empty members dropped, array places kept", `{"a":null,"b":"","c":{},"d":[],"e":{"x":""},"f":["", "x", {}, [], null],"g":0,"h":false}`},
	{"keys by UTF-8 bytes, strings unescaped", `{"é":"café","Z":"<b>&amp;</b>","a":"line\u2028break","😀":"emoji","aa":"\"quoted\" \\ slash"}`},
	{"numbers as written", `{"int":42,"neg":-7,"big":9007199254740991,"frac":0.5}`},
}

func TestApprovalVectors(t *testing.T) {
	path := filepath.Join("testdata", "approval-vectors.json")
	if *updateVectors {
		writeVectors(t, path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) != len(vectorRequests) {
		t.Fatalf("%d vectors, want %d (run with -update-vectors)", len(f.Vectors), len(vectorRequests))
	}
	key := parseECKey(t, f.PrivateKey)
	for _, v := range f.Vectors {
		got, err := canonical.FromJSON(v.Request)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if string(got) != v.Canonical {
			t.Errorf("%s: canonical %s, the vector says %s", v.Name, got, v.Canonical)
		}
		if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != v.SHA256 {
			t.Errorf("%s: sha256 %x, the vector says %s", v.Name, sum, v.SHA256)
		}
		if err := signing.VerifyApproval(f.PublicKey, v.Request, v.Signature); err != nil {
			t.Errorf("%s: the vector's signature does not verify: %v", v.Name, err)
		}
		sig, err := signing.SignApproval(key, v.Request)
		if err != nil {
			t.Fatal(err)
		}
		if err := signing.VerifyApproval(f.PublicKey, []byte(v.Canonical), sig); err != nil {
			t.Errorf("%s: a fresh signature does not verify: %v", v.Name, err)
		}
	}
}

func writeVectors(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	f := vectorFile{
		Comment:    "Approval signature test vectors (docs/approval-signature.md). The key is a test key, published on purpose.",
		PublicKey:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		PrivateKey: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: priv})),
	}
	for _, r := range vectorRequests {
		c, err := canonical.FromJSON([]byte(r.request))
		if err != nil {
			t.Fatal(err)
		}
		sig, err := signing.SignApproval(key, []byte(r.request))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(c)
		f.Vectors = append(f.Vectors, vector{Name: r.name, Request: json.RawMessage(r.request), Canonical: string(c),
			SHA256: hex.EncodeToString(sum[:]), Signature: sig})
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func parseECKey(t *testing.T, pemText string) *ecdsa.PrivateKey {
	t.Helper()
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		t.Fatal("no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatal("not an EC key")
	}
	return ec
}
