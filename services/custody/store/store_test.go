package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/store"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	st := store.New(testdb.New(t))
	for range 2 { // creating the indexes again is harmless
		if err := st.EnsureIndexes(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func wallet(t *testing.T, company, id, currencyID, balance string) custody.Wallet {
	t.Helper()
	w, err := custody.Open(custody.Opening{ID: id, Name: "Wallet " + id, CompanyID: company, CreatedBy: "maker@" + company,
		CurrencyID: currencyID, At: time.Date(2024, 2, 3, 4, 5, 6, 789_000_000, time.UTC), Balance: custody.Amounts{Available: balance, Ledger: balance}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestPutWalletRoundTrip(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-0000000001", "eth-eth", "12.5")
	w.OwnerID, w.RegisteredComplianceKey = "BNF-ZT-1", true
	for range 2 { // idempotent
		if err := st.PutWallet(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Wallet(ctx, "ZT", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("Wallet() mismatch (-want +got):\n%s", diff)
	}
	// The balance is custody's journal's: one deposit however often the wallet is put.
	acc, err := st.Journal().Accounts(ctx, w.ID)
	if err != nil || acc["eth-eth"].Ledger().String() != "12.5" {
		t.Errorf("journal account of %s = %v, %v; want 12.5 deposited once", w.ID, acc, err)
	}
	if r, err := st.Journal().Reconcile(ctx); err != nil || !r.Clean() || r.Postings != 2 {
		t.Errorf("custody's journal: %+v, %v; want a clean deposit (2 postings)", r, err)
	}
	for _, tt := range []struct{ company, id string }{{"OTHER", w.ID}, {"ZT", "ZT-NOBENF-0000000009"}} {
		if _, err := st.Wallet(ctx, tt.company, tt.id); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("Wallet(%s, %s): err = %v, want ErrNotFound", tt.company, tt.id, err)
		}
	}
}

func TestWritesRefuseInconsistentBalances(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-0000000001", "btc-btc", "1")
	w.AssetBalances[0].AvailableUnitBalance = "99"
	if err := st.PutWallet(ctx, w); err == nil {
		t.Error("PutWallet() with disagreeing units succeeded")
	}
	if err := st.InsertWallet(ctx, w); err == nil {
		t.Error("InsertWallet() with disagreeing units succeeded")
	}
	if _, err := st.Wallet(ctx, "ZT", w.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("the refused wallet was written: err = %v", err)
	}
}

func TestInsertWallet(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-0000000001", "btc-btc", "")
	if err := st.InsertWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	again := w
	again.Name = "Other"
	if err := st.InsertWallet(ctx, again); !errors.Is(err, apperr.ErrExists) {
		t.Errorf("second InsertWallet(): err = %v, want ErrExists", err)
	}
	got, err := st.Wallet(ctx, "ZT", w.ID)
	if err != nil || got.Name != w.Name {
		t.Errorf("after the duplicate insert Wallet() = %+v, %v; want the first wallet", got, err)
	}
}

func TestListByCompany(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	for _, w := range []custody.Wallet{
		wallet(t, "ZT", "ZT-NOBENF-C", "xlm-xlm", "250"),
		wallet(t, "ZA", "ZA-NOBENF-A", "btc-btc", "1"),
		wallet(t, "ZT", "ZT-NOBENF-A", "btc-btc", "1.25"),
		wallet(t, "ZT", "ZT-NOBENF-B", "eth-eth", "12.5"),
	} {
		if err := st.PutWallet(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		company string
		want    []string
	}{
		{"ZT", []string{"ZT-NOBENF-A", "ZT-NOBENF-B", "ZT-NOBENF-C"}},
		{"ZA", []string{"ZA-NOBENF-A"}},
		{"NONE", []string{}},
	}
	for _, tt := range tests {
		got, err := st.ListByCompany(ctx, tt.company)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, w := range got {
			ids = append(ids, w.ID)
		}
		if diff := cmp.Diff(tt.want, ids); diff != "" {
			t.Errorf("ListByCompany(%s) ids mismatch (-want +got):\n%s", tt.company, diff)
		}
	}
}

func TestRenameAndDeactivateGuards(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-0000000001", "btc-btc", "1")
	if err := st.InsertWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	renamed, err := st.Rename(ctx, "ZT", w.ID, 1, "SERV-REQ-R", "Renamed")
	if err != nil {
		t.Fatal(err)
	}
	if renamed.Name != "Renamed" || renamed.Version != 2 || renamed.LastRequestID != "SERV-REQ-R" || !renamed.UpdatedAt.After(w.UpdatedAt) {
		t.Errorf("Rename() = %+v, want name Renamed at version 2 by SERV-REQ-R", renamed)
	}
	conflicts := []struct {
		name    string
		company string
		version int64
	}{
		{"stale version", "ZT", 1},
		{"other company", "OTHER", 2},
	}
	for _, c := range conflicts {
		if _, err := st.Rename(ctx, c.company, w.ID, c.version, "SERV-REQ-X", "X"); !errors.Is(err, apperr.ErrConflict) {
			t.Errorf("Rename(%s): err = %v, want ErrConflict", c.name, err)
		}
		if _, err := st.Deactivate(ctx, c.company, w.ID, c.version, "SERV-REQ-X"); !errors.Is(err, apperr.ErrConflict) {
			t.Errorf("Deactivate(%s): err = %v, want ErrConflict", c.name, err)
		}
	}
	off, err := st.Deactivate(ctx, "ZT", w.ID, 2, "SERV-REQ-D")
	if err != nil {
		t.Fatal(err)
	}
	if off.Status != custody.StatusDeactivated || off.Valid || off.Version != 3 || off.Name != "Renamed" {
		t.Errorf("Deactivate() = %+v, want DEACTIVATED, not valid, version 3", off)
	}
	if _, err := st.Rename(ctx, "ZT", w.ID, 3, "SERV-REQ-Y", "Y"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("Rename() of a deactivated wallet: err = %v, want ErrConflict", err)
	}
	if _, err := st.Deactivate(ctx, "ZT", w.ID, 3, "SERV-REQ-Y"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("Deactivate() of a deactivated wallet: err = %v, want ErrConflict", err)
	}
}

func TestConcurrentRenamesOneWins(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet(t, "ZT", "ZT-NOBENF-0000000001", "btc-btc", "1")
	if err := st.InsertWallet(ctx, w); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.Rename(ctx, "ZT", w.ID, 1, fmt.Sprintf("SERV-REQ-%d", i), fmt.Sprintf("Name %d", i))
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, apperr.ErrConflict):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := st.Wallet(ctx, "ZT", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wins.Load() != 1 || got.Version != 2 {
		t.Errorf("%d renames won, version %d; want exactly one winner and version 2", wins.Load(), got.Version)
	}
}
