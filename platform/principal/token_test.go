package principal_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/zcustody/suite/platform/principal"
)

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

var maker = principal.Principal{
	Kind: principal.KindUser, CompanyID: "ZTEST", CompanyName: "Test Ltd", UserEmail: "maker@ztest.example",
	Roles: []string{principal.RoleMaker}, Entitlements: []string{"0x0013-001", "0x0007-004"},
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give principal.Principal
	}{
		{name: "user", give: maker},
		{name: "company", give: principal.Principal{Kind: principal.KindCompany, CompanyID: "ZTEST", CompanyName: "Test Ltd"}},
		{name: "system", give: principal.Principal{Kind: principal.KindSystem, System: "gateway"}},
		{name: "issuer set by the caller is overwritten", give: principal.Principal{Issuer: "rogue", Kind: principal.KindSystem, System: "gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pub, priv := newKey(t)
			token, err := principal.NewSigner("gateway", priv, time.Minute).Sign(tt.give)
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			got, err := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub}).Verify(token)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := tt.give
			want.Issuer = "gateway"
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(principal.Principal{}, "IssuedAt", "ExpiresAt")); diff != "" {
				t.Errorf("principal mismatch (-want +got):\n%s", diff)
			}
			nowS := time.Now().Unix()
			if got.IssuedAt < nowS-5 || got.IssuedAt > nowS || got.ExpiresAt-got.IssuedAt != 60 {
				t.Errorf("validity [%d, %d], want issued now for 60s", got.IssuedAt, got.ExpiresAt)
			}
		})
	}
}

func TestSignerCapsLifetime(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	token, err := principal.NewSigner("gateway", priv, 24*time.Hour).Sign(maker)
	if err != nil {
		t.Fatal(err)
	}
	got, err := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub}).Verify(token)
	if err != nil {
		t.Fatalf("Verify of a token from a signer asked for a day: %v", err)
	}
	if life := time.Duration(got.ExpiresAt-got.IssuedAt) * time.Second; life != principal.MaxLifetime {
		t.Errorf("lifetime = %s, want MaxLifetime %s", life, principal.MaxLifetime)
	}
}

// forge signs p as is, with chosen validity: what a trusted issuer with a wrong clock, or a
// holder of the key, could send.
func forge(t *testing.T, priv ed25519.PrivateKey, p principal.Principal) string {
	t.Helper()
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(payload)))
}

func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	_, otherPriv := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	good, err := principal.NewSigner("gateway", priv, time.Minute).Sign(maker)
	if err != nil {
		t.Fatal(err)
	}
	payload, sig, _ := strings.Cut(good, ".")
	now := time.Now().Unix()
	at := func(iat, exp int64) principal.Principal {
		p := maker
		p.Issuer, p.IssuedAt, p.ExpiresAt = "gateway", iat, exp
		return p
	}
	escalated := func() string {
		p := at(now, now+60)
		p.Roles = []string{principal.RoleChecker}
		body, _ := json.Marshal(p)
		return base64.RawURLEncoding.EncodeToString(body) + "." + sig
	}
	unknownIssuer, err := principal.NewSigner("rogue", otherPriv, time.Minute).Sign(maker)
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := principal.NewSigner("gateway", otherPriv, time.Minute).Sign(maker)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give string
	}{
		{name: "empty", give: ""},
		{name: "no separator", give: payload + sig},
		{name: "payload not base64", give: "!!!." + sig},
		{name: "signature not base64", give: payload + ".!!!"},
		{name: "payload not JSON", give: forgeRaw(priv, "not json")},
		{name: "tampered payload", give: escalated()},
		{name: "tampered signature", give: payload + "." + flip(sig)},
		{name: "signature of another token", give: payload + "." + strings.SplitN(impostor, ".", 2)[1]},
		{name: "unknown issuer", give: unknownIssuer},
		{name: "trusted issuer name, other key", give: impostor},
		{name: "expired", give: forge(t, priv, at(now-120, now-60))},
		{name: "issued in the future", give: forge(t, priv, at(now+120, now+180))},
		{name: "lifetime over MaxLifetime", give: forge(t, priv, at(now, now+int64(principal.MaxLifetime/time.Second)+1))},
		{name: "expiry before issue", give: forge(t, priv, at(now, now-1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if p, err := v.Verify(tt.give); !errors.Is(err, principal.ErrInvalidToken) {
				t.Errorf("Verify = %+v, %v; want ErrInvalidToken", p, err)
			}
		})
	}
}

func TestVerifyAcceptsForgedBounds(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	now := time.Now().Unix()
	tests := []struct {
		name string
		give principal.Principal
	}{
		{name: "exactly MaxLifetime", give: principal.Principal{Issuer: "gateway", Kind: principal.KindSystem, System: "gateway",
			IssuedAt: now, ExpiresAt: now + int64(principal.MaxLifetime/time.Second)}},
		{name: "issuer clock slightly ahead", give: principal.Principal{Issuer: "gateway", Kind: principal.KindSystem, System: "gateway",
			IssuedAt: now + 30, ExpiresAt: now + 90}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := v.Verify(forge(t, priv, tt.give)); err != nil {
				t.Errorf("Verify = %v, want the token accepted", err)
			}
		})
	}
}

func forgeRaw(priv ed25519.PrivateKey, body string) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(body))
	return payload + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(payload)))
}

// flip changes the first character of a base64url string to another valid one.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestPrincipalChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		giveRole     string
		giveService  string
		wantRole     bool
		wantEntitled bool
	}{
		{name: "held", giveRole: principal.RoleMaker, giveService: "0x0013-001", wantRole: true, wantEntitled: true},
		{name: "not held", giveRole: principal.RoleChecker, giveService: "0x0014-007"},
		{name: "case matters", giveRole: "maker", giveService: "0X0013-001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := maker.HasRole(tt.giveRole); got != tt.wantRole {
				t.Errorf("HasRole(%s) = %v, want %v", tt.giveRole, got, tt.wantRole)
			}
			if got := maker.Entitled(tt.giveService); got != tt.wantEntitled {
				t.Errorf("Entitled(%s) = %v, want %v", tt.giveService, got, tt.wantEntitled)
			}
		})
	}
}

// TestSystemSpeaksForItself: a trusted issuer cannot sign for another internal system.
func TestSystemSpeaksForItself(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	token, err := principal.NewSigner("settlement-engine", priv, time.Minute).Sign(principal.Principal{Kind: principal.KindSystem, System: "servicedesk"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := principal.NewVerifier(map[string]ed25519.PublicKey{"settlement-engine": pub}).Verify(token); err == nil {
		t.Error("a settlement-engine token claiming to be the service desk was accepted")
	}
}

// TestOnlyTheGatewayVouchesForCompanies: an internal system's key cannot mint a company or
// user principal, whatever it claims.
func TestOnlyTheGatewayVouchesForCompanies(t *testing.T) {
	t.Parallel()
	pub, priv := newKey(t)
	v := principal.NewVerifier(map[string]ed25519.PublicKey{"settlement-engine": pub})
	for _, p := range []principal.Principal{
		{Kind: principal.KindCompany, CompanyID: "ZTEST"},
		{Kind: principal.KindUser, CompanyID: "ZTEST", UserEmail: "c@z", Roles: []string{principal.RoleChecker}},
	} {
		token, err := principal.NewSigner("settlement-engine", priv, time.Minute).Sign(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(token); err == nil {
			t.Errorf("a settlement-engine token for a %s principal was accepted", p.Kind)
		}
	}
}
