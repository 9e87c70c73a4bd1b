package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/internal/ledger"
)

func zeroBalance(t *testing.T, currencyID string) custody.AssetBalance {
	t.Helper()
	cur, _ := ledger.ByID(currencyID)
	b, err := custody.NewAssetBalance(cur, custody.Amounts{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAddTrustlineGuards(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-XLM", "xlm-xlm", "250")
	if err := st.PutWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	got, err := st.AddTrustline(ctx, "ZT", w.ID, 1, zeroBalance(t, "usdc-xlm"))
	if err != nil {
		t.Fatal(err)
	}
	want := w
	want.AssetBalances = append(want.AssetBalances, zeroBalance(t, "usdc-xlm"))
	want.Subentries, want.Version, want.UpdatedAt = 1, 2, got.UpdatedAt
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AddTrustline() mismatch (-want +got):\n%s", diff)
	}
	conflicts := []struct {
		name, company, currencyID string
		version                   int64
	}{
		{"stale version", "ZT", "eurc-xlm", 1},
		{"other company", "OTHER", "eurc-xlm", 2},
	}
	for _, c := range conflicts {
		if _, err := st.AddTrustline(ctx, c.company, w.ID, c.version, zeroBalance(t, c.currencyID)); !errors.Is(err, apperr.ErrConflict) {
			t.Errorf("AddTrustline(%s): err = %v, want ErrConflict", c.name, err)
		}
	}
	bad := zeroBalance(t, "eurc-xlm")
	bad.AvailableUnitBalance = "1"
	if _, err := st.AddTrustline(ctx, "ZT", w.ID, 2, bad); err == nil || errors.Is(err, apperr.ErrConflict) {
		t.Errorf("AddTrustline() with disagreeing units: err = %v, want a refusal", err)
	}
	if off, _ := st.Deactivate(ctx, "ZT", w.ID, 2, "SERV-REQ-D"); off.Status != custody.StatusDeactivated {
		t.Fatalf("Deactivate() = %+v", off)
	}
	if _, err := st.AddTrustline(ctx, "ZT", w.ID, 3, zeroBalance(t, "eurc-xlm")); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("AddTrustline() on a deactivated wallet: err = %v, want ErrConflict", err)
	}
}

func TestConcurrentTrustlinesOneWins(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-XLM", "xlm-xlm", "250")
	if err := st.PutWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := st.AddTrustline(ctx, "ZT", w.ID, 1, zeroBalance(t, "usdc-xlm"))
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, apperr.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := st.Wallet(ctx, "ZT", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wins.Load() != 1 || got.Subentries != 1 || len(got.AssetBalances) != 2 || got.Version != 2 {
		t.Errorf("%d winners, wallet %+v; want one trustline, one subentry, version 2", wins.Load(), got)
	}
}

func pendingWallet(t *testing.T, company, id, intentID string) custody.Wallet {
	t.Helper()
	w, err := custody.Pending(wallet(t, company, id, "eth-eth", ""), intentID)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestIntentIDNamesOneWallet(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	a := pendingWallet(t, "ZT", "ZT-NOBENF-A", "9b1d3c1e-2f0a-4f55-8f0e-1c2d3e4f5a6b")
	if err := st.InsertWallet(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := st.Wallet(ctx, "ZT", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("pending wallet round trip mismatch (-want +got):\n%s", diff)
	}
	b := pendingWallet(t, "ZA", "ZA-NOBENF-B", a.Intent.ID)
	if err := st.InsertWallet(ctx, b); !errors.Is(err, apperr.ErrExists) {
		t.Errorf("InsertWallet() reusing intent %s: err = %v, want ErrExists", a.Intent.ID, err)
	}
	for _, id := range []string{"ZT-NOBENF-C", "ZT-NOBENF-D"} { // wallets without an intent
		if err := st.InsertWallet(ctx, wallet(t, "ZT", id, "btc-btc", "1")); err != nil {
			t.Errorf("InsertWallet(%s) without intent: %v", id, err)
		}
	}
}

func TestDecideOnce(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := pendingWallet(t, "ZT", "ZT-NOBENF-P", "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a")
	if err := st.InsertWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 4, 5, 6, 7, 8, 9_000_000, time.UTC)
	d := custody.Decision{Type: custody.ActionReject, AuthorID: "a1", AuthorEmail: "checker@zt", At: at}
	stale := w
	stale.Version = 7
	if _, err := st.Decide(ctx, stale, d); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("Decide() at a stale version: err = %v, want ErrConflict", err)
	}
	got, err := st.Decide(ctx, w, d)
	if err != nil {
		t.Fatal(err)
	}
	want := w
	want.Status, want.Valid, want.Version, want.UpdatedAt = custody.StatusRejected, false, 2, at
	want.Intent = &custody.Intent{ID: w.Intent.ID, ProposalSignature: w.Intent.ProposalSignature, CreatedAt: w.Intent.CreatedAt, Decision: &d}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
	}
	again := got
	again.Status = custody.StatusPendingAuth // a replay that believes the wallet still pending
	if _, err := st.Decide(ctx, again, custody.Decision{Type: custody.ActionApprove, At: at}); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("second Decide(): err = %v, want ErrConflict", err)
	}
}

func TestConcurrentDecisionsOneWins(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := pendingWallet(t, "ZT", "ZT-NOBENF-P", "3c2b1a0f-8e7d-4c6b-9a59-4e3d2c1b0a9f")
	if err := st.InsertWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			typ := custody.ActionApprove
			if i%2 == 1 {
				typ = custody.ActionReject
			}
			_, err := st.Decide(ctx, w, custody.Decision{Type: typ, AuthorID: "a", At: time.Now()})
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, apperr.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := st.Wallet(ctx, "ZT", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wins.Load() != 1 || got.Version != 2 || got.Intent.Decision == nil {
		t.Errorf("%d decisions won, wallet %+v; want exactly one at version 2", wins.Load(), got)
	}
}
