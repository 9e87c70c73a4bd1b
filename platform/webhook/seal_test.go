package webhook_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zcustody/suite/platform/webhook"
)

const (
	subA = "sub_01HZXA"
	subB = "sub_01HZXB"
)

// newKey is a random key-encryption key.
func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, webhook.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func mustKeyring(t *testing.T, current string, keys map[string][]byte) *webhook.Keyring {
	t.Helper()
	k, err := webhook.NewKeyring(current, keys)
	if err != nil {
		t.Fatalf("NewKeyring: %v", err)
	}
	return k
}

func TestSealRoundTrip(t *testing.T) {
	kr := mustKeyring(t, "k1", map[string][]byte{"k1": newKey(t)})
	secret := []byte("the subscription's whsec_ bytes")
	s, err := kr.Seal(secret, subA)
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyID != "k1" || len(s.Nonce) != webhook.NonceSize {
		t.Fatalf("sealed = key %q, %d-byte nonce", s.KeyID, len(s.Nonce))
	}
	if bytes.Contains(s.Ciphertext, secret) {
		t.Fatal("ciphertext holds the plaintext")
	}
	got, err := kr.Open(s, subA)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}

	// The empty value seals too.
	e, err := kr.Seal(nil, subA)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kr.Open(e, subA); err != nil || len(got) != 0 {
		t.Fatalf("Open(empty) = %q, %v", got, err)
	}

	// The compact form and JSON keep everything Open needs.
	p, err := webhook.ParseSealed(s.String())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kr.Open(p, subA); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open(ParseSealed(String)) = %q, %v", got, err)
	}
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"keyId":"k1"`) || !strings.Contains(string(j), `"nonce":`) ||
		!strings.Contains(string(j), `"ciphertext":`) {
		t.Fatalf("JSON = %s", j)
	}
	var back webhook.Sealed
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if got, err := kr.Open(back, subA); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open(JSON round trip) = %q, %v", got, err)
	}
}

func TestSealRandomNonce(t *testing.T) {
	kr := mustKeyring(t, "k1", map[string][]byte{"k1": newKey(t)})
	a, err := kr.Seal([]byte("same"), subA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kr.Seal([]byte("same"), subA)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Nonce, b.Nonce) || bytes.Equal(a.Ciphertext, b.Ciphertext) {
		t.Fatal("two seals of the same plaintext are equal")
	}
}

func TestSealRefusesEmptyAssociated(t *testing.T) {
	kr := mustKeyring(t, "k1", map[string][]byte{"k1": newKey(t)})
	if _, err := kr.Seal([]byte("x"), ""); err == nil {
		t.Fatal("sealed without a subscription id")
	}
	var nilRing *webhook.Keyring
	if _, err := nilRing.Seal([]byte("x"), subA); err == nil {
		t.Fatal("a nil keyring sealed")
	}
}

func TestOpenWrongAssociated(t *testing.T) {
	kr := mustKeyring(t, "k1", map[string][]byte{"k1": newKey(t)})
	s, err := kr.Seal([]byte("secret of A"), subA)
	if err != nil {
		t.Fatal(err)
	}
	// Copied onto another subscription: does not open.
	for _, ad := range []string{subB, "", subA + " "} {
		if got, err := kr.Open(s, ad); !errors.Is(err, webhook.ErrOpen) || got != nil {
			t.Errorf("Open(associated %q) = %q, %v; want ErrOpen", ad, got, err)
		}
	}
}

func TestOpenTampered(t *testing.T) {
	kr := mustKeyring(t, "k1", map[string][]byte{"k1": newKey(t)})
	s, err := kr.Seal([]byte("a seed of 32 bytes, more or less"), subA)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() webhook.Sealed {
		return webhook.Sealed{KeyID: s.KeyID, Nonce: bytes.Clone(s.Nonce), Ciphertext: bytes.Clone(s.Ciphertext)}
	}
	cases := map[string]func(*webhook.Sealed){
		"ciphertext bit": func(c *webhook.Sealed) { c.Ciphertext[0] ^= 1 },
		"tag bit":        func(c *webhook.Sealed) { c.Ciphertext[len(c.Ciphertext)-1] ^= 0x80 },
		"truncated":      func(c *webhook.Sealed) { c.Ciphertext = c.Ciphertext[:len(c.Ciphertext)-1] },
		"empty":          func(c *webhook.Sealed) { c.Ciphertext = nil },
		"appended":       func(c *webhook.Sealed) { c.Ciphertext = append(c.Ciphertext, 0) },
		"nonce bit":      func(c *webhook.Sealed) { c.Nonce[5] ^= 4 },
		"short nonce":    func(c *webhook.Sealed) { c.Nonce = c.Nonce[:8] },
		"long nonce":     func(c *webhook.Sealed) { c.Nonce = append(c.Nonce, 0) },
		"no nonce":       func(c *webhook.Sealed) { c.Nonce = nil },
	}
	for name, tamper := range cases {
		c := clone()
		tamper(&c)
		if got, err := kr.Open(c, subA); !errors.Is(err, webhook.ErrOpen) || got != nil {
			t.Errorf("%s: Open = %q, %v; want ErrOpen", name, got, err)
		}
	}
	if _, err := kr.Open(clone(), subA); err != nil {
		t.Fatalf("untampered copy: %v", err)
	}
}

func TestOpenUnknownKey(t *testing.T) {
	old := mustKeyring(t, "k2024", map[string][]byte{"k2024": newKey(t)})
	s, err := old.Seal([]byte("x"), subA)
	if err != nil {
		t.Fatal(err)
	}
	kr := mustKeyring(t, "k2025", map[string][]byte{"k2025": newKey(t)})
	_, err = kr.Open(s, subA)
	if !errors.Is(err, webhook.ErrUnknownKey) || !strings.Contains(err.Error(), `"k2024"`) {
		t.Fatalf("Open = %v; want ErrUnknownKey naming k2024", err)
	}
	// Another key under the same id does not open it either, and is not an unknown key.
	same := mustKeyring(t, "k2024", map[string][]byte{"k2024": newKey(t)})
	if _, err := same.Open(s, subA); !errors.Is(err, webhook.ErrOpen) {
		t.Fatalf("Open with another key under the same id = %v; want ErrOpen", err)
	}
}

func TestRotation(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	before := mustKeyring(t, "k1", map[string][]byte{"k1": k1})
	secret := []byte("whsec bytes")
	s1, err := before.Seal(secret, subA)
	if err != nil {
		t.Fatal(err)
	}
	if before.NeedsReseal(s1) {
		t.Fatal("NeedsReseal under the key that sealed it")
	}

	// A new current key: old values still open, and need resealing; new ones use k2.
	during := mustKeyring(t, "k2", map[string][]byte{"k1": k1, "k2": k2})
	if during.Current() != "k2" || fmt.Sprint(during.IDs()) != "[k1 k2]" {
		t.Fatalf("Current %q, IDs %v", during.Current(), during.IDs())
	}
	if got, err := during.Open(s1, subA); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open(old) = %q, %v", got, err)
	}
	if !during.NeedsReseal(s1) {
		t.Fatal("NeedsReseal false for a value under the old key")
	}
	s2, err := during.Reseal(s1, subA)
	if err != nil {
		t.Fatal(err)
	}
	if s2.KeyID != "k2" || during.NeedsReseal(s2) {
		t.Fatalf("resealed under %q, NeedsReseal %v", s2.KeyID, during.NeedsReseal(s2))
	}
	if got, err := during.Open(s2, subA); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open(resealed) = %q, %v", got, err)
	}
	if fresh, err := during.Seal(secret, subB); err != nil || fresh.KeyID != "k2" {
		t.Fatalf("new seal under %q, %v", fresh.KeyID, err)
	}
	// Reseal keeps the binding to the subscription.
	if _, err := during.Reseal(s1, subB); !errors.Is(err, webhook.ErrOpen) {
		t.Fatalf("Reseal for another subscription = %v; want ErrOpen", err)
	}

	// The old key goes: the resealed value opens, one the pass missed fails naming k1.
	after := mustKeyring(t, "k2", map[string][]byte{"k2": k2})
	if got, err := after.Open(s2, subA); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open(resealed) after removal = %q, %v", got, err)
	}
	if _, err := after.Open(s1, subA); !errors.Is(err, webhook.ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("Open(not resealed) after removal = %v; want ErrUnknownKey naming k1", err)
	}
}

func TestParseKeyring(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	b1, b2 := base64.StdEncoding.EncodeToString(k1), base64.StdEncoding.EncodeToString(k2)

	kr, err := webhook.ParseKeyring("new", " old="+b1+",\n new = "+b2+" ,")
	if err != nil {
		t.Fatal(err)
	}
	if kr.Current() != "new" || fmt.Sprint(kr.IDs()) != "[new old]" {
		t.Fatalf("Current %q, IDs %v", kr.Current(), kr.IDs())
	}
	// The parsed keys are the given ones: a value sealed with explicit k1 opens.
	s, err := mustKeyring(t, "old", map[string][]byte{"old": k1}).Seal([]byte("x"), subA)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kr.Open(s, subA); err != nil || string(got) != "x" {
		t.Fatalf("Open = %q, %v", got, err)
	}

	short := base64.StdEncoding.EncodeToString(k1[:16])
	long := base64.StdEncoding.EncodeToString(append(bytes.Clone(k1), 0))
	raw := base64.RawStdEncoding.EncodeToString(k1)
	url := base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff}, 16)) // has - and _
	refusals := []struct {
		name, current, keys, want string
	}{
		{"empty", "k1", "", "no keys"},
		{"only commas", "k1", " , ,", "no keys"},
		{"no current", "", "k1=" + b1, "no current key"},
		{"current missing", "k9", "k1=" + b1, `current key "k9"`},
		{"bad base64", "k1", "k1=" + b1[:10] + "!" + b1[11:], `key "k1": not standard base64`},
		{"unpadded base64", "k1", "k1=" + raw, `key "k1": not standard base64`},
		{"URL base64", "k1", "k1=" + url, `key "k1": not standard base64`},
		{"16 bytes", "k1", "k1=" + short, `key "k1" is 16 bytes, want 32`},
		{"33 bytes", "k1", "k1=" + long, `key "k1" is 33 bytes, want 32`},
		{"empty key", "k1", "k1=", `key "k1" is 0 bytes, want 32`},
		{"duplicate id", "k1", "k1=" + b1 + ",k1=" + b2, `key "k1" given twice`},
		{"no =", "k1", "k1=" + b1 + "," + strings.TrimRight(b2, "="), "entry 2: want id=base64"},
		{"key without id", "k1", "k1=" + b1 + "," + b2, "entry 2: key id must be 1 to 32"},
		{"empty id", "k1", "=" + b1, "entry 1: key id must be"},
		{"id with dot", "k.1", "k.1=" + b1, "entry 1: key id may hold only"},
		{"id with colon", "k:1", "k:1=" + b1, "entry 1: key id may hold only"},
		{"id too long", "k1", strings.Repeat("k", 33) + "=" + b1, "entry 1: key id must be 1 to 32"},
	}
	for _, r := range refusals {
		kr, err := webhook.ParseKeyring(r.current, r.keys)
		if err == nil {
			t.Errorf("%s: ParseKeyring accepted: %v", r.name, kr)
			continue
		}
		if !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: error %q, want it to contain %q", r.name, err, r.want)
		}
		for _, key := range [][]byte{k1, k2} {
			assertNoKeyMaterial(t, r.name+" error", err.Error(), key)
		}
	}

	// NewKeyring refuses the same things in explicit form.
	for name, keys := range map[string]map[string][]byte{
		"none":       {},
		"short":      {"k1": k1[:31]},
		"bad id":     {"k/1": k1},
		"no current": {"k2": k2},
	} {
		if _, err := webhook.NewKeyring("k1", keys); err == nil {
			t.Errorf("NewKeyring %s: accepted", name)
		}
	}
}

// A key pasted without its id must not come back in the error, even in part.
func TestParseKeyringErrorHidesMisplacedKey(t *testing.T) {
	key := newKey(t)
	b64 := base64.StdEncoding.EncodeToString(key)
	for _, keys := range []string{b64, "=" + b64, b64 + "=" + b64, strings.TrimRight(b64, "=")} {
		_, err := webhook.ParseKeyring("k1", keys)
		if err == nil {
			t.Fatalf("accepted %q", keys)
		}
		assertNoKeyMaterial(t, "error", err.Error(), key)
		if strings.Contains(err.Error(), b64[:8]) {
			t.Errorf("error %q shows part of the key", err)
		}
	}
	// Nor a key given as the current id.
	_, err := webhook.ParseKeyring(b64, "k1="+b64)
	if err == nil || strings.Contains(err.Error(), b64[:8]) {
		t.Errorf("current id = key: error %v", err)
	}
}

func TestKeyringFormattingHidesKeys(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	kr := mustKeyring(t, "k2", map[string][]byte{"k1": k1, "k2": k2})
	plaintext := []byte("plaintext-secret-value-0123456789")
	s, err := kr.Seal(plaintext, subA)
	if err != nil {
		t.Fatal(err)
	}
	_, openErr := kr.Open(webhook.Sealed{KeyID: "k2", Nonce: s.Nonce, Ciphertext: s.Ciphertext}, subB)
	_, unknownErr := kr.Open(webhook.Sealed{KeyID: "k0", Nonce: s.Nonce, Ciphertext: s.Ciphertext}, subA)
	type config struct {
		Keys *webhook.Keyring
		keys webhook.Keyring
	}
	cfg := config{Keys: kr, keys: *kr}
	outputs := map[string]string{
		"String":  kr.String(),
		"open":    openErr.Error(),
		"unknown": unknownErr.Error(),
		"sealed":  s.String(),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
		outputs[verb+" pointer"] = fmt.Sprintf(verb, kr)
		outputs[verb+" value"] = fmt.Sprintf(verb, *kr)
		outputs[verb+" config"] = fmt.Sprintf(verb, cfg)
		outputs[verb+" error"] = fmt.Sprintf(verb, openErr)
	}
	for name, out := range outputs {
		for _, key := range [][]byte{k1, k2} {
			assertNoKeyMaterial(t, name, out, key)
		}
		if strings.Contains(out, string(plaintext)) || strings.Contains(out, hex.EncodeToString(plaintext)) {
			t.Errorf("%s shows the plaintext: %s", name, out)
		}
	}
	if got := fmt.Sprintf("%+v", kr); !strings.Contains(got, `"k2"`) || !strings.Contains(got, `"k1"`) {
		t.Errorf("%%+v = %s; want the key ids", got)
	}
}

// assertNoKeyMaterial fails when out holds key in raw, hex or any base64 form, or a decimal
// byte listing of it.
func assertNoKeyMaterial(t *testing.T, name, out string, key []byte) {
	t.Helper()
	forms := []string{
		string(key),
		hex.EncodeToString(key),
		strings.ToUpper(hex.EncodeToString(key)),
		base64.StdEncoding.EncodeToString(key)[:40],
		base64.RawURLEncoding.EncodeToString(key)[:40],
		strings.Trim(fmt.Sprint(key[:8]), "[]"),
		fmt.Sprintf("%q", key)[1:20],
	}
	for _, f := range forms {
		if strings.Contains(out, f) {
			t.Errorf("%s shows key material: %s", name, out)
			return
		}
	}
}

func TestParseSealedRefusals(t *testing.T) {
	kr := mustKeyring(t, "k1", map[string][]byte{"k1": newKey(t)})
	s, err := kr.Seal([]byte("x"), subA)
	if err != nil {
		t.Fatal(err)
	}
	text := s.String()
	parts := strings.Split(text, ":")
	for _, bad := range []string{
		"",
		parts[0] + ":" + parts[1],
		text + ":x",
		"k.1:" + parts[1] + ":" + parts[2],
		parts[0] + ":" + parts[1][:4] + ":" + parts[2],
		parts[0] + ":" + parts[1] + ":" + parts[2] + "=",
		parts[0] + ":" + parts[1] + "!:" + parts[2],
	} {
		if _, err := webhook.ParseSealed(bad); err == nil {
			t.Errorf("ParseSealed(%q) accepted", bad)
		}
	}
}
