package principal

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"
)

// TestVerifyMemoExpires: a remembered token is refused once it expires.
func TestVerifyMemoExpires(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	token, err := NewSigner("gateway", priv, time.Minute).Sign(Principal{Kind: KindCompany, CompanyID: "ZT"})
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(map[string]ed25519.PublicKey{"gateway": pub})
	for range 2 { // the second answer comes from the memo
		if _, err := v.Verify(token); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	v.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if _, err := v.Verify(token); err == nil {
		t.Error("an expired token was accepted from the memo")
	}
}
