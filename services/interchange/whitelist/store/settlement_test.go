package store_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/internal/page"
)

func settlement(t *testing.T, key ed25519.PrivateKey, company, venue, currencyID string, minute int) address.Settlement {
	t.Helper()
	a, err := address.NewSettlement(address.Party{ID: company, Name: company + " Ltd"}, venue, currencyID, key,
		base.Add(time.Duration(minute)*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestInsertSettlementKeepsTheFirstAddress(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := st.Settlement(ctx, "ZTEST", "BYBIT", "btc-btc"); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("Settlement() before any insert: err = %v, want ErrNotFound", err)
	}
	const racers = 8
	got := make([]address.Settlement, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() { got[i], errs[i] = st.InsertSettlement(ctx, settlement(t, key, "ZTEST", "BYBIT", "btc-btc", i)) })
	}
	wg.Wait()
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racing insert %d: %v", i, errs[i])
		}
		if diff := cmp.Diff(got[0], got[i]); diff != "" {
			t.Errorf("racing insert %d answered another address (-first +this):\n%s", i, diff)
		}
	}
	stored, err := st.Settlement(ctx, "ZTEST", "BYBIT", "btc-btc")
	if err != nil || stored.Address != got[0].Address || stored.Integrity != got[0].Integrity {
		t.Errorf("Settlement() = %+v, %v; want the one kept", stored, err)
	}
	other, err := st.InsertSettlement(ctx, settlement(t, key, "ZTEST", "DERIBIT", "btc-btc", 0))
	if err != nil || other.Address == stored.Address {
		t.Errorf("another venue got %+v, %v; want its own address", other, err)
	}
}

func TestListSettlements(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	var mine []address.Settlement
	for i, c := range []struct{ venue, currencyID string }{
		{"BYBIT", "btc-btc"}, {"BYBIT", "usdc-eth"}, {"DERIBIT", "usdc-xlm"}, {"DERIBIT", "xrp-xrp"},
	} {
		a, err := st.InsertSettlement(ctx, settlement(t, key, "ZTEST", c.venue, c.currencyID, i))
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, a)
	}
	theirs, err := st.InsertSettlement(ctx, settlement(t, key, "ZACME", "BYBIT", "btc-btc", 9))
	if err != nil {
		t.Fatal(err)
	}
	byAddress := slices.Clone(mine)
	slices.SortFunc(byAddress, func(a, b address.Settlement) int { return strings.Compare(a.Address, b.Address) })
	pg := func(limit, offset int64, by string, desc bool) page.Page {
		return page.Page{Limit: limit, Offset: offset, SortBy: by, Desc: desc}
	}
	tests := []struct {
		name      string
		give      address.SettlementFilter
		want      []address.Settlement
		wantTotal int64
	}{
		{"by id", address.SettlementFilter{Page: pg(10, 0, "id", false)}, byAddress, 4},
		{"by id, descending", address.SettlementFilter{Page: pg(10, 0, "id", true)}, reversed(byAddress), 4},
		{"by createdAt", address.SettlementFilter{Page: pg(10, 0, "createdAt", false)}, mine, 4},
		{"by createdAt, descending, page 2", address.SettlementFilter{Page: pg(3, 3, "createdAt", true)}, mine[:1], 4},
		{"currencies match the code on every ledger", address.SettlementFilter{Currencies: []string{"USDC"}, Page: pg(10, 0, "createdAt", false)}, mine[1:3], 2},
		{"currencies are codes, not ids", address.SettlementFilter{Currencies: []string{"btc-btc"}, Page: pg(10, 0, "id", false)}, []address.Settlement{}, 0},
		{"addresses", address.SettlementFilter{Addresses: []string{mine[3].Address, theirs.Address}, Page: pg(10, 0, "id", false)}, mine[3:], 1},
		{"filters combine with AND", address.SettlementFilter{Addresses: []string{mine[0].Address}, Currencies: []string{"XRP"}, Page: pg(10, 0, "id", false)}, []address.Settlement{}, 0},
		{"offset past the end", address.SettlementFilter{Page: pg(10, 4, "id", false)}, []address.Settlement{}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.give
			f.CompanyID = "ZTEST"
			got, total, err := st.ListSettlements(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.wantTotal {
				t.Errorf("total %d (want %d); items (-want +got):\n%s", total, tt.wantTotal, diff)
			}
		})
	}
}

func reversed[T any](list []T) []T {
	out := slices.Clone(list)
	slices.Reverse(out)
	return out
}
