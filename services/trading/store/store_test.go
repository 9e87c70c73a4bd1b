package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEnsureIndexesIsRepeatable(t *testing.T) {
	t.Parallel()
	st := newStore(t) // first run
	for range 2 {     // a restart
		if err := st.EnsureIndexes(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func wallet(id, company, venue, name, status, currency, by string, created time.Time) trading.Wallet {
	return trading.Wallet{ID: id, CompanyID: company, VenueID: venue, Name: name, Status: status, Currency: currency,
		Balances: []trading.Balance{trading.ZeroBalance(currency)}, CustomProperties: `{}`, CreatedBy: by,
		CreatedAt: created, UpdatedAt: created, Version: 1, RequestID: "R-" + id}
}

func insert(t *testing.T, st *store.Store, ws ...trading.Wallet) {
	t.Helper()
	for _, w := range ws {
		if _, err := st.InsertWallet(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(ws []trading.Wallet) []string {
	out := []string{}
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

func TestWalletRoundTrip(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0)
	w.CustomProperties = `{"userUuid":"u","accountUuid":"a","nested":{"z":[1,2]}}`
	insert(t, st, w)
	got, err := st.Wallet(ctx, "ZTEST", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("Wallet() diff (-want +got):\n%s", diff)
	}
	if _, err := st.Wallet(ctx, "ZACME", w.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another company's Wallet(): err = %v, want ErrNotFound", err)
	}
	again := w
	again.Name, again.RequestID = "Other", "R-2"
	stored, err := st.InsertWallet(ctx, again)
	if err != nil || stored.Name != "Alpha" || stored.RequestID != w.RequestID {
		t.Errorf("InsertWallet(taken id) = %+v, %v; want the wallet stored first", stored, err)
	}
}

func TestDeactivateIsGuardedByStatusAndVersion(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0)
	insert(t, st, w)
	stale := w
	stale.Version = 7
	if _, err := st.Deactivate(ctx, stale, "R-9"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("Deactivate(stale version) = %v, want ErrConflict", err)
	}
	other := w
	other.CompanyID = "ZACME"
	if _, err := st.Deactivate(ctx, other, "R-9"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("Deactivate(other company) = %v, want ErrConflict", err)
	}
	got, err := st.Deactivate(ctx, w, "R-9")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != trading.StatusDeactivated || got.Version != 2 || got.DeactivatedBy != "R-9" || !got.UpdatedAt.After(w.UpdatedAt) {
		t.Errorf("Deactivate() = %+v, want DEACTIVATED by R-9 at version 2", got)
	}
	if _, err := st.Deactivate(ctx, got, "R-10"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("Deactivate(deactivated) = %v, want ErrConflict", err)
	}
}

func TestSearchWalletsFilters(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	insert(t, st,
		wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0),
		wallet("ZTEST-TW-AAAAAAAAA2", "ZTEST", "DERIBIT", "Beta", trading.StatusDeactivated, "ETH", "b@x", t0.Add(time.Second)),
		wallet("ZTEST-TW-AAAAAAAAA3", "ZTEST", "BYBIT", "Gamma", trading.StatusActive, "ETH", "a@x", t0.Add(2*time.Second)),
		wallet("ZACME-TW-AAAAAAAAA1", "ZACME", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0),
	)
	tests := []struct {
		name string
		give trading.WalletFilter
		want []string
	}{
		{"no filter", trading.WalletFilter{}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA2", "ZTEST-TW-AAAAAAAAA3"}},
		{"venue", trading.WalletFilter{VenueIDs: []string{"BYBIT"}}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA3"}},
		{"venue and currency", trading.WalletFilter{VenueIDs: []string{"BYBIT"}, Currencies: []string{"ETH"}}, []string{"ZTEST-TW-AAAAAAAAA3"}},
		{"status", trading.WalletFilter{Statuses: []string{trading.StatusDeactivated}}, []string{"ZTEST-TW-AAAAAAAAA2"}},
		{"names or-ed", trading.WalletFilter{Names: []string{"Alpha", "Beta"}}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA2"}},
		{"names exact", trading.WalletFilter{Names: []string{"alpha", "Alph"}}, []string{}},
		{"ids", trading.WalletFilter{IDs: []string{"ZTEST-TW-AAAAAAAAA2", "ZACME-TW-AAAAAAAAA1"}}, []string{"ZTEST-TW-AAAAAAAAA2"}},
		{"createdBy", trading.WalletFilter{CreatedBy: []string{"a@x"}}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA3"}},
		{"own company", trading.WalletFilter{CompanyIDs: []string{"ZTEST", "ZACME"}}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA2", "ZTEST-TW-AAAAAAAAA3"}},
		{"other company only", trading.WalletFilter{CompanyIDs: []string{"ZACME"}}, []string{}},
		{"no match across filters", trading.WalletFilter{Statuses: []string{trading.StatusDeactivated}, Currencies: []string{"BTC"}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.give
			f.CompanyID, f.Page = "ZTEST", page.Page{Limit: 10, SortBy: "id"}
			got, total, err := st.SearchWallets(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" || total != int64(len(tt.want)) {
				t.Errorf("SearchWallets() total %d, diff (-want +got):\n%s", total, diff)
			}
		})
	}
}

func TestSearchWalletsPagesAndSorts(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	insert(t, st,
		wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "V", "A", trading.StatusActive, "BTC", "a@x", t0.Add(2*time.Second)),
		wallet("ZTEST-TW-AAAAAAAAA2", "ZTEST", "V", "B", trading.StatusActive, "BTC", "a@x", t0),
		wallet("ZTEST-TW-AAAAAAAAA3", "ZTEST", "V", "C", trading.StatusActive, "BTC", "a@x", t0.Add(time.Second)),
		wallet("ZTEST-TW-AAAAAAAAA4", "ZTEST", "V", "D", trading.StatusActive, "BTC", "a@x", t0), // same createdAt as 2
	)
	tests := []struct {
		name string
		give page.Page
		want []string
	}{
		{"id asc", page.Page{Limit: 10, SortBy: "id"}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA2", "ZTEST-TW-AAAAAAAAA3", "ZTEST-TW-AAAAAAAAA4"}},
		{"id desc", page.Page{Limit: 10, SortBy: "id", Desc: true}, []string{"ZTEST-TW-AAAAAAAAA4", "ZTEST-TW-AAAAAAAAA3", "ZTEST-TW-AAAAAAAAA2", "ZTEST-TW-AAAAAAAAA1"}},
		{"createdAt asc, ties by id", page.Page{Limit: 10, SortBy: "createdAt"}, []string{"ZTEST-TW-AAAAAAAAA2", "ZTEST-TW-AAAAAAAAA4", "ZTEST-TW-AAAAAAAAA3", "ZTEST-TW-AAAAAAAAA1"}},
		{"createdAt desc, ties by id", page.Page{Limit: 10, SortBy: "createdAt", Desc: true}, []string{"ZTEST-TW-AAAAAAAAA1", "ZTEST-TW-AAAAAAAAA3", "ZTEST-TW-AAAAAAAAA4", "ZTEST-TW-AAAAAAAAA2"}},
		{"updatedAt", page.Page{Limit: 10, SortBy: "updatedAt"}, []string{"ZTEST-TW-AAAAAAAAA2", "ZTEST-TW-AAAAAAAAA4", "ZTEST-TW-AAAAAAAAA3", "ZTEST-TW-AAAAAAAAA1"}},
		{"limit 1", page.Page{Limit: 1, SortBy: "id"}, []string{"ZTEST-TW-AAAAAAAAA1"}},
		{"second page", page.Page{Limit: 2, Offset: 2, SortBy: "createdAt"}, []string{"ZTEST-TW-AAAAAAAAA3", "ZTEST-TW-AAAAAAAAA1"}},
		{"last partial page", page.Page{Limit: 3, Offset: 3, SortBy: "id"}, []string{"ZTEST-TW-AAAAAAAAA4"}},
		{"offset past the end", page.Page{Limit: 10, Offset: 4, SortBy: "id"}, []string{}},
		{"far past the end", page.Page{Limit: 1024, Offset: 1 << 30, SortBy: "id"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := st.SearchWallets(context.Background(), trading.WalletFilter{CompanyID: "ZTEST", Page: tt.give})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" || total != 4 {
				t.Errorf("SearchWallets() total %d (want 4), diff (-want +got):\n%s", total, diff)
			}
		})
	}
}
