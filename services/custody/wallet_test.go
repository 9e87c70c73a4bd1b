package custody_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/custody"
)

func TestCheckChangeable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		wantErr wantErr
	}{
		{give: custody.StatusActive},
		{give: custody.StatusDeactivated, wantErr: wantErr{apperr.CodeDeactivated, "walletId"}},
		{give: custody.StatusPendingAuth, wantErr: wantErr{apperr.CodeConflict, "walletId"}},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			checkErr(t, custody.CheckChangeable(custody.Wallet{ID: "W", Status: tt.give}), tt.wantErr)
		})
	}
}

func TestNewWalletID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		owner string
		want  *regexp.Regexp
	}{
		{owner: "", want: regexp.MustCompile(`^ZTEST-NOBENF-[A-Z0-9]{10}$`)},
		{owner: "BNF-ZTEST-AB12", want: regexp.MustCompile(`^ZTEST-BNF-ZTEST-AB12-[A-Z0-9]{10}$`)},
	}
	for _, tt := range tests {
		id := custody.NewWalletID("ZTEST", tt.owner)
		if !tt.want.MatchString(id) {
			t.Errorf("NewWalletID(ZTEST, %q) = %q, want %s", tt.owner, id, tt.want)
		}
		if err := custody.CheckReservedID(id, "ZTEST", tt.owner); err != nil {
			t.Errorf("CheckReservedID(%q) = %v, want nil", id, err)
		}
	}
	if a, b := custody.NewWalletID("ZTEST", ""), custody.NewWalletID("ZTEST", ""); a == b {
		t.Errorf("two ids are equal: %s", a)
	}
}

func TestCheckReservedIDRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, id, company, owner string }{
		{"other company", "ZACME-NOBENF-ABCDEFGHIJ", "ZTEST", ""},
		{"other owner", "ZTEST-BNF-1-ABCDEFGHIJ", "ZTEST", "BNF-2"},
		{"owner missing", "ZTEST-NOBENF-ABCDEFGHIJ", "ZTEST", "BNF-1"},
		{"short suffix", "ZTEST-NOBENF-ABC", "ZTEST", ""},
		{"lower-case suffix", "ZTEST-NOBENF-abcdefghij", "ZTEST", ""},
		{"empty", "", "ZTEST", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkErr(t, custody.CheckReservedID(tt.id, tt.company, tt.owner), wantErr{apperr.CodeFormat, "entityIds"})
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	got, err := custody.Open(custody.Opening{ID: "ZTEST-NOBENF-DEMO000001", Name: "Main", CompanyID: "ZTEST",
		CreatedBy: "maker@ztest.example", CurrencyID: "btc-btc", RequestID: "SERV-REQ-1", At: at,
		Balance: custody.Amounts{Available: "1.25", Ledger: "1.5", PendingOut: "0.25"}})
	if err != nil {
		t.Fatal(err)
	}
	want := custody.Wallet{ID: "ZTEST-NOBENF-DEMO000001", Name: "Main", CompanyID: "ZTEST", CreatedBy: "maker@ztest.example",
		Status: custody.StatusActive, Valid: true, Blockchain: "BTC", CurrencyID: "btc-btc",
		AssetBalances: []custody.AssetBalance{{Currency: "BTC", CurrencyID: "btc-btc", UnitCurrency: "SATOSHI",
			AvailableUnitBalance: "125000000", LedgerUnitBalance: "150000000", PendingOutUnitBalance: "25000000", PendingInUnitBalance: "0",
			AvailableBalance: "1.25", LedgerBalance: "1.5", PendingOutBalance: "0.25", PendingInBalance: "0"}},
		CreatedAt: at, UpdatedAt: at, Version: 1, LastRequestID: "SERV-REQ-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Open() mismatch (-want +got):\n%s", diff)
	}
	if _, err := custody.Open(custody.Opening{ID: "X", CurrencyID: "doge-doge"}); err == nil {
		t.Error("Open(doge-doge) succeeded, want ER-111")
	}
}
