package e2e_test

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
)

// Paths of the statement extensions, the same request and answer for both kinds of wallet.
const (
	tradingHistoryPath = "/v3/api/trading/wallets/history"
	tradingBalancePath = "/v3/api/trading/wallets/balance-as-of"
	custodyHistoryPath = "/v3/api/custody/wallets/history"
	custodyBalancePath = "/v3/api/custody/wallets/balance-as-of"
)

// statementRow is one item of a wallet's history.
type statementRow struct {
	Sequence         string `json:"sequence"`
	Type             string `json:"type"`
	Reference        string `json:"reference"`
	Currency         string `json:"currency"`
	CreatedAt        string `json:"createdAt"`
	AvailableBalance string `json:"availableBalance"`
	LedgerBalance    string `json:"ledgerBalance"`
	PendingOut       string `json:"pendingOutBalance"`
}

func (r statementRow) String() string {
	return fmt.Sprintf("%s %s %s %s/%s/%s", r.Sequence, r.Type, r.Currency, r.AvailableBalance, r.LedgerBalance, r.PendingOut)
}

// statement reads a ZTEST wallet's whole history through path, one sequence a page.
func statement(t *testing.T, path, walletID string) []statementRow {
	t.Helper()
	var all []statementRow
	cursor := ""
	for range 20 {
		var page struct {
			Items      []statementRow `json:"items"`
			NextCursor string         `json:"nextCursor"`
		}
		wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, path,
			mustJSON(t, map[string]any{"walletId": walletID, "paginationLimit": 1, "cursor": cursor})), &page)
		all = append(all, page.Items...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatalf("the history of %s does not end", walletID)
	return nil
}

// balanceAsOf reads a ZTEST wallet's balances as of asOf through path, as
// "currency@sequence available/ledger/pendingOut/pendingIn".
func balanceAsOf(t *testing.T, path, walletID, asOf string) []string {
	t.Helper()
	var got struct {
		WalletID string `json:"walletId"`
		Balances []struct {
			Currency          string `json:"currency"`
			Sequence          string `json:"sequence"`
			PostedAt          string `json:"postedAt"`
			AvailableBalance  string `json:"availableBalance"`
			LedgerBalance     string `json:"ledgerBalance"`
			PendingOutBalance string `json:"pendingOutBalance"`
			PendingInBalance  string `json:"pendingInBalance"`
			CreditsPosted     string `json:"creditsPosted"`
		} `json:"balances"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, path, mustJSON(t, map[string]any{"walletId": walletID, "asOf": asOf})), &got)
	if got.WalletID != walletID {
		t.Errorf("%s answered wallet %q, want %s", path, got.WalletID, walletID)
	}
	var out []string
	for _, b := range got.Balances {
		seq := b.Sequence
		if seq == "" {
			seq = "0" // a zero int64 is left out of the JSON
		}
		out = append(out, fmt.Sprintf("%s@%s %s/%s/%s/%s", b.Currency, seq, b.AvailableBalance, b.LedgerBalance, b.PendingOutBalance, b.PendingInBalance))
	}
	return out
}

// postedAt is the time a history row's posting was made, as the suite recorded it.
func postedAt(t *testing.T, row statementRow) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, row.CreatedAt)
	if err != nil {
		t.Fatalf("createdAt %q: %v", row.CreatedAt, err)
	}
	return ts
}

// waitPast returns once the wall clock has passed the millisecond of ts, a time the suite
// recorded. The suite runs in this process, on its clock, and records times to the
// millisecond: whatever it records afterwards is later. A time more than a second ahead
// is no time of this clock, and fails the test rather than be waited for.
func waitPast(t *testing.T, ts time.Time) {
	t.Helper()
	next := ts.Truncate(time.Millisecond).Add(time.Millisecond)
	if ahead := time.Until(next); ahead > time.Second {
		t.Fatalf("the suite recorded %s, %s ahead of the test's clock", ts.Format(time.RFC3339Nano), ahead)
	}
	for time.Now().Before(next) { // at most a millisecond: the clock passing it is the event
		runtime.Gosched()
	}
}

// TestStatementsOfTradingAndCustodyWallets: money moves on a trading wallet (a deposit, then
// a withdrawal of 0.5 BTC to the client's custody wallet: held, then posted) and on the
// custody wallet (its credit); both wallets' histories through the gateway show each posting
// with the balances after it, and their balances as of a time between two postings are the
// ones the earlier left. Another company finds neither wallet; every caller of the company
// reads them.
func TestStatementsOfTradingAndCustodyWallets(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "2", "0", "0", "0")
	target := newCustodyWallet(t, "BTC", "btc-btc")
	requestID, transferID := requestWithdrawal(t, f.btc, target, "0.5")
	if got := authorised(t, requestID); got != "COMPLETED" {
		t.Fatalf("authorised withdrawal request is %s, want COMPLETED", got)
	}
	// The hold and the post are milliseconds apart: the post is asked for once the wall
	// clock has passed the hold's time as trading's statement records it.
	held := statement(t, tradingHistoryPath, f.btc)
	if want := "[1 deposit BTC 2/2/0 2 withdrawal.hold BTC 1.5/2/0.5]"; fmt.Sprint(held) != want {
		t.Fatalf("trading history once held = %v, want %s", held, want)
	}
	waitPast(t, postedAt(t, held[1]))
	wantOK(t, confirmAs(t, f.operatorClient(maker), transferID, "ACCEPT", ""), &struct{}{})

	trading := statement(t, tradingHistoryPath, f.btc)
	want := "[1 deposit BTC 2/2/0 2 withdrawal.hold BTC 1.5/2/0.5 3 withdrawal.post BTC 1.5/1.5/0]"
	if fmt.Sprint(trading) != want {
		t.Fatalf("trading history = %v, want %s", trading, want)
	}
	if trading[1].Reference != transferID || trading[2].Reference != transferID {
		t.Errorf("trading history references %q and %q, want the transfer %s", trading[1].Reference, trading[2].Reference, transferID)
	}
	custody := statement(t, custodyHistoryPath, target)
	if want := "[1 withdrawal.credit btc-btc 0.5/0.5/0]"; fmt.Sprint(custody) != want || custody[0].Reference != transferID {
		t.Fatalf("custody history = %+v, want %s of %s", custody, want, transferID)
	}

	if hold, post, credit := postedAt(t, trading[1]), postedAt(t, trading[2]), postedAt(t, custody[0]); !post.After(hold) || !credit.After(hold) {
		t.Fatalf("the hold was posted at %s, the post at %s and the custody credit at %s: want both after the hold",
			trading[1].CreatedAt, trading[2].CreatedAt, custody[0].CreatedAt)
	}

	// As of a posting's time: what it left; a millisecond before the first: nothing.
	at := func(row statementRow, d time.Duration) string {
		t.Helper()
		return postedAt(t, row).Add(d).Format(time.RFC3339Nano)
	}
	for _, tt := range []struct {
		path, wallet, asOf, want string
	}{
		{tradingBalancePath, f.btc, at(trading[0], -time.Millisecond), "[BTC@0 0/0/0/0]"},
		{tradingBalancePath, f.btc, at(trading[0], 0), "[BTC@1 2/2/0/0]"},
		{tradingBalancePath, f.btc, at(trading[1], 0), "[BTC@2 1.5/2/0.5/0]"},
		{tradingBalancePath, f.btc, at(trading[2], time.Hour), "[BTC@3 1.5/1.5/0/0]"},
		{custodyBalancePath, target, at(trading[1], 0), "[btc-btc@0 0/0/0/0]"},
		{custodyBalancePath, target, at(custody[0], 0), "[btc-btc@1 0.5/0.5/0/0]"},
	} {
		if got := balanceAsOf(t, tt.path, tt.wallet, tt.asOf); fmt.Sprint(got) != tt.want {
			t.Errorf("%s %s as of %s = %v, want %s", tt.path, tt.wallet, tt.asOf, got, tt.want)
		}
	}

	// A company sees only its own wallets; every caller of the company reads them.
	for _, c := range []struct{ path, wallet, body string }{
		{tradingHistoryPath, f.btc, `{"walletId":"` + f.btc + `"}`},
		{custodyHistoryPath, target, `{"walletId":"` + target + `"}`},
		{tradingBalancePath, f.btc, `{"walletId":"` + f.btc + `","asOf":"2026-01-01T00:00:00Z"}`},
		{custodyBalancePath, target, `{"walletId":"` + target + `","asOf":"2026-01-01T00:00:00Z"}`},
	} {
		wantError(t, do(t, newClient(demo.CompanyZACME, viewer), http.MethodPost, c.path, []byte(c.body)), http.StatusNotFound, "ER-102")
		for _, role := range []string{company, viewer, maker, checker} {
			if r := do(t, newClient(demo.CompanyZTEST, role), http.MethodPost, c.path, []byte(c.body)); r.status != http.StatusOK {
				t.Errorf("%s by ZTEST's %q: %d %s, want 200", c.path, role, r.status, r.body)
			}
		}
	}
	wantError(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, custodyBalancePath,
		mustJSON(t, map[string]any{"walletId": target, "asOf": "yesterday"})), http.StatusBadRequest, "ER-108")
	transitReconciled(t)
	custodyReconciled(t)
}
