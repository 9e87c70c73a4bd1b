package webhook_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/webhook"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/webhook-vectors.json with new keys")

// vectorFile is testdata/webhook-vectors.json: deliveries signed here, which the TypeScript
// client's tests verify with the published standardwebhooks package and Node's Ed25519. The
// keys are test keys. Ed25519 and HMAC are deterministic, so the signatures are exact.
type vectorFile struct {
	Comment   string   `json:"comment"`
	Secret    string   `json:"secret"`
	OldSecret string   `json:"oldSecret"`
	Seed      string   `json:"seed"`
	PublicKey string   `json:"publicKey"`
	Vectors   []vector `json:"vectors"`
}

type vector struct {
	Name      string `json:"name"`
	ID        string `json:"id"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	// Rotation: signed with both secrets, the new one first.
	Rotation  bool   `json:"rotation"`
	Signature string `json:"signature"`
}

var cases = []vector{
	{Name: "settlement status", ID: "evt_0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Timestamp: 1795683600,
		Body: `{"id":"evt_0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","type":"settlement.status_updated","timestamp":"2026-11-26T09:00:00.000Z","companyId":"ZTEST","entity":{"type":"settlement","id":"STL-1","version":7},"data":{"status":"SETTLEMENT_PAY_OUT"},"schemaVersion":1}`},
	{Name: "non-ASCII body, bytes as sent", ID: "evt_1", Timestamp: 1795683601, Body: "{\"name\":\"Zürich Trésorerie 😀\",\"note\":\"a\\u2028b\"}"},
	{Name: "secret rotation: both secrets sign", ID: "evt_2", Timestamp: 1795683602, Body: `{"type":"webhook.test"}`, Rotation: true},
}

func vectorsPath() string { return filepath.Join("testdata", "webhook-vectors.json") }

func keysOf(t *testing.T, f vectorFile) (webhook.Secret, webhook.Secret, ed25519.PrivateKey) {
	t.Helper()
	secret, err := webhook.ParseSecret(f.Secret)
	if err != nil {
		t.Fatal(err)
	}
	old, err := webhook.ParseSecret(f.OldSecret)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := base64.StdEncoding.DecodeString(f.Seed)
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("seed: %v", err)
	}
	return secret, old, ed25519.NewKeyFromSeed(seed)
}

func sign(t *testing.T, f vectorFile, v vector) string {
	t.Helper()
	secret, old, priv := keysOf(t, f)
	keys := webhook.Keys{Secrets: []webhook.Secret{secret}, Signing: priv}
	if v.Rotation {
		keys.Secrets = append(keys.Secrets, old)
	}
	sig, err := keys.Sign(v.ID, time.Unix(v.Timestamp, 0), []byte(v.Body))
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// TestVectors: the committed deliveries are what the signer makes, and each verifies here
// with the secret, the old secret where it signed, and the public key.
func TestVectors(t *testing.T) {
	if *updateVectors {
		writeVectors(t)
	}
	raw, err := os.ReadFile(vectorsPath())
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	secret, old, priv := keysOf(t, f)
	pub, err := webhook.ParsePublicKey(f.PublicKey)
	if err != nil || !pub.Equal(priv.Public()) {
		t.Fatalf("public key %s is not the seed's (%v)", f.PublicKey, err)
	}
	if len(f.Vectors) != len(cases) {
		t.Fatalf("%d vectors, want %d (run with -update-vectors)", len(f.Vectors), len(cases))
	}
	for _, v := range f.Vectors {
		if got := sign(t, f, v); got != v.Signature {
			t.Errorf("%s: signed %s, vector says %s", v.Name, got, v.Signature)
		}
		h := headers(v)
		now := time.Unix(v.Timestamp, 0).Add(time.Minute)
		for name, check := range map[string]error{
			"secret":     webhook.Verify(h, []byte(v.Body), secret, nil, now),
			"public key": webhook.Verify(h, []byte(v.Body), nil, pub, now),
		} {
			if check != nil {
				t.Errorf("%s: does not verify with the %s: %v", v.Name, name, check)
			}
		}
		err := webhook.Verify(h, []byte(v.Body), old, nil, now)
		if v.Rotation != (err == nil) {
			t.Errorf("%s: verifies with the old secret: %v, want %v", v.Name, err == nil, v.Rotation)
		}
	}
}

func headers(v vector) map[string][]string {
	return map[string][]string{"Webhook-Id": {v.ID}, "Webhook-Timestamp": {strconv.FormatInt(v.Timestamp, 10)}, "Webhook-Signature": {v.Signature}}
}

// TestVerifyRefuses: what a receiver must refuse — a changed body, id or timestamp, another
// key, a stale or future timestamp — is refused.
func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := webhook.NewSecret()
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"wallet.created"}`)
	h, err := webhook.Keys{Secrets: []webhook.Secret{secret}, Signing: priv}.Headers("evt_9", at, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := webhook.Verify(h, body, secret, pub, at); err != nil {
		t.Fatalf("the delivery as sent: %v", err)
	}
	changed := func(key, value string) map[string][]string {
		c := h.Clone()
		c.Set(key, value)
		return c
	}
	tests := []struct {
		name   string
		header map[string][]string
		body   []byte
		secret webhook.Secret
		now    time.Time
	}{
		{"changed body", h, []byte(`{"type":"wallet.deleted"}`), secret, at},
		{"changed id", changed(webhook.HeaderID, "evt_8"), body, secret, at},
		{"changed timestamp", changed(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix()+1, 10)), body, secret, at},
		{"another secret", h, body, other, at},
		{"six minutes late", h, body, secret, at.Add(6 * time.Minute)},
		{"six minutes early", h, body, secret, at.Add(-6 * time.Minute)},
		{"no signature", changed(webhook.HeaderSignature, ""), body, secret, at},
	}
	for _, tt := range tests {
		if err := webhook.Verify(tt.header, tt.body, tt.secret, nil, tt.now); !errors.Is(err, webhook.ErrSignature) {
			t.Errorf("%s: %v, want ErrSignature", tt.name, err)
		}
	}
	if _, err := (webhook.Keys{Secrets: []webhook.Secret{secret}}).Sign("evt.1", at, body); err == nil {
		t.Error("an id with '.' was signed")
	}
}

func TestSecretFormat(t *testing.T) {
	t.Parallel()
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	back, err := webhook.ParseSecret(s.String())
	if err != nil || string(back) != string(s) || !strings.HasPrefix(s.String(), "whsec_") {
		t.Fatalf("round trip of %s: %v", s, err)
	}
	for _, bad := range []string{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16)), "whsec_not base64", base64.StdEncoding.EncodeToString(make([]byte, 32))} {
		if _, err := webhook.ParseSecret(bad); err == nil {
			t.Errorf("ParseSecret(%q) accepted", bad)
		}
	}
}

func writeVectors(t *testing.T) {
	t.Helper()
	secret, _ := webhook.NewSecret()
	old, _ := webhook.NewSecret()
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		t.Fatal(err)
	}
	f := vectorFile{Comment: "Webhook deliveries signed by platform/webhook with test keys; checked by its Go tests and by clients/typescript with the standardwebhooks package.",
		Secret: secret.String(), OldSecret: old.String(), Seed: base64.StdEncoding.EncodeToString(seed),
		PublicKey: webhook.PublicKey(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))}
	for _, v := range cases {
		v.Signature = sign(t, f, v)
		f.Vectors = append(f.Vectors, v)
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vectorsPath(), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
