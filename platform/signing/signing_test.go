package signing_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/signing"
)

func TestStringToSign(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		giveURL  string
		giveBody []byte
		want     string
	}{
		{name: "POST with body", giveURL: "https://api.example.com/v3/api/trading/wallets", giveBody: []byte(`{"paginationLimit":5}`),
			want: `ZTEST:0f8fad5b-d9cb-469f-a165-70867728950e:1700000000000:https://api.example.com/v3/api/trading/wallets:{"paginationLimit":5}`},
		{name: "GET ends with a colon", giveURL: "https://api.example.com/v2/api/core/wallets",
			want: "ZTEST:0f8fad5b-d9cb-469f-a165-70867728950e:1700000000000:https://api.example.com/v2/api/core/wallets:"},
		{name: "query kept", giveURL: "http://127.0.0.1:8080/v2/api/core/wallets?limit=5",
			want: "ZTEST:0f8fad5b-d9cb-469f-a165-70867728950e:1700000000000:http://127.0.0.1:8080/v2/api/core/wallets?limit=5:"},
		{name: "body bytes as sent", giveURL: "https://h/p", giveBody: []byte("{ \"a\" : 1 }\n"),
			want: "ZTEST:0f8fad5b-d9cb-469f-a165-70867728950e:1700000000000:https://h/p:{ \"a\" : 1 }\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := signing.StringToSign("ZTEST", "0f8fad5b-d9cb-469f-a165-70867728950e", "1700000000000", tt.giveURL, tt.giveBody)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("StringToSign mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func rsaKey(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func edKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pkixPEM(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	rsaPriv, edPriv := rsaKey(t, 2048), edKey(t)
	otherRSA, otherEd := rsaKey(t, 2048), edKey(t)
	msg := signing.StringToSign("ZTEST", "0f8fad5b-d9cb-469f-a165-70867728950e", "1700000000000", "https://h/v3/api/trading/wallets", []byte(`{"a":1}`))
	tampered := signing.StringToSign("ZTEST", "0f8fad5b-d9cb-469f-a165-70867728950e", "1700000000000", "https://h/v3/api/trading/wallets", []byte(`{"a":2}`))
	tests := []struct {
		name    string
		giveKey crypto.PrivateKey
		givePub crypto.PublicKey
		giveMsg []byte
		wantErr bool
	}{
		{name: "rsa", giveKey: rsaPriv, givePub: &rsaPriv.PublicKey, giveMsg: msg},
		{name: "ed25519", giveKey: edPriv, givePub: edPriv.Public(), giveMsg: msg},
		{name: "rsa tampered", giveKey: rsaPriv, givePub: &rsaPriv.PublicKey, giveMsg: tampered, wantErr: true},
		{name: "ed25519 tampered", giveKey: edPriv, givePub: edPriv.Public(), giveMsg: tampered, wantErr: true},
		{name: "rsa other key", giveKey: rsaPriv, givePub: &otherRSA.PublicKey, giveMsg: msg, wantErr: true},
		{name: "ed25519 other key", giveKey: edPriv, givePub: otherEd.Public(), giveMsg: msg, wantErr: true},
		{name: "rsa signature against ed25519 key", giveKey: rsaPriv, givePub: edPriv.Public(), giveMsg: msg, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sig, err := signing.Sign(tt.giveKey, msg)
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			if _, err := base64.StdEncoding.DecodeString(sig); err != nil {
				t.Errorf("signature %q is not standard base64: %v", sig, err)
			}
			err = signing.Verify(tt.givePub, tt.giveMsg, sig)
			if tt.wantErr && !errors.Is(err, signing.ErrBadSignature) {
				t.Errorf("Verify = %v, want ErrBadSignature", err)
			}
			if !tt.wantErr && err != nil {
				t.Errorf("Verify = %v, want nil", err)
			}
		})
	}
}

func TestVerifyMalformedSignature(t *testing.T) {
	t.Parallel()
	edPriv := edKey(t)
	msg := []byte("ZTEST:id:1:https://h/p:")
	good, err := signing.Sign(edPriv, msg)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		givePub crypto.PublicKey
		giveSig string
	}{
		{name: "not base64", givePub: edPriv.Public(), giveSig: "***"},
		{name: "url-safe base64 is not standard", givePub: edPriv.Public(), giveSig: base64.RawURLEncoding.EncodeToString(mustDecode(t, good))},
		{name: "empty", givePub: edPriv.Public(), giveSig: ""},
		{name: "unsupported key type", givePub: &ecPriv.PublicKey, giveSig: good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := signing.Verify(tt.givePub, msg, tt.giveSig); !errors.Is(err, signing.ErrBadSignature) {
				t.Errorf("Verify = %v, want ErrBadSignature", err)
			}
		})
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignUnsupportedKey(t *testing.T) {
	t.Parallel()
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if sig, err := signing.Sign(ecPriv, []byte("m")); err == nil {
		t.Errorf("Sign with an EC key = %q, want an error", sig)
	}
}

func TestParsePublicKey(t *testing.T) {
	t.Parallel()
	rsa2048, rsa1024, ed := rsaKey(t, 2048), rsaKey(t, 1024), edKey(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := func(k *rsa.PrivateKey) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)}))
	}
	tests := []struct {
		name     string
		give     string
		wantSign crypto.PrivateKey // the key whose signatures the parsed key must accept
		wantErr  bool
	}{
		{name: "rsa 2048 pkix", give: pkixPEM(t, &rsa2048.PublicKey), wantSign: rsa2048},
		{name: "rsa 2048 pkcs1", give: pkcs1(rsa2048), wantSign: rsa2048},
		{name: "ed25519 pkix", give: pkixPEM(t, ed.Public()), wantSign: ed},
		{name: "rsa 1024 pkix", give: pkixPEM(t, &rsa1024.PublicKey), wantErr: true},
		{name: "rsa 1024 pkcs1", give: pkcs1(rsa1024), wantErr: true},
		{name: "ec p-256", give: pkixPEM(t, &ec.PublicKey), wantErr: true},
		{name: "no pem", give: "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", wantErr: true},
		{name: "empty", give: "", wantErr: true},
		{name: "garbage in pem", give: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte("nope")})), wantErr: true},
		{name: "pkix bytes labelled pkcs1", give: string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: mustPKIX(t, &rsa2048.PublicKey)})), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pub, err := signing.ParsePublicKey(tt.give)
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParsePublicKey = %T, want an error", pub)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePublicKey: %v", err)
			}
			msg := []byte("ZTEST:id:1:https://h/p:")
			sig, err := signing.Sign(tt.wantSign, msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := signing.Verify(pub, msg, sig); err != nil {
				t.Errorf("Verify with the parsed key: %v", err)
			}
		})
	}
}

func mustPKIX(t *testing.T, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestParsePrivateKey(t *testing.T) {
	t.Parallel()
	rsaPriv, ed := rsaKey(t, 2048), edKey(t)
	pkcs8 := func(k crypto.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	tests := []struct {
		name    string
		give    []byte
		wantPub crypto.PublicKey
		wantErr bool
	}{
		{name: "rsa pkcs1", give: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaPriv)}), wantPub: &rsaPriv.PublicKey},
		{name: "rsa pkcs8", give: pkcs8(rsaPriv), wantPub: &rsaPriv.PublicKey},
		{name: "ed25519 pkcs8", give: pkcs8(ed), wantPub: ed.Public()},
		{name: "no pem", give: []byte("key"), wantErr: true},
		{name: "garbage", give: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("nope")}), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, err := signing.ParsePrivateKey(tt.give)
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParsePrivateKey = %T, want an error", key)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePrivateKey: %v", err)
			}
			msg := []byte("m")
			sig, err := signing.Sign(key, msg)
			if err != nil {
				t.Fatalf("Sign with the parsed key: %v", err)
			}
			if err := signing.Verify(tt.wantPub, msg, sig); err != nil {
				t.Errorf("Verify against the original public key: %v", err)
			}
		})
	}
}
