package settlement_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/interchange/settlement"
)

func TestShares(t *testing.T) {
	t.Parallel()
	const a, b = "ZTEST-TW-A", "ZTEST-TW-B"
	leg := func(wallet, cur, amt string) settlement.Leg {
		return settlement.Leg{WalletID: wallet, Currency: cur, Ledger: cur, Amount: amt}
	}
	share := func(role, company, wallet, cur, amt string) settlement.Share {
		return settlement.Share{Role: role, CompanyID: company, WalletID: wallet, Currency: cur, Amount: amt}
	}
	const payer, payee = settlement.RolePayer, settlement.RolePayee
	tests := []struct {
		name      string
		legs      []settlement.Leg
		nets      []settlement.Net
		want      []settlement.Share
		wantField string
	}{
		{name: "gross receivable and payable settle on their own",
			legs: []settlement.Leg{leg(a, "BTC", "1.5"), leg(b, "BTC", "-0.5")},
			want: []settlement.Share{
				share(payee, "VENUE-V", "V-ISW-BTC", "BTC", "1.5"), share(payee, "", b, "BTC", "0.5"),
				share(payer, "VENUE-V", "V-ISW-BTC", "BTC", "0.5"), share(payer, "", a, "BTC", "1.5")}},
		{name: "netted: each wallet pays its net, the venue only the net payout",
			legs: []settlement.Leg{leg(a, "BTC", "1"), leg(b, "BTC", "-3")},
			nets: []settlement.Net{{Currency: "BTC", Ledger: "BTC", Amount: "-2"}},
			want: []settlement.Share{
				share(payee, "", b, "BTC", "3"),
				share(payer, "VENUE-V", "V-ISW-BTC", "BTC", "2"), share(payer, "", a, "BTC", "1")}},
		{name: "a net that is not the sum of its legs is refused",
			legs:      []settlement.Leg{leg(a, "USDC", "10000000")},
			nets:      []settlement.Net{{Currency: "USDC", Ledger: "USDC", Amount: "-10000000"}},
			wantField: "netSettlements[0].amount"},
		{name: "a net without legs in its currency is refused",
			legs:      []settlement.Leg{leg(a, "BTC", "1")},
			nets:      []settlement.Net{{Currency: "ETH", Ledger: "ETH", Amount: "1"}},
			wantField: "netSettlements[0].currency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := settlement.Shares("V", tt.legs, tt.nets)
			if tt.wantField != "" {
				var e *apperr.Error
				if !errors.As(err, &e) || e.Field != tt.wantField {
					t.Fatalf("Shares = %v, %v; want an error on %s", got, err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
		})
	}
}
