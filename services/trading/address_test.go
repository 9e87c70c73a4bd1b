package trading_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/trading"
)

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
