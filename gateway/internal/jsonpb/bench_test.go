package jsonpb_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	commonv1 "github.com/zcustody/suite/proto/common/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// walletPage is a page of 10 trading wallets as endpoint 2 answers it, two currencies each, with
// caller properties and sub-client balances in their google.protobuf.Struct fields.
func walletPage(tb testing.TB) *tradingv1.SearchWalletsResponse {
	tb.Helper()
	page := &tradingv1.SearchWalletsResponse{Total: 137}
	for i := range 10 {
		props, err := structpb.NewStruct(map[string]any{
			"accountUuid": fmt.Sprintf("5f0c8a52-3c1e-4d2b-9a47-1e6b2f7d9c%02d", i),
			"desk":        "Zürich OTC",
			"tier":        float64(i % 3),
			"autoSweep":   i%2 == 0,
			"limits":      map[string]any{"daily": 250000.5, "perTransfer": 10000},
			"tags":        []any{"treasury", "cold", nil},
		})
		if err != nil {
			tb.Fatal(err)
		}
		page.Items = append(page.Items, &tradingv1.Wallet{
			Id: fmt.Sprintf("ZTEST-TW-BN%08d", i*10), VenueId: "BENCH", Name: fmt.Sprintf("Bench wallet %d", i),
			Status: "ACTIVE", CompanyId: "ZTEST", Currency: "BTC", CustomProperties: props,
			Balances:  []*tradingv1.Balance{balance(tb, "BTC", i), balance(tb, "ETH", i)},
			CreatedBy: "api-maker@ztest.example", CreatedAt: "2026-01-01T00:00:00.000Z", UpdatedAt: "2026-01-02T10:30:00.000Z",
		})
	}
	return page
}

func balance(tb testing.TB, currency string, i int) *tradingv1.Balance {
	tb.Helper()
	amount := func(a, usd string) *commonv1.Amount {
		return &commonv1.Amount{Amount: a, AmountUnit: currency, FiatValue: usd, FiatCurrency: "USD", UsdValue: usd}
	}
	subs, err := structpb.NewStruct(map[string]any{
		"client-a": map[string]any{"amount": fmt.Sprintf("%d.25", i), "currency": currency},
		"client-b": map[string]any{"amount": "0", "currency": currency},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return &tradingv1.Balance{
		Currency: currency, AvailableBalance: amount(fmt.Sprintf("%d.10", i*10), "656500.00"),
		LedgerBalance: amount(fmt.Sprintf("%d.10", i*10), "656500.00"), PendingOutBalance: amount("0", "0.00"),
		PendingInBalance: amount("1.5", "97500.00"), FeeBufferBalance: amount("0", "0.00"), SubClientBalances: subs,
	}
}

func TestWalletPageMatchesProtojson(t *testing.T) {
	t.Parallel()
	assertSame(t, newMarshaler(), walletPage(t))
}

func BenchmarkMarshalWalletPage(b *testing.B) {
	page := walletPage(b)
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := reference().Marshal(page); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonpb", func(b *testing.B) {
		m := newMarshaler()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Marshal(page); err != nil {
				b.Fatal(err)
			}
		}
	})
}
