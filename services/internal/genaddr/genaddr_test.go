package genaddr_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/services/internal/genaddr"
)

// fixed is a record with an owner without a postal address and a custodian with one.
var fixed = genaddr.Record{
	Address:     "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	Ledger:      "BTC",
	WalletID:    "ZTEST-TW-DEMO000001",
	CurrencyID:  "btc-btc",
	WalletOwner: genaddr.Party{ID: "ZTEST", Name: "Zodia Test Ltd"},
	Custodian:   genaddr.Party{ID: "CUSTODIAN", Name: "Op", Address: genaddr.PostalAddress{Country: "GB"}},
}

// The signed bytes are a contract: clients rebuild them, and stored addresses carry
// signatures over them. This must not change.
func TestSignedRecord(t *testing.T) {
	t.Parallel()
	got, err := fixed.SignedRecord()
	if err != nil {
		t.Fatal(err)
	}
	// Sorted keys, no whitespace, empty fields (the owner's address) left out.
	want := `{"address":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","currencyId":"btc-btc",` +
		`"custodian":{"address":{"country":"GB"},"id":"CUSTODIAN","name":"Op"},"ledger":"BTC",` +
		`"walletId":"ZTEST-TW-DEMO000001","walletOwner":{"id":"ZTEST","name":"Zodia Test Ltd"}}`
	if string(got) != want {
		t.Errorf("SignedRecord() =\n%s\nwant\n%s", got, want)
	}
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r := fixed
	if err := r.Sign(key); err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Errorf("Verify() of a signed record = %v", err)
	}
	// A client verifies from the API's JSON form.
	body, err := protojson.Marshal(r.ToProto())
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]any
	if err := json.Unmarshal(body, &item); err != nil {
		t.Fatal(err)
	}
	if err := genaddr.VerifyJSON(item); err != nil {
		t.Errorf("VerifyJSON(%s) = %v", body, err)
	}
	item["walletId"] = "ZTEST-TW-FORGED0000"
	if err := genaddr.VerifyJSON(item); !errors.Is(err, genaddr.ErrSignature) {
		t.Errorf("VerifyJSON of a changed record = %v, want ErrSignature", err)
	}
	forged := r
	forged.WalletOwner.Name = "Someone Else"
	if err := forged.Verify(); !errors.Is(err, genaddr.ErrSignature) {
		t.Errorf("Verify() of a changed record = %v, want ErrSignature", err)
	}
	if err := (&genaddr.Record{}).Sign(nil); err == nil {
		t.Error("Sign(nil) succeeded")
	}
}
