package address_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/genaddr"
	"github.com/zcustody/suite/services/internal/ledger"
)

func TestNewSettlement(t *testing.T) {
	t.Parallel()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	owner := address.Party{ID: "ZTEST", Name: "Zodia Test Ltd"}
	at := time.Date(2026, 2, 3, 4, 5, 6, 789_654_321, time.UTC)
	for _, c := range ledger.Currencies() {
		t.Run(c.CurrencyID, func(t *testing.T) {
			a, err := address.NewSettlement(owner, "BYBIT", c.CurrencyID, key, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := ledger.Validate(c.Ledger, a.Address); err != nil {
				t.Errorf("address %q is not a %s address: %v", a.Address, c.Ledger, err)
			}
			if a.Ledger != c.Ledger || a.Currency != c.Code || a.WalletID != "ZTEST-ISW-BYBIT" || a.CompanyID != "ZTEST" ||
				a.WalletOwner != owner || a.Custodian != genaddr.DefaultCustodian() || !a.CreatedAt.Equal(at.Truncate(time.Millisecond)) {
				t.Errorf("NewSettlement() = %+v", a)
			}
			msg, err := a.SignedRecord()
			if err != nil {
				t.Fatal(err)
			}
			sig, err := base64.StdEncoding.DecodeString(a.Integrity.Signature)
			if err != nil || !ed25519.Verify(pub, msg, sig) {
				t.Errorf("signature does not verify (%v)", err)
			}
			if a.Integrity.OperatorPublicKey != base64.StdEncoding.EncodeToString(pub) {
				t.Errorf("operatorPublicKey %q is not the key's", a.Integrity.OperatorPublicKey)
			}
			a.WalletID = "ZACME-ISW-BYBIT"
			if forged, _ := a.SignedRecord(); ed25519.Verify(pub, forged, sig) {
				t.Error("the signature covers a changed record too")
			}
		})
	}
}

func TestNewSettlementRefuses(t *testing.T) {
	t.Parallel()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	owner := address.Party{ID: "ZTEST"}
	tests := []struct {
		name                string
		owner               address.Party
		venue, currencyID   string
		wantCode, wantField string
	}{
		{"no company", address.Party{}, "BYBIT", "btc-btc", apperr.CodeMissing, "companyId"},
		{"venue lower case", owner, "bybit", "btc-btc", apperr.CodeFormat, "venueId"},
		{"venue too long", owner, "ABCDEFGHIJKLMNOPQRSTUVWXY", "btc-btc", apperr.CodeFormat, "venueId"},
		{"currency code instead of id", owner, "BYBIT", "BTC", apperr.CodeCurrency, "currencyId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := address.NewSettlement(tt.owner, tt.venue, tt.currencyID, key, time.Now())
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
	if _, err := address.NewSettlement(owner, "BYBIT", "btc-btc", nil, time.Now()); err == nil {
		t.Error("NewSettlement() without an operator key succeeded")
	}
}
