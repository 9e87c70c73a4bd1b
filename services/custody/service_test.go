package custody_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/ledger"
)

// wantErr is the ER code and field a call must fail with; the zero value means success.
type wantErr struct{ code, field string }

func checkErr(t *testing.T, err error, want wantErr) {
	t.Helper()
	if want == (wantErr{}) {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	var appErr *apperr.Error
	if !errors.As(err, &appErr) {
		t.Fatalf("err = %v, want %s on %s", err, want.code, want.field)
	}
	if got := (wantErr{appErr.Code, appErr.Field}); got != want {
		t.Fatalf("err = %s on %s (%s), want %s on %s", got.code, got.field, appErr.Message, want.code, want.field)
	}
}

func arr(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func repeat(s string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func currency(t *testing.T, id string) ledger.Currency {
	t.Helper()
	c, ok := ledger.ByID(id)
	if !ok {
		t.Fatalf("currency %s is not supported", id)
	}
	return c
}

// createPayload is a valid one-wallet 0x0013-001 payload with the given changes (a nil value
// removes the key).
func createPayload(changes map[string]any) map[string]any {
	p := map[string]any{"name": arr("Main BTC"), "currency": arr("BTC"), "currencyId": arr("btc-btc")}
	for k, v := range changes {
		if v == nil {
			delete(p, k)
			continue
		}
		p[k] = v
	}
	return p
}

func TestParseCreate(t *testing.T) {
	t.Parallel()
	btc, eth, xlm := currency(t, "btc-btc"), currency(t, "eth-eth"), currency(t, "xlm-xlm")
	tests := []struct {
		name    string
		give    map[string]any
		want    []custody.NewWallet
		wantErr wantErr
	}{
		{name: "one wallet", give: createPayload(nil), want: []custody.NewWallet{{Name: "Main BTC", Currency: btc}}},
		{name: "plain strings", give: map[string]any{"name": "Main BTC", "currency": "BTC", "currencyId": "btc-btc", "walletOwnerId": ""},
			want: []custody.NewWallet{{Name: "Main BTC", Currency: btc}}},
		{name: "three wallets with owners", give: map[string]any{"name": arr("A", "B b", "C-c"), "currency": arr("BTC", "ETH", "XLM"),
			"currencyId": arr("btc-btc", "eth-eth", "xlm-xlm"), "walletOwnerId": arr("BNF-ZTEST-1", "", "BNF-ZTEST-3")},
			want: []custody.NewWallet{{Name: "A", Currency: btc, OwnerID: "BNF-ZTEST-1"}, {Name: "B b", Currency: eth}, {Name: "C-c", Currency: xlm, OwnerID: "BNF-ZTEST-3"}}},
		{name: "empty owner list", give: createPayload(map[string]any{"walletOwnerId": arr()}), want: []custody.NewWallet{{Name: "Main BTC", Currency: btc}}},
		{name: "twenty wallets", give: map[string]any{"name": repeat("W", 20), "currency": repeat("BTC", 20), "currencyId": repeat("btc-btc", 20)}},
		{name: "name of 128", give: createPayload(map[string]any{"name": strings.Repeat("n", 128)}), want: []custody.NewWallet{{Name: strings.Repeat("n", 128), Currency: btc}}},
		{name: "missing name", give: createPayload(map[string]any{"name": nil}), wantErr: wantErr{apperr.CodeMissing, "name"}},
		{name: "missing currency", give: createPayload(map[string]any{"currency": nil}), wantErr: wantErr{apperr.CodeMissing, "currency"}},
		{name: "missing currencyId", give: createPayload(map[string]any{"currencyId": nil}), wantErr: wantErr{apperr.CodeMissing, "currencyId"}},
		{name: "empty payload", give: map[string]any{}, wantErr: wantErr{apperr.CodeMissing, "name"}},
		{name: "empty name list", give: createPayload(map[string]any{"name": arr()}), wantErr: wantErr{apperr.CodeEmptyList, "name"}},
		{name: "twenty-one wallets", give: map[string]any{"name": repeat("W", 21), "currency": repeat("BTC", 21), "currencyId": repeat("btc-btc", 21)},
			wantErr: wantErr{apperr.CodeLength, "name"}},
		{name: "currency count differs", give: createPayload(map[string]any{"currency": arr("BTC", "BTC")}), wantErr: wantErr{apperr.CodeLength, "currency"}},
		{name: "currencyId count differs", give: createPayload(map[string]any{"currencyId": arr("btc-btc", "btc-btc")}), wantErr: wantErr{apperr.CodeLength, "currencyId"}},
		{name: "owner count differs", give: createPayload(map[string]any{"walletOwnerId": arr("A1", "A2")}), wantErr: wantErr{apperr.CodeLength, "walletOwnerId"}},
		{name: "unknown key", give: createPayload(map[string]any{"isDeFi": true}), wantErr: wantErr{apperr.CodeFormat, "isDeFi"}},
		{name: "name not strings", give: createPayload(map[string]any{"name": []any{1.0}}), wantErr: wantErr{apperr.CodeFormat, "name"}},
		{name: "name a number", give: createPayload(map[string]any{"name": 7.0}), wantErr: wantErr{apperr.CodeFormat, "name"}},
		{name: "empty name", give: createPayload(map[string]any{"name": ""}), wantErr: wantErr{apperr.CodeLength, "name"}},
		{name: "name of 129", give: createPayload(map[string]any{"name": strings.Repeat("n", 129)}), wantErr: wantErr{apperr.CodeLength, "name"}},
		{name: "name format", give: createPayload(map[string]any{"name": "bad_name!"}), wantErr: wantErr{apperr.CodeFormat, "name"}},
		{name: "name blank", give: createPayload(map[string]any{"name": "   "}), wantErr: wantErr{apperr.CodeBlank, "name"}},
		{name: "unsupported currencyId", give: createPayload(map[string]any{"currencyId": "doge-doge"}), wantErr: wantErr{apperr.CodeCurrency, "currencyId"}},
		{name: "currency differs from currencyId", give: createPayload(map[string]any{"currency": "ETH"}), wantErr: wantErr{apperr.CodeFormat, "currency"}},
		{name: "currency case differs", give: createPayload(map[string]any{"currency": "btc"}), wantErr: wantErr{apperr.CodeFormat, "currency"}},
		{name: "owner format", give: createPayload(map[string]any{"walletOwnerId": "BNF ZTEST"}), wantErr: wantErr{apperr.CodeFormat, "walletOwnerId"}},
		{name: "owner NOBENF", give: createPayload(map[string]any{"walletOwnerId": "NOBENF"}), wantErr: wantErr{apperr.CodeFormat, "walletOwnerId"}},
		{name: "owner too long", give: createPayload(map[string]any{"walletOwnerId": strings.Repeat("B", 33)}), wantErr: wantErr{apperr.CodeLength, "walletOwnerId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := custody.ParseCreate(tt.give)
			checkErr(t, err, tt.wantErr)
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseCreate() mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseRename(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]any
		want    custody.Rename
		wantErr wantErr
	}{
		{name: "arrays", give: map[string]any{"walletId": arr("ZTEST-NOBENF-A"), "name": arr("New name")}, want: custody.Rename{WalletID: "ZTEST-NOBENF-A", Name: "New name"}},
		{name: "strings", give: map[string]any{"walletId": "ZTEST-NOBENF-A", "name": "New name"}, want: custody.Rename{WalletID: "ZTEST-NOBENF-A", Name: "New name"}},
		{name: "missing walletId", give: map[string]any{"name": "N"}, wantErr: wantErr{apperr.CodeMissing, "walletId"}},
		{name: "missing name", give: map[string]any{"walletId": "W"}, wantErr: wantErr{apperr.CodeMissing, "name"}},
		{name: "two wallets", give: map[string]any{"walletId": arr("W1", "W2"), "name": "N"}, wantErr: wantErr{apperr.CodeLength, "walletId"}},
		{name: "two names", give: map[string]any{"walletId": "W", "name": arr("N1", "N2")}, wantErr: wantErr{apperr.CodeLength, "name"}},
		{name: "empty walletId list", give: map[string]any{"walletId": arr(), "name": "N"}, wantErr: wantErr{apperr.CodeEmptyList, "walletId"}},
		{name: "blank walletId", give: map[string]any{"walletId": " ", "name": "N"}, wantErr: wantErr{apperr.CodeBlank, "walletId"}},
		{name: "name format", give: map[string]any{"walletId": "W", "name": "N/1"}, wantErr: wantErr{apperr.CodeFormat, "name"}},
		{name: "name too long", give: map[string]any{"walletId": "W", "name": strings.Repeat("n", 129)}, wantErr: wantErr{apperr.CodeLength, "name"}},
		{name: "unknown key", give: map[string]any{"walletId": "W", "name": "N", "status": "ACTIVE"}, wantErr: wantErr{apperr.CodeFormat, "status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := custody.ParseRename(tt.give)
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); tt.wantErr == (wantErr{}) && diff != "" {
				t.Errorf("ParseRename() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDeactivate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]any
		want    string
		wantErr wantErr
	}{
		{name: "array", give: map[string]any{"walletId": arr("W1")}, want: "W1"},
		{name: "string", give: map[string]any{"walletId": "W1"}, want: "W1"},
		{name: "missing", give: map[string]any{}, wantErr: wantErr{apperr.CodeMissing, "walletId"}},
		{name: "empty list", give: map[string]any{"walletId": arr()}, wantErr: wantErr{apperr.CodeEmptyList, "walletId"}},
		{name: "two", give: map[string]any{"walletId": arr("W1", "W2")}, wantErr: wantErr{apperr.CodeLength, "walletId"}},
		{name: "blank", give: map[string]any{"walletId": ""}, wantErr: wantErr{apperr.CodeBlank, "walletId"}},
		{name: "unknown key", give: map[string]any{"walletId": "W1", "name": "N"}, wantErr: wantErr{apperr.CodeFormat, "name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := custody.ParseDeactivate(tt.give)
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("ParseDeactivate() = %q, want %q", got, tt.want)
			}
		})
	}
}
