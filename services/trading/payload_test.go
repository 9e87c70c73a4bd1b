package trading_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/trading"
)

const (
	accountUUID = "0b9e5b6a-2f43-4d7c-9a51-3f1c2b7d8e90"
	userUUID    = "7C2D9F10-5A4B-4E3C-8D2F-1A0B9C8D7E6F"
)

func validPayload() map[string]any {
	return map[string]any{"name": "Bybit BTC 1", "currency": "BTC", "tradingVenueId": "BYBIT",
		"accountUuid": accountUUID, "userUuid": []any{userUUID}}
}

func with(key string, value any) map[string]any {
	p := validPayload()
	if value == nil {
		delete(p, key)
		return p
	}
	p[key] = value
	return p
}

// wantAppErr checks err is an *apperr.Error with code and field.
func wantAppErr(t *testing.T, err error, code, field string) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want %s on %s", err, code, field)
	}
	if ae.Code != code || ae.Field != field {
		t.Errorf("err = %s on %q (%s), want %s on %q", ae.Code, ae.Field, ae.Message, code, field)
	}
}

func TestParseCreateAccepts(t *testing.T) {
	t.Parallel()
	got, err := trading.ParseCreate(validPayload())
	if err != nil {
		t.Fatal(err)
	}
	want := trading.CreateWallet{Name: "Bybit BTC 1", Currency: "BTC", VenueID: "BYBIT", AccountUUID: accountUUID, UserUUID: userUUID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseCreate() diff (-want +got):\n%s", diff)
	}
	for _, cur := range []string{"ETH", "XLM", "XRP", "USDC", "EURC"} {
		if _, err := trading.ParseCreate(with("currency", []any{cur})); err != nil {
			t.Errorf("currency %s: %v", cur, err)
		}
	}
	if _, err := trading.ParseCreate(with("name", strings.Repeat("a", 128))); err != nil {
		t.Errorf("128-character name: %v", err)
	}
	if _, err := trading.ParseCreate(with("tradingVenueId", strings.Repeat("V", 64))); err != nil {
		t.Errorf("64-character venue: %v", err)
	}
}

func TestParseCreateRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		give      map[string]any
		wantCode  string
		wantField string
	}{
		{"unknown key", with("walletOwnerId", "x"), apperr.CodeFormat, "walletOwnerId"},
		{"missing name", with("name", nil), apperr.CodeMissing, "name"},
		{"null name", with("name", []any{nil}), apperr.CodeMissing, "name"},
		{"empty list", with("name", []any{}), apperr.CodeEmptyList, "name"},
		{"two values", with("name", []any{"a", "b"}), apperr.CodeFormat, "name"},
		{"number", with("name", 12.0), apperr.CodeFormat, "name"},
		{"blank name", with("name", "  "), apperr.CodeBlank, "name"},
		{"empty name", with("name", ""), apperr.CodeBlank, "name"},
		{"long name", with("name", strings.Repeat("a", 129)), apperr.CodeLength, "name"},
		{"name characters", with("name", "Bybit_BTC"), apperr.CodeFormat, "name"},
		{"missing currency", with("currency", nil), apperr.CodeMissing, "currency"},
		{"unsupported currency", with("currency", "DOGE"), apperr.CodeCurrency, "currency"},
		{"currency id is not a code", with("currency", "btc-btc"), apperr.CodeCurrency, "currency"},
		{"lower-case currency", with("currency", "btc"), apperr.CodeCurrency, "currency"},
		{"missing venue", with("tradingVenueId", nil), apperr.CodeMissing, "tradingVenueId"},
		{"long venue", with("tradingVenueId", strings.Repeat("V", 65)), apperr.CodeLength, "tradingVenueId"},
		{"lower-case venue", with("tradingVenueId", "bybit"), apperr.CodeFormat, "tradingVenueId"},
		{"missing account", with("accountUuid", nil), apperr.CodeMissing, "accountUuid"},
		{"account not a uuid", with("accountUuid", "1234"), apperr.CodeFormat, "accountUuid"},
		{"user not a uuid", with("userUuid", []any{accountUUID + "0"}), apperr.CodeFormat, "userUuid"},
		{"missing user", with("userUuid", nil), apperr.CodeMissing, "userUuid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := trading.ParseCreate(tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func TestParseDeactivate(t *testing.T) {
	t.Parallel()
	got, err := trading.ParseDeactivate(map[string]any{"walletId": []any{"ZTEST-TW-ABCDEFGHIJ"}})
	if err != nil || got != "ZTEST-TW-ABCDEFGHIJ" {
		t.Errorf("ParseDeactivate() = %q, %v", got, err)
	}
	_, err = trading.ParseDeactivate(map[string]any{})
	wantAppErr(t, err, apperr.CodeMissing, "walletId")
	_, err = trading.ParseDeactivate(map[string]any{"walletId": "W", "name": "x"})
	wantAppErr(t, err, apperr.CodeFormat, "name")
}

func TestNewWallet(t *testing.T) {
	t.Parallel()
	c, err := trading.ParseCreate(validPayload())
	if err != nil {
		t.Fatal(err)
	}
	w := c.NewWallet("ZTEST-TW-ABCDEFGHIJ", "ZTEST", "maker@ztest.example", "SERV-REQ-1", fixedNow)
	if w.Status != trading.StatusActive || w.Version != 1 || len(w.Balances) != 1 || w.Balances[0].Available != "0" {
		t.Errorf("NewWallet() = %+v, want an active wallet with one zero balance", w)
	}
	want := `{"accountUuid":"` + accountUUID + `","userUuid":"` + userUUID + `"}`
	if w.CustomProperties != want {
		t.Errorf("CustomProperties = %s, want %s", w.CustomProperties, want)
	}
}

func TestWalletID(t *testing.T) {
	t.Parallel()
	id := trading.NewWalletID("ZTEST")
	tests := []struct {
		company, id string
		want        bool
	}{
		{"ZTEST", id, true},
		{"ZACME", id, false},
		{"ZTES", id, false},
		{"ZTEST", "ZTEST-TW-DEMO000001", true},
		{"ZTEST", "ZTEST-TW-short", false},
		{"ZTEST", "ZTEST-TW-abcdefghij", false},
		{"ZTEST", "ZTEST-NOBENF-ABCDEFGHIJ", false},
	}
	for _, tt := range tests {
		if got := trading.IsWalletIDOf(tt.company, tt.id); got != tt.want {
			t.Errorf("IsWalletIDOf(%s, %s) = %v, want %v", tt.company, tt.id, got, tt.want)
		}
	}
}

func TestCheckActive(t *testing.T) {
	t.Parallel()
	if err := (trading.Wallet{Status: trading.StatusActive}).CheckActive(); err != nil {
		t.Errorf("active wallet: %v", err)
	}
	wantAppErr(t, trading.Wallet{ID: "W", Status: trading.StatusDeactivated}.CheckActive(), apperr.CodeDeactivated, "walletId")
}
