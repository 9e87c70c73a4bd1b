package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/whitelist/store"
	"github.com/zcustody/suite/services/internal/ledger"
	"github.com/zcustody/suite/services/internal/page"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Twice: a restart must find its indexes in place.
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func generate(t *testing.T, chain string) string {
	t.Helper()
	a, err := ledger.Generate(chain)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func whitelisted(company, chain, addr string, minute int) address.Whitelisted {
	at := base.Add(time.Duration(minute) * time.Minute).Add(123 * time.Millisecond)
	return address.Whitelisted{ID: address.NewID(), CompanyID: company, Address: addr, Blockchain: chain,
		Purposes: []string{address.PurposeIncoming}, VaspID: "VASP-001", VaspName: "Global", Status: address.StatusActive,
		CreatedBy: "maker@example", CreatedAt: at, UpdatedAt: at, Version: 1, RequestID: "SERV-REQ-" + strings.Repeat("A", 10)}
}

func insert(t *testing.T, st *store.Store, w address.Whitelisted) address.Whitelisted {
	t.Helper()
	got, err := st.InsertWhitelisted(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWhitelistedIsUniqueAmongActive(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	eth := "0x4332a9b24fcCe803a4082F8764e8C40E1A4E4560"
	first := insert(t, st, whitelisted("ZTEST", "ETH", eth, 0))
	if again := insert(t, st, first); again.ID != first.ID || again.RequestID != first.RequestID {
		t.Errorf("inserting the same id again = %+v, want the stored address", again)
	}
	_, err := st.InsertWhitelisted(ctx, whitelisted("ZTEST", "ETH", strings.ToLower(eth), 1))
	if !errors.Is(err, apperr.ErrExists) {
		t.Fatalf("the same ETH address in lower case: err = %v, want ErrExists", err)
	}
	insert(t, st, whitelisted("ZACME", "ETH", eth, 1)) // another company may hold it
	active, err := st.ActiveWhitelisted(ctx, "ZTEST", "ETH", strings.ToLower(eth))
	if err != nil || active.ID != first.ID {
		t.Fatalf("ActiveWhitelisted(lower case) = %+v, %v; want the first address", active, err)
	}
	if _, err := st.DeactivateWhitelisted(ctx, first, "SERV-REQ-DEACTIVATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ActiveWhitelisted(ctx, "ZTEST", "ETH", eth); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("ActiveWhitelisted after deactivation: err = %v, want ErrNotFound", err)
	}
	second := insert(t, st, whitelisted("ZTEST", "ETH", eth, 2)) // whitelisted again once deactivated
	if second.ID == first.ID {
		t.Error("the second whitelisting reused the first id")
	}
	if _, err := st.Whitelisted(ctx, "ZACME", second.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another company reads the address: err = %v, want ErrNotFound", err)
	}
}

func TestDeactivateWhitelistedIsGuarded(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := insert(t, st, whitelisted("ZTEST", "XRP", generate(t, ledger.XRP), 0))
	stale := w
	stale.Version = 7
	if _, err := st.DeactivateWhitelisted(ctx, stale, "SERV-REQ-1"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("stale version: err = %v, want ErrConflict", err)
	}
	const racers = 10
	var wg sync.WaitGroup
	results := make([]error, racers)
	for i := range racers {
		wg.Go(func() { _, results[i] = st.DeactivateWhitelisted(ctx, w, "SERV-REQ-RACE") })
	}
	wg.Wait()
	if won := slices.IndexFunc(results, func(err error) bool { return err == nil }); won < 0 ||
		slices.ContainsFunc(results[won+1:], func(err error) bool { return err == nil }) {
		t.Fatalf("racing deactivations: %v, want exactly one winner", results)
	}
	got, err := st.Whitelisted(ctx, "ZTEST", w.ID)
	if err != nil || got.Status != address.StatusDeactivated || got.Version != 2 || got.DeactivatedBy != "SERV-REQ-RACE" {
		t.Errorf("after deactivation: %+v, %v", got, err)
	}
}

func addresses(list []address.Whitelisted) []string {
	out := make([]string, 0, len(list))
	for _, w := range list {
		out = append(out, w.Address)
	}
	return out
}

func TestSearchWhitelisted(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	eth := "0xAed223b18BB1edFCe4Eeadc7F66Cb337f703Fb85"
	btc := "bc1qkh7auhtp7707ecypag4rrgvkhv6hfut6stv4jx"
	xlm := "GBJEED3HPD6DPBTUBNN67MQCQV2GXWPT5FUWR6H4F5MIWAMVFRDHR3AD"
	xrp := "rNGdcFVy2GSfuQgwsgsWF7vfXbnud6Xi7K"
	for i, w := range []address.Whitelisted{whitelisted("ZTEST", "ETH", eth, 3), whitelisted("ZTEST", "BTC", btc, 1),
		whitelisted("ZTEST", "XLM", xlm, 2), whitelisted("ZTEST", "XRP", xrp, 4), whitelisted("ZACME", "ETH", eth, 0)} {
		if i == 2 {
			w.Status = address.StatusDeactivated
		}
		insert(t, st, w)
	}
	all := page.Page{Limit: 10, SortBy: "createdAt"}
	tests := []struct {
		name      string
		give      address.Filter
		want      []string
		wantTotal int64
	}{
		{"everything, oldest first", address.Filter{}, []string{btc, xlm, eth, xrp}, 4},
		{"addresses exact", address.Filter{Addresses: []string{eth, strings.ToUpper(btc), xrp}}, []string{eth, xrp}, 2},
		{"addresses are case-sensitive", address.Filter{Addresses: []string{strings.ToLower(eth)}}, []string{}, 0},
		{"blockchains", address.Filter{Blockchains: []string{"BTC", "XRP"}}, []string{btc, xrp}, 2},
		{"blockchainIds", address.Filter{BlockchainIDs: []string{"eth-eth", "xlm-xlm"}}, []string{xlm, eth}, 2},
		{"statuses ACTIVE", address.Filter{Statuses: []string{address.StatusActive}}, []string{btc, eth, xrp}, 3},
		{"statuses DEACTIVATED", address.Filter{Statuses: []string{address.StatusDeactivated}}, []string{xlm}, 1},
		{"fragment, any case", address.Filter{Fragment: "ED223B18bb1"}, []string{eth}, 1},
		{"fragment in the middle", address.Filter{Fragment: "hpd6dp"}, []string{xlm}, 1},
		{"fragment is literal, not a pattern", address.Filter{Fragment: "0x.ed"}, []string{}, 0},
		{"fragment dot matches nothing literal", address.Filter{Fragment: "."}, []string{}, 0},
		{"fragment common to several", address.Filter{Fragment: "q"}, []string{btc, xlm, xrp}, 3},
		{"filters combine with AND", address.Filter{Blockchains: []string{"ETH", "XLM"}, Statuses: []string{address.StatusActive}, Fragment: "0x"}, []string{eth}, 1},
		{"page 2 of size 3", address.Filter{Page: page.Page{Limit: 3, Offset: 3}}, []string{xrp}, 4},
		{"limit 1", address.Filter{Page: page.Page{Limit: 1, Offset: 1}}, []string{xlm}, 4},
		{"offset past the end", address.Filter{Page: page.Page{Limit: 10, Offset: 4}}, []string{}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.give
			f.CompanyID = "ZTEST"
			if f.Page.Limit == 0 {
				f.Page = all
			}
			got, total, err := st.SearchWhitelisted(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, addresses(got)); diff != "" || total != tt.wantTotal {
				t.Errorf("total %d (want %d); addresses (-want +got):\n%s", total, tt.wantTotal, diff)
			}
		})
	}
	other, total, err := st.SearchWhitelisted(ctx, address.Filter{CompanyID: "ZACME", Page: all})
	if err != nil || total != 1 || other[0].CompanyID != "ZACME" {
		t.Errorf("ZACME's search = %+v, %d, %v; want its one address", other, total, err)
	}
}
