package trading_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/trading"
)

func TestSignedRecord(t *testing.T) {
	t.Parallel()
	a := trading.VaultAddress{Address: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", Ledger: "BTC", WalletID: "ZTEST-TW-DEMO000001",
		CompanyID: "ZTEST", CurrencyID: "btc-btc", Currency: "BTC", WalletOwner: trading.Party{ID: "ZTEST", Name: "Zodia Test Ltd"},
		Custodian: trading.Party{ID: "CUSTODIAN", Name: "Op", Address: trading.PostalAddress{Country: "GB"}}}
	got, err := a.SignedRecord()
	if err != nil {
		t.Fatal(err)
	}
	// Sorted keys, no whitespace, empty fields (the owner's address) left out; companyId,
	// currency and createdAt are not part of the record.
	want := `{"address":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","currencyId":"btc-btc",` +
		`"custodian":{"address":{"country":"GB"},"id":"CUSTODIAN","name":"Op"},"ledger":"BTC",` +
		`"walletId":"ZTEST-TW-DEMO000001","walletOwner":{"id":"ZTEST","name":"Zodia Test Ltd"}}`
	if string(got) != want {
		t.Errorf("SignedRecord() =\n%s\nwant\n%s", got, want)
	}
}

func TestNewVaultAddresses(t *testing.T) {
	t.Parallel()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		currency    string
		wantLedgers []string
	}{
		{"BTC", []string{"BTC"}},
		{"ETH", []string{"ETH"}},
		{"XRP", []string{"XRP"}},
		{"USDC", []string{"ETH", "XLM"}}, // usdc-eth and usdc-xlm
		{"EURC", []string{"XLM"}},
	}
	for _, tt := range tests {
		w := trading.Wallet{ID: "ZTEST-TW-ABCDEFGHIJ", CompanyID: "ZTEST", Currency: tt.currency}
		addrs, err := trading.NewVaultAddresses(w, trading.Party{ID: "ZTEST"}, trading.DefaultCustodian(), key, fixedNow)
		if err != nil {
			t.Fatal(err)
		}
		if len(addrs) != len(tt.wantLedgers) {
			t.Fatalf("%s: %d addresses, want %d", tt.currency, len(addrs), len(tt.wantLedgers))
		}
		for i, a := range addrs {
			if a.Ledger != tt.wantLedgers[i] || a.Currency != tt.currency || a.WalletID != w.ID || a.CompanyID != "ZTEST" {
				t.Errorf("%s: address %+v", tt.currency, a)
			}
			if err := ledger.Validate(a.Ledger, a.Address); err != nil {
				t.Errorf("%s: %v", tt.currency, err)
			}
			msg, _ := a.SignedRecord()
			sig, _ := base64.StdEncoding.DecodeString(a.Integrity.Signature)
			if a.Integrity.OperatorPublicKey != base64.StdEncoding.EncodeToString(pub) || !ed25519.Verify(pub, msg, sig) {
				t.Errorf("%s: integrity details do not verify with the operator key", tt.currency)
			}
		}
	}
	if _, err := trading.NewVaultAddresses(trading.Wallet{Currency: "DOGE"}, trading.Party{}, trading.Party{}, key, fixedNow); err == nil {
		t.Error("NewVaultAddresses(DOGE) succeeded")
	}
}
