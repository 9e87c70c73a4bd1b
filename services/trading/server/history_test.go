package server_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
)

func mustAmount(t *testing.T, s string) amount.Amount {
	t.Helper()
	a, err := amountOf(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readHistory pages a wallet's statement through the history extension, limit rows a page,
// following nextCursor, and returns its postings as "sequence:currency" in order.
func readHistory(t *testing.T, f fixture, walletID string, limit int32) []string {
	t.Helper()
	var seen []string
	cursor := ""
	for range 20 {
		resp, err := f.server.ListWalletHistory(user(company), &tradingv1.ListWalletHistoryRequest{WalletId: walletID, Cursor: cursor, PaginationLimit: &limit})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range resp.GetItems() {
			seen = append(seen, fmt.Sprintf("%d:%s", p.GetSequence(), p.GetCurrency()))
		}
		if cursor = resp.GetNextCursor(); cursor == "" {
			return seen
		}
	}
	t.Fatalf("the history of %s does not end", walletID)
	return nil
}

// TestHistoryCursorCountsRows: an entry that moves two currencies of one wallet is one row of
// its history (one sequence number) shown as two postings. The page size and the cursor count
// rows: before the fix the server gave a next cursor only when a page held as many postings
// as the limit, so a page with a two-currency row ended the history early.
func TestHistoryCursorCountsRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.create(t, "R-HIST", "Statement", "BTC")
	f.fund(t, w, "BTC", "1")
	// A wallet's legs in two currencies (as a multi-currency holder takes them; trading's
	// ledger API refuses a leg in another currency than the wallet's since).
	f.journal(t, journal.Entry{ID: "two", Kind: journal.Single, Code: "test", BusinessKey: "two", Legs: []journal.Leg{
		{Holder: "world:deposits", Currency: "BTC", Side: journal.Debit, Amount: mustAmount(t, "0.5")},
		{Holder: "world:deposits", Currency: "ETH", Side: journal.Debit, Amount: mustAmount(t, "2")},
		{Holder: w, Currency: "BTC", Side: journal.Credit, Amount: mustAmount(t, "0.5")},
		{Holder: w, Currency: "ETH", Side: journal.Credit, Amount: mustAmount(t, "2")},
	}})
	f.fund(t, w, "BTC", "2")
	want := "[1:BTC 2:BTC 2:ETH 3:BTC]"
	for _, limit := range []int32{1, 2, 3, 10} {
		if got := readHistory(t, f, w, limit); fmt.Sprint(got) != want {
			t.Errorf("history paged by %d = %v, want %s", limit, got, want)
		}
	}
}

// apiError returns err's ER code and field ("" when err is no *apperr.Error).
func apiError(err error) string {
	var e *apperr.Error
	if !errors.As(err, &e) {
		return fmt.Sprint(err)
	}
	return e.Code + " " + e.Field
}

// balancesAsOf reads a wallet's balances as of t through the extension, as
// "currency@sequence available/ledger/pendingOut/pendingIn".
func balancesAsOf(t *testing.T, f fixture, ctx context.Context, walletID, asOf, currency string) []string {
	t.Helper()
	resp, err := f.server.GetWalletBalanceAsOf(ctx, &tradingv1.GetWalletBalanceAsOfRequest{WalletId: walletID, AsOf: asOf, Currency: currency})
	if err != nil {
		t.Fatalf("GetWalletBalanceAsOf(%s, %s): %v", walletID, asOf, err)
	}
	if resp.GetWalletId() != walletID {
		t.Errorf("balance of %s answered wallet %q", walletID, resp.GetWalletId())
	}
	var out []string
	for _, b := range resp.GetBalances() {
		out = append(out, fmt.Sprintf("%s@%d %s/%s/%s/%s", b.GetCurrency(), b.GetSequence(), b.GetAvailableBalance(), b.GetLedgerBalance(),
			b.GetPendingOutBalance(), b.GetPendingInBalance()))
		sum := mustAmount(t, b.GetCreditsPosted()).Sub(mustAmount(t, b.GetDebitsPosted()))
		if sum.String() != b.GetLedgerBalance() || (b.GetSequence() == 0) != (b.GetPostedAt() == "") {
			t.Errorf("balance %+v: its counters and balances disagree", b)
		}
	}
	return out
}

// TestTradingWalletBalanceAsOf: a trading wallet's balance as of a time is the one its last
// posting at or before that time left, zero before its first; a company reads only its own
// wallets; the request is checked field by field.
func TestTradingWalletBalanceAsOf(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	f := newFixtureWithClock(t, clock.Now)
	w := f.create(t, "R-ASOF", "As of", "BTC")
	ctx := user(company)
	if got := balancesAsOf(t, f, ctx, w, "2026-01-01T00:00:00Z", ""); fmt.Sprint(got) != "[BTC@0 0/0/0/0]" {
		t.Errorf("a wallet never moved = %v, want its currency at zero", got)
	}
	f.fund(t, w, "BTC", "1")
	clock.Advance(5 * time.Millisecond) // the postings' times are milliseconds apart
	f.fund(t, w, "BTC", "2")
	hist, err := f.server.ListWalletHistory(ctx, &tradingv1.ListWalletHistoryRequest{WalletId: w})
	if err != nil || len(hist.GetItems()) != 2 {
		t.Fatalf("history = %v, %v; want two postings", hist, err)
	}
	first, err := time.Parse(time.RFC3339Nano, hist.GetItems()[0].GetCreatedAt())
	if err != nil {
		t.Fatal(err)
	}
	if second, err := time.Parse(time.RFC3339Nano, hist.GetItems()[1].GetCreatedAt()); err != nil || second.Sub(first) != 5*time.Millisecond {
		t.Fatalf("the postings were made at %s and %s (%v); want them the 5ms apart the store's clock moved", first, second, err)
	}
	for _, tt := range []struct{ asOf, want string }{
		{first.Add(-time.Millisecond).Format(time.RFC3339Nano), "[BTC@0 0/0/0/0]"},
		{first.Format(time.RFC3339Nano), "[BTC@1 1/1/0/0]"},
		{first.Add(2 * time.Millisecond).In(time.FixedZone("CET", 3600)).Format(time.RFC3339Nano), "[BTC@1 1/1/0/0]"},
		{clock.Now().Add(time.Hour).Format(time.RFC3339), "[BTC@2 3/3/0/0]"},
	} {
		if got := balancesAsOf(t, f, ctx, w, tt.asOf, ""); fmt.Sprint(got) != tt.want {
			t.Errorf("%s as of %s = %v, want %s", w, tt.asOf, got, tt.want)
		}
	}
	if got := balancesAsOf(t, f, ctx, w, first.Format(time.RFC3339Nano), "ETH"); fmt.Sprint(got) != "[ETH@0 0/0/0/0]" {
		t.Errorf("%s in ETH = %v, want zero", w, got)
	}
	refusals := []struct {
		name string
		ctx  context.Context
		req  *tradingv1.GetWalletBalanceAsOfRequest
		want string
	}{
		{"another company's wallet", user("ZACME"), &tradingv1.GetWalletBalanceAsOfRequest{WalletId: w, AsOf: "2026-01-01T00:00:00Z"}, "ER-102 walletId"},
		{"no wallet", ctx, &tradingv1.GetWalletBalanceAsOfRequest{AsOf: "2026-01-01T00:00:00Z"}, "ER-101 walletId"},
		{"no time", ctx, &tradingv1.GetWalletBalanceAsOfRequest{WalletId: w}, "ER-101 asOf"},
		{"a time without a zone", ctx, &tradingv1.GetWalletBalanceAsOfRequest{WalletId: w, AsOf: "2026-01-01T00:00:00"}, "ER-108 asOf"},
		{"an unknown currency", ctx, &tradingv1.GetWalletBalanceAsOfRequest{WalletId: w, AsOf: "2026-01-01T00:00:00Z", Currency: "btc-btc"}, "ER-111 currency"},
	}
	for _, r := range refusals {
		if _, err := f.server.GetWalletBalanceAsOf(r.ctx, r.req); apiError(err) != r.want {
			t.Errorf("%s: %v, want %s", r.name, err, r.want)
		}
	}
	if _, err := f.server.ListWalletHistory(user("ZACME"), &tradingv1.ListWalletHistoryRequest{WalletId: w}); apiError(err) != "ER-102 walletId" {
		t.Errorf("another company's history: %v, want ER-102 on walletId", err)
	}
	if _, err := f.server.ListWalletHistory(ctx, &tradingv1.ListWalletHistoryRequest{WalletId: w, Cursor: "-1"}); apiError(err) != "ER-108 cursor" {
		t.Errorf("a negative cursor: %v, want ER-108 on cursor", err)
	}
}
