package journalcost_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
	"github.com/zcustody/suite/deploy/local/embeddb"
	"github.com/zcustody/suite/platform/mongodb"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

func TestPayInIsOneHoldIntoTheClearingAccount(t *testing.T) {
	t.Parallel()
	payers := []string{journalcost.OneWalletID(), journalcost.OneWalletID(), journalcost.ManyWalletID(7)}
	req := journalcost.PayIn("bench-20261122T101010-0a1b2c3d-many-4", payers, 2)
	if got, want := req.GetEntryId(), "stl:bench-20261122T101010-0a1b2c3d-many-4:payin:1"; got != want {
		t.Errorf("entry id = %q, want %q (interchange's payInID)", got, want)
	}
	if req.GetKind() != tradingv1.EntryKind_ENTRY_KIND_HOLD || req.GetCode() != "settlement.payin" {
		t.Errorf("kind %s, code %q; want a hold coded settlement.payin", req.GetKind(), req.GetCode())
	}
	legs := req.GetLegs()
	if len(legs) != len(payers)+1 {
		t.Fatalf("%d legs, want one per payer and the clearing credit", len(legs))
	}
	debits := 0
	for i, l := range legs[:len(payers)] {
		if l.GetAccount() != payers[i] || l.GetCompanyId() != data.Company || l.GetSide() != tradingv1.LegSide_LEG_SIDE_DEBIT {
			t.Errorf("leg %d = %v, want a debit of %s", i, l, payers[i])
		}
		n, _ := strconv.Atoi(l.GetAmount())
		debits += n
	}
	clearing := legs[len(payers)]
	if !trading.IsSystemAccount(clearing.GetAccount()) || !strings.HasPrefix(clearing.GetAccount(), trading.ClearingPrefix) ||
		clearing.GetCompanyId() != "" || clearing.GetSide() != tradingv1.LegSide_LEG_SIDE_CREDIT {
		t.Errorf("last leg = %v, want a credit of a clearing account", clearing)
	}
	if clearing.GetAmount() != strconv.Itoa(debits) {
		t.Errorf("clearing credit %s, want the debits' total %d", clearing.GetAmount(), debits)
	}
}

func TestCommandsListLargestFirst(t *testing.T) {
	t.Parallel()
	c := journalcost.Commands{"find wallets": {N: 2}, "find journal_entries": {N: 1}, "update wallets": {N: 1000},
		"update journal_entries": {N: 2}, "insert journal_entries": {N: 3}, "getMore": {N: 1}}
	if got, want := c.String(), "update 1002, find 3, insert 3, getMore 1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := c.Keys(), []string{"update wallets", "insert journal_entries", "find wallets", "update journal_entries",
		"find journal_entries", "getMore"}; !slices.Equal(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, 0, len(v))
		for _, n := range v {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	for _, tt := range []struct {
		give []time.Duration
		want time.Duration
	}{{nil, 0}, {ms(7), 7 * time.Millisecond}, {ms(9, 1, 5), 5 * time.Millisecond}, {ms(4, 1, 9, 2), 3 * time.Millisecond}} {
		if got := journalcost.Median(tt.give); got != tt.want {
			t.Errorf("Median(%v) = %s, want %s", tt.give, got, tt.want)
		}
	}
}

// Run on a fresh embedded database with a few legs: every entry applies once, the balances
// are what the entries say, and the baseline's updates leave the ledger reconciling.
func TestRunRecordsEveryEntryOnce(t *testing.T) {
	ctx := context.Background()
	db, err := embeddb.Start(ctx, embeddb.Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	const n = 3
	res, err := journalcost.Run(ctx, db.URI(), journalcost.Options{Legs: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.OneLeg.Runs) != journalcost.Reps || len(res.OneWallet.Runs) != journalcost.Reps || len(res.Wallets.Runs) == 0 ||
		len(res.Updates.Runs) != len(res.Wallets.Runs) || len(res.UpdateWrites) != len(res.Wallets.Runs) || len(res.Funding.Runs) != 1 {
		t.Errorf("runs: %d one leg, %d on one wallet, %d on %d wallets, %d updates; want %d, %d, ≥ 1 and as many",
			len(res.OneLeg.Runs), len(res.OneWallet.Runs), len(res.Wallets.Runs), n, len(res.Updates.Runs), journalcost.Reps, journalcost.Reps)
	}
	// One update per account an entry touches, and one to mark the entry applied: the N legs
	// on one wallet are one update of it.
	for _, tt := range []struct {
		name string
		m    journalcost.Measurement
		want int
	}{
		{"PAY_IN 1 leg", res.OneLeg, 1 + 1 + 1},
		{"PAY_IN N legs on one wallet", res.OneWallet, 1 + 1 + 1},
		{"PAY_IN on N wallets", res.Wallets, n + 1 + 1},
		{"N single account updates", res.Updates, n},
	} {
		if got := tt.m.Commands.Count("update"); got != tt.want {
			t.Errorf("%s: %d updates (%s), want %d", tt.name, got, tt.m.Commands, tt.want)
		}
	}
	if got := res.Updates.Commands.Count("find"); got != n {
		t.Errorf("N single account updates: %d finds, want %d", got, n)
	}
	client, err := mongodb.Connect(ctx, db.URI())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(ctx) })
	st := tradingstore.New(client.Database(journalcost.Database))
	// The single wallet was funded with exactly what its holds take (warm-ups included).
	held := strconv.Itoa((journalcost.Reps + 1) * (n + 1))
	checkBalance(ctx, t, st, journalcost.OneWalletID(), trading.Balance{Available: "0", Ledger: held, PendingOut: held})
	// Each of the N wallets holds one share per PAY_IN on N wallets, of the Reps it was funded for.
	left := strconv.Itoa(journalcost.Reps - len(res.Wallets.Runs))
	checkBalance(ctx, t, st, journalcost.ManyWalletID(n-1), trading.Balance{Available: left, Ledger: strconv.Itoa(journalcost.Reps),
		PendingOut: strconv.Itoa(len(res.Wallets.Runs))})
	violations, err := st.Reconcile(ctx)
	if err != nil || len(violations) > 0 {
		t.Errorf("reconcile: %v, %q", err, violations)
	}
	// A second run on the same server starts afresh.
	if _, err := journalcost.Run(ctx, db.URI(), journalcost.Options{Legs: n}); err != nil {
		t.Fatalf("a second run on the same server: %v", err)
	}
	checkBalance(ctx, t, st, journalcost.OneWalletID(), trading.Balance{Available: "0", Ledger: held, PendingOut: held})
}

func checkBalance(ctx context.Context, t *testing.T, st *tradingstore.Store, id string, want trading.Balance) {
	t.Helper()
	w, err := st.Wallet(ctx, data.Company, id)
	if err != nil {
		t.Fatal(err)
	}
	got := w.Balances[0]
	if got.Available != want.Available || got.Ledger != want.Ledger || got.PendingOut != want.PendingOut {
		t.Errorf("%s: available %s, ledger %s, pending out %s; want %s, %s, %s", id, got.Available, got.Ledger, got.PendingOut,
			want.Available, want.Ledger, want.PendingOut)
	}
}
