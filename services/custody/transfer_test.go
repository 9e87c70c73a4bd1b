package custody_test

import (
	"testing"

	"github.com/zcustody/suite/services/custody"
)

// TestIsSystemAccount: the journal creates a system account on first use and lets it go
// below zero, so no wallet id may ever be taken for one.
func TestIsSystemAccount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give string
		want bool
	}{
		{"transit:trading", true},
		{"world:deposits", true},
		{"world:withdrawals", true},
		{"transit:custody", false}, // trading's, not custody's
		{"ZTEST-NOBENF-A1B2C3D4E5", false},
		{"transit:trading2", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := custody.IsSystemAccount(tt.give); got != tt.want {
			t.Errorf("IsSystemAccount(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestCheckTransferCreditByStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status             string
		wantCheck, wantPay wantErr
	}{
		{custody.StatusActive, wantErr{}, wantErr{}},
		{custody.StatusDeactivated, wantErr{"ER-113", "walletId"}, wantErr{}},
		{custody.StatusPendingAuth, wantErr{"ER-409", "walletId"}, wantErr{"ER-409", "walletId"}},
		{custody.StatusRejected, wantErr{"ER-409", "walletId"}, wantErr{"ER-409", "walletId"}},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			t.Parallel()
			w, err := custody.Open(custody.Opening{ID: "ZTEST-NOBENF-X", CompanyID: "ZTEST", CurrencyID: "eurc-xlm"})
			if err != nil {
				t.Fatal(err)
			}
			w.Status = tt.status
			c, err := custody.CheckTransferTarget(w, "EURC", "0.0000001")
			checkErr(t, err, tt.wantCheck)
			if err == nil && (c.Currency.CurrencyID != "eurc-xlm" || c.Amount.String() != "0.0000001" || c.WalletID != w.ID) {
				t.Errorf("CheckTransferTarget() = %+v, want 0.0000001 eurc-xlm to %s", c, w.ID)
			}
			_, err = custody.CheckTransferCredit(w, "EURC", "0.0000001")
			checkErr(t, err, tt.wantPay)
		})
	}
}

func TestCreditEntryID(t *testing.T) {
	t.Parallel()
	if got := custody.CreditEntryID("WD-1"); got != "wd:WD-1:credit" {
		t.Errorf("CreditEntryID(WD-1) = %q, want wd:WD-1:credit", got)
	}
}
