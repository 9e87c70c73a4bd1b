package server_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// apiError returns err's ER code and field (err itself when it is no *apperr.Error).
func apiError(err error) string {
	var e *apperr.Error
	if !errors.As(err, &e) {
		return fmt.Sprint(err)
	}
	return e.Code + " " + e.Field
}

// TestCustodyWalletStatements: a custody wallet's history and its balances as of a time,
// from custody's journal, as the trading wallets' extensions answer them: every posting in
// the order applied with the balances after it, per currency id (an XLM wallet's XLM and its
// USDC trustline), paged by sequence, filtered by reference and currency id; the balances
// after the last posting at or before a time; another company's wallet is not found.
func TestCustodyWalletStatements(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	f := newLedgerFixtureWithClock(t, clock.Now)
	const w = "ZTEST-NOBENF-XLM"
	credit := func(transferID, currency, amount string) {
		t.Helper()
		clock.Advance(5 * time.Millisecond) // the postings' times are milliseconds apart
		if _, err := f.ledger.CreditTransfer(interchangeContext(), &custodyv1.CreditTransferRequest{TransferId: transferID, CompanyId: company,
			WalletId: w, Currency: currency, Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	credit("TWD-ZTEST-1", "USDC", "2")
	credit("TWD-ZTEST-2", "XLM", "3")
	ctx := companyContext(company)

	page := func(req *tradingv1.ListWalletHistoryRequest) (*tradingv1.ListWalletHistoryResponse, []string) {
		t.Helper()
		resp, err := f.api.ListWalletHistory(ctx, req)
		if err != nil {
			t.Fatalf("ListWalletHistory(%v): %v", req, err)
		}
		var rows []string
		for _, p := range resp.GetItems() {
			rows = append(rows, fmt.Sprintf("%d %s %s %s %s→%s/%s", p.GetSequence(), p.GetType(), p.GetReference(), p.GetCurrency(),
				p.GetAvailableChange(), p.GetAvailableBalance(), p.GetLedgerBalance()))
		}
		return resp, rows
	}
	want := []string{"1 fund put:ZTEST-NOBENF-XLM:xlm-xlm xlm-xlm 5→5/5", "2 withdrawal.credit TWD-ZTEST-1 usdc-xlm 2→2/2",
		"3 withdrawal.credit TWD-ZTEST-2 xlm-xlm 3→8/8"}
	if _, got := page(&tradingv1.ListWalletHistoryRequest{WalletId: w}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history = %v, want %v", got, want)
	}
	var paged []string
	limit, cursor := int32(1), ""
	for range 5 {
		resp, rows := page(&tradingv1.ListWalletHistoryRequest{WalletId: w, PaginationLimit: &limit, Cursor: cursor})
		paged = append(paged, rows...)
		if cursor = resp.GetNextCursor(); cursor == "" {
			break
		}
	}
	if fmt.Sprint(paged) != fmt.Sprint(want) {
		t.Errorf("history paged one by one = %v, want %v", paged, want)
	}
	if _, got := page(&tradingv1.ListWalletHistoryRequest{WalletId: w, Reference: "TWD-ZTEST-1"}); fmt.Sprint(got) != fmt.Sprint(want[1:2]) {
		t.Errorf("history of TWD-ZTEST-1 = %v, want %v", got, want[1:2])
	}
	if _, got := page(&tradingv1.ListWalletHistoryRequest{WalletId: w, Currency: "xlm-xlm"}); fmt.Sprint(got) != fmt.Sprint([]string{want[0], want[2]}) {
		t.Errorf("history in xlm-xlm = %v, want its two postings", got)
	}

	resp, _ := page(&tradingv1.ListWalletHistoryRequest{WalletId: w})
	if len(resp.GetItems()) != 3 {
		t.Fatalf("history = %v, want three postings", resp.GetItems())
	}
	second, err := time.Parse(time.RFC3339Nano, resp.GetItems()[1].GetCreatedAt())
	if err != nil {
		t.Fatal(err)
	}
	first, _ := time.Parse(time.RFC3339Nano, resp.GetItems()[0].GetCreatedAt())
	third, _ := time.Parse(time.RFC3339Nano, resp.GetItems()[2].GetCreatedAt())
	if second.Sub(first) != 5*time.Millisecond || third.Sub(second) != 5*time.Millisecond {
		t.Fatalf("the postings were made at %s, %s and %s; want them the 5ms apart the store's clock moved", first, second, third)
	}
	for _, tt := range []struct {
		at       time.Time
		currency string
		want     string
	}{
		{first.Add(-time.Millisecond), "", "[usdc-xlm@0 0/0/0/0 xlm-xlm@0 0/0/0/0]"},
		{second, "", "[usdc-xlm@2 2/2/0/0 xlm-xlm@1 5/5/0/0]"},
		{second, "xlm-xlm", "[xlm-xlm@1 5/5/0/0]"},
		{clock.Now().Add(time.Minute), "", "[usdc-xlm@2 2/2/0/0 xlm-xlm@3 8/8/0/0]"},
	} {
		got, err := f.api.GetWalletBalanceAsOf(ctx, &tradingv1.GetWalletBalanceAsOfRequest{WalletId: w, AsOf: tt.at.Format(time.RFC3339Nano), Currency: tt.currency})
		if err != nil {
			t.Fatal(err)
		}
		var shown []string
		for _, b := range got.GetBalances() {
			shown = append(shown, fmt.Sprintf("%s@%d %s/%s/%s/%s", b.GetCurrency(), b.GetSequence(), b.GetAvailableBalance(), b.GetLedgerBalance(),
				b.GetPendingOutBalance(), b.GetPendingInBalance()))
		}
		if fmt.Sprint(shown) != tt.want {
			t.Errorf("%s as of %s %s = %v, want %s", w, tt.at.Format(time.RFC3339Nano), tt.currency, shown, tt.want)
		}
	}

	for name, call := range map[string]func() error{
		"another company's history": func() error {
			_, err := f.api.ListWalletHistory(companyContext("ZACME"), &tradingv1.ListWalletHistoryRequest{WalletId: w})
			return err
		},
		"another company's balance": func() error {
			_, err := f.api.GetWalletBalanceAsOf(companyContext("ZACME"), &tradingv1.GetWalletBalanceAsOfRequest{WalletId: w, AsOf: "2026-01-01T00:00:00Z"})
			return err
		},
		"a wallet that does not exist": func() error {
			_, err := f.api.ListWalletHistory(ctx, &tradingv1.ListWalletHistoryRequest{WalletId: "ZTEST-NOBENF-NOSUCH"})
			return err
		},
	} {
		if err := call(); apiError(err) != "ER-102 walletId" {
			t.Errorf("%s: %v, want ER-102 on walletId", name, err)
		}
	}
	if _, err := f.api.ListWalletHistory(ctx, &tradingv1.ListWalletHistoryRequest{WalletId: w, Currency: "XLM"}); apiError(err) != "ER-111 currency" {
		t.Errorf("a currency code for a custody wallet: %v, want ER-111 on currency (custody's accounts are by currency id)", err)
	}
}
