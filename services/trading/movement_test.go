package trading_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/trading"
)

func validMovement() trading.MovementInput {
	return trading.MovementInput{ID: "STL-1:PAY_IN:leg1:hold", CompanyID: "ZTEST", WalletID: "ZTEST-TW-DEMO000001",
		Currency: "BTC", Available: "-0.5", PendingOut: "0.5", Reason: "settlement STL-1"}
}

func TestParseMovementRefuses(t *testing.T) {
	t.Parallel()
	change := func(f func(*trading.MovementInput)) trading.MovementInput {
		in := validMovement()
		f(&in)
		return in
	}
	long := make([]byte, trading.MaxMovementIDLength+1)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		name      string
		give      trading.MovementInput
		wantCode  string
		wantField string
	}{
		{"no id", change(func(m *trading.MovementInput) { m.ID = "" }), apperr.CodeMissing, "movementId"},
		{"long id", change(func(m *trading.MovementInput) { m.ID = string(long) }), apperr.CodeLength, "movementId"},
		{"no company", change(func(m *trading.MovementInput) { m.CompanyID = "" }), apperr.CodeMissing, "companyId"},
		{"no wallet", change(func(m *trading.MovementInput) { m.WalletID = "" }), apperr.CodeMissing, "walletId"},
		{"no currency", change(func(m *trading.MovementInput) { m.Currency = "" }), apperr.CodeMissing, "currency"},
		{"unsupported currency", change(func(m *trading.MovementInput) { m.Currency = "DOGE" }), apperr.CodeCurrency, "currency"},
		{"exponent", change(func(m *trading.MovementInput) { m.Available = "-5e-1" }), apperr.CodeFormat, "availableDelta"},
		{"trailing zero", change(func(m *trading.MovementInput) { m.Ledger = "1.50" }), apperr.CodeFormat, "ledgerDelta"},
		{"plus sign", change(func(m *trading.MovementInput) { m.PendingOut = "+0.5" }), apperr.CodeFormat, "pendingOutDelta"},
		{"minus zero", change(func(m *trading.MovementInput) { m.PendingIn = "-0" }), apperr.CodeFormat, "pendingInDelta"},
		{"finer than a satoshi", change(func(m *trading.MovementInput) { m.Available = "0.000000001" }), apperr.CodeFormat, "availableDelta"},
		{"nothing changes", change(func(m *trading.MovementInput) { m.Available, m.PendingOut = "0", "" }), apperr.CodeFormat, "availableDelta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := trading.ParseMovement(tt.give)
			wantAppErr(t, err, tt.wantCode, tt.wantField)
		})
	}
}

func TestApplyIsExact(t *testing.T) {
	t.Parallel()
	m, err := trading.ParseMovement(trading.MovementInput{ID: "M1", CompanyID: "ZTEST", WalletID: "W", Currency: "ETH",
		Available: "-0.000000000000000001", Ledger: "0.1", PendingOut: "0.000000000000000001", PendingIn: "-2.5"})
	if err != nil {
		t.Fatal(err)
	}
	b := trading.Balance{Currency: "ETH", Available: "40.125", Ledger: "40.2", PendingOut: "0", PendingIn: "2.5", FeeBuffer: "0.05"}
	got, err := m.Apply(b)
	if err != nil {
		t.Fatal(err)
	}
	want := trading.Balance{Currency: "ETH", Available: "40.124999999999999999", Ledger: "40.3", PendingOut: "0.000000000000000001",
		PendingIn: "0", FeeBuffer: "0.05"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply() diff (-want +got):\n%s", diff)
	}
}

func TestApplyRefusesANegativeBalance(t *testing.T) {
	t.Parallel()
	m, err := trading.ParseMovement(trading.MovementInput{ID: "M1", CompanyID: "ZTEST", WalletID: "W", Currency: "BTC",
		Available: "-2.50000001", PendingOut: "2.50000001"})
	if err != nil {
		t.Fatal(err)
	}
	b := trading.Balance{Currency: "BTC", Available: "2.5", Ledger: "2.5", PendingOut: "0", PendingIn: "0"}
	got, err := m.Apply(b)
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Apply() error = %v, want FailedPrecondition", err)
	}
	wantAppErr(t, err, apperr.CodeConflict, "availableDelta")
	if diff := cmp.Diff(b, got); diff != "" {
		t.Errorf("a refused movement changed the balance (-want +got):\n%s", diff)
	}
}

func TestVenueWalletFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		company, wallet, currency string
		want                      bool
	}{
		{"VENUE-BYBIT", "BYBIT-ISW-BTC", "BTC", true},
		{"VENUE-E2E-X1", "E2E-X1-ISW-USDC", "USDC", true},
		{"VENUE-BYBIT", "BYBIT-ISW-BTC", "ETH", false}, // currency differs from the id's
		{"ZTEST", "BYBIT-ISW-BTC", "BTC", false},       // not the venue's company
		{"VENUE-BYBIT", "ZTEST-TW-DEMO000001", "BTC", false},
		{"VENUE-bybit", "bybit-ISW-BTC", "BTC", false}, // venue ids are upper case
		{"VENUE-BYBIT", "BYBIT-ISW-DOGE", "DOGE", false},
	}
	for _, tt := range tests {
		w, ok := trading.VenueWalletFor(tt.company, tt.wallet, tt.currency, fixedNow)
		if ok != tt.want {
			t.Errorf("VenueWalletFor(%s, %s, %s) = %v, want %v", tt.company, tt.wallet, tt.currency, ok, tt.want)
			continue
		}
		if ok && (w.ID != tt.wallet || w.CompanyID != tt.company || w.Status != trading.StatusActive || w.Balances[0].Available != "0") {
			t.Errorf("venue wallet %+v, want an empty active %s of %s", w, tt.wallet, tt.company)
		}
	}
}

func TestParsePrices(t *testing.T) {
	t.Parallel()
	got, err := trading.ParsePrices([]trading.PriceInput{{"BTC", "65000.00"}, {"EURC", "1.08"}}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	want := []trading.Price{{Currency: "BTC", Price: "65000.00", FiatCurrency: "USD", UpdatedAt: fixedNow},
		{Currency: "EURC", Price: "1.08", FiatCurrency: "USD", UpdatedAt: fixedNow}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParsePrices() diff (-want +got):\n%s", diff)
	}
	tests := []struct {
		name      string
		give      []trading.PriceInput
		wantCode  string
		wantField string
	}{
		{"empty", nil, apperr.CodeEmptyList, "prices"},
		{"no currency", []trading.PriceInput{{"", "1"}}, apperr.CodeMissing, "prices[0].currency"},
		{"unsupported", []trading.PriceInput{{"BTC", "1"}, {"DOGE", "1"}}, apperr.CodeCurrency, "prices[1].currency"},
		{"twice", []trading.PriceInput{{"BTC", "1"}, {"BTC", "2"}}, apperr.CodeFormat, "prices[1].currency"},
		{"no price", []trading.PriceInput{{"BTC", ""}}, apperr.CodeMissing, "prices[0].usd"},
		{"zero", []trading.PriceInput{{"BTC", "0"}}, apperr.CodeFormat, "prices[0].usd"},
		{"negative", []trading.PriceInput{{"BTC", "-1"}}, apperr.CodeFormat, "prices[0].usd"},
		{"exponent", []trading.PriceInput{{"BTC", "6.5e4"}}, apperr.CodeFormat, "prices[0].usd"},
		{"leading zero", []trading.PriceInput{{"BTC", "065000"}}, apperr.CodeFormat, "prices[0].usd"},
	}
	for _, tt := range tests {
		_, err := trading.ParsePrices(tt.give, fixedNow)
		wantAppErr(t, err, tt.wantCode, tt.wantField)
	}
}
