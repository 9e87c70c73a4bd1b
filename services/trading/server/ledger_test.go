package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/principal"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/server"
)

// system is the context of a call by an internal system whose token issuer is issuer.
func system(name, issuer string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: name, Issuer: issuer})
}

func TestLedgerCallers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	move := &tradingv1.ApplyMovementRequest{MovementId: "M1", CompanyId: "VENUE-BYBIT", WalletId: "BYBIT-ISW-BTC", Currency: "BTC",
		AvailableDelta: "1", LedgerDelta: "1"}
	prices := &tradingv1.SetPricesRequest{Prices: []*tradingv1.Price{{Currency: "EURC", Usd: "1.08"}}}
	company := principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindCompany, CompanyID: "ZTEST", Issuer: "gateway"})
	tests := []struct {
		name      string
		ctx       context.Context
		wantMove  codes.Code
		wantPrice codes.Code
	}{
		{"interchange", system("interchange", "interchange"), codes.OK, codes.PermissionDenied},
		{"settlement engine", system("settlement-engine", "settlement-engine"), codes.PermissionDenied, codes.OK},
		{"interchange name under another issuer", system("interchange", "gateway"), codes.PermissionDenied, codes.PermissionDenied},
		{"company", company, codes.PermissionDenied, codes.PermissionDenied},
		{"nobody", context.Background(), codes.PermissionDenied, codes.PermissionDenied},
	}
	for _, tt := range tests {
		if _, err := ledger.ApplyMovement(tt.ctx, move); status.Code(err) != tt.wantMove {
			t.Errorf("%s: ApplyMovement = %v, want %s", tt.name, err, tt.wantMove)
		}
		if _, err := ledger.SetPrices(tt.ctx, prices); status.Code(err) != tt.wantPrice {
			t.Errorf("%s: SetPrices = %v, want %s", tt.name, err, tt.wantPrice)
		}
	}
}

func TestApplyMovementAnswersTheBalance(t *testing.T) {
	t.Parallel()
	ledger := server.NewLedger(newFixture(t).store)
	ctx := system("interchange", "interchange")
	req := &tradingv1.ApplyMovementRequest{MovementId: "S1:PAY_OUT:net-BTC:credit", CompanyId: "VENUE-DERIBIT", WalletId: "DERIBIT-ISW-BTC",
		Currency: "BTC", AvailableDelta: "0.5", LedgerDelta: "0.5", Reason: "settlement S1"}
	for _, wantApplied := range []bool{true, false} {
		got, err := ledger.ApplyMovement(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetApplied() != wantApplied || got.GetAvailable() != "0.5" || got.GetLedger() != "0.5" || got.GetPendingOut() != "0" {
			t.Errorf("ApplyMovement = %v, want applied %v and 0.5 available", got, wantApplied)
		}
	}
	req.MovementId, req.AvailableDelta = "S1:bad", "0.5e1"
	if _, err := ledger.ApplyMovement(ctx, req); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ApplyMovement(exponent) = %v, want InvalidArgument", err)
	}
}

// TestSetPricesValuesWallets: a refreshed price shows in the fiat values of endpoint 2 at
// once, and an invalid refresh stores nothing.
func TestSetPricesValuesWallets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ledger := server.NewLedger(f.store)
	w := trading.Wallet{ID: "ZTEST-TW-EURC000001", VenueID: "BYBIT", Name: "EURC", Status: trading.StatusActive, CompanyID: company,
		Currency: "EURC", Balances: []trading.Balance{{Currency: "EURC", Available: "10", Ledger: "10", PendingOut: "0", PendingIn: "0", FeeBuffer: "0"}},
		CustomProperties: `{}`}
	if err := f.store.PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	fiat := func() string {
		resp, err := f.server.SearchWallets(user(company), &tradingv1.SearchWalletsRequest{Ids: []string{w.ID}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetItems()[0].GetBalances()[0].GetAvailableBalance().GetFiatValue()
	}
	if got := fiat(); got != "0" {
		t.Fatalf("fiat value without a price = %q, want 0", got)
	}
	ctx := system("settlement-engine", "settlement-engine")
	bad := &tradingv1.SetPricesRequest{Prices: []*tradingv1.Price{{Currency: "EURC", Usd: "1.0850"}, {Currency: "DOGE", Usd: "0.1"}}}
	if _, err := ledger.SetPrices(ctx, bad); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("SetPrices(DOGE) = %v, want InvalidArgument", err)
	}
	if got := fiat(); got != "0" {
		t.Errorf("an invalid refresh stored a price: fiat value %q", got)
	}
	resp, err := ledger.SetPrices(ctx, &tradingv1.SetPricesRequest{Prices: bad.GetPrices()[:1]})
	if err != nil || resp.GetUpdated() != 1 {
		t.Fatalf("SetPrices = %v, %v; want 1 updated", resp, err)
	}
	if got := fiat(); got != "10.8500" {
		t.Errorf("fiat value of 10 EURC at 1.0850 = %q, want 10.8500", got)
	}
}
