package store_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/trading"
)

func addresses(t *testing.T, w trading.Wallet, at time.Time) []trading.VaultAddress {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	out, err := trading.NewVaultAddresses(w, trading.Party{ID: w.CompanyID}, trading.DefaultCustodian(), key, at)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInsertAddressIsIdempotentPerWalletAndCurrency(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "V", "A", trading.StatusActive, "USDC", "a@x", t0)
	first := addresses(t, w, t0)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		fresh := addresses(t, w, t0)
		go func() {
			defer wg.Done()
			for _, a := range fresh {
				if _, err := st.InsertAddress(ctx, a); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	stored, err := st.WalletAddresses(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || stored[0].CurrencyID != "usdc-eth" || stored[1].CurrencyID != "usdc-xlm" {
		t.Fatalf("WalletAddresses() = %+v, want one usdc-eth and one usdc-xlm address", stored)
	}
	got, err := st.InsertAddress(ctx, first[0])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored[0], got); diff != "" {
		t.Errorf("InsertAddress(again) diff (-stored +got):\n%s", diff)
	}
}

func TestListAddresses(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	btc := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "V", "A", trading.StatusActive, "BTC", "a@x", t0)
	usdc := wallet("ZTEST-TW-AAAAAAAAA2", "ZTEST", "V", "B", trading.StatusActive, "USDC", "a@x", t0)
	acme := wallet("ZACME-TW-AAAAAAAAA1", "ZACME", "V", "C", trading.StatusActive, "BTC", "a@x", t0)
	all := map[string]trading.VaultAddress{}
	for i, w := range []trading.Wallet{btc, usdc, acme} {
		for _, a := range addresses(t, w, t0.Add(time.Duration(i)*time.Second)) {
			stored, err := st.InsertAddress(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			all[stored.CurrencyID+"/"+stored.WalletID] = stored
		}
	}
	btcAddr, eth, xlm := all["btc-btc/"+btc.ID].Address, all["usdc-eth/"+usdc.ID].Address, all["usdc-xlm/"+usdc.ID].Address
	tests := []struct {
		name string
		give trading.AddressFilter
		want []string
	}{
		{"company only, by createdAt", trading.AddressFilter{}, []string{btcAddr, min(eth, xlm), max(eth, xlm)}},
		{"wallet", trading.AddressFilter{WalletIDs: []string{usdc.ID}}, []string{min(eth, xlm), max(eth, xlm)}},
		{"currency code", trading.AddressFilter{Currencies: []string{"USDC"}}, []string{min(eth, xlm), max(eth, xlm)}},
		{"currency id is not a code", trading.AddressFilter{Currencies: []string{"usdc-eth"}}, []string{}},
		{"address", trading.AddressFilter{Addresses: []string{xlm, all["btc-btc/"+acme.ID].Address}}, []string{xlm}},
		{"other company's wallet", trading.AddressFilter{WalletIDs: []string{acme.ID}}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.give
			f.CompanyID, f.Page = "ZTEST", page.Page{Limit: 10, SortBy: "createdAt"}
			got, total, err := st.ListAddresses(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			gotIDs := []string{}
			for _, a := range got {
				gotIDs = append(gotIDs, a.Address)
			}
			if diff := cmp.Diff(tt.want, gotIDs); diff != "" || total != int64(len(tt.want)) {
				t.Errorf("ListAddresses() total %d, diff (-want +got):\n%s", total, diff)
			}
		})
	}
	got, total, err := st.ListAddresses(ctx, trading.AddressFilter{CompanyID: "ZTEST", Page: page.Page{Limit: 1, Offset: 1, SortBy: "id", Desc: true}})
	if err != nil || total != 3 || len(got) != 1 {
		t.Fatalf("ListAddresses(page 2 of 1) = %d items, total %d, %v", len(got), total, err)
	}
}

func TestPrices(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	for _, p := range []trading.Price{{Currency: "BTC", Price: "60000.00"}, {Currency: "BTC", Price: "65000.00"}, {Currency: "XRP", Price: "0.55"}} {
		if err := st.PutPrice(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Prices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["BTC"].Price != "65000.00" || got["BTC"].FiatCurrency != "USD" || got["XRP"].Price != "0.55" {
		t.Errorf("Prices() = %+v, want BTC 65000.00 and XRP 0.55 in USD", got)
	}
	for _, tt := range []struct {
		give     trading.Price
		wantCode string
	}{
		{trading.Price{Currency: "ETH", Price: "1e3"}, apperr.CodeFormat},
		{trading.Price{Currency: "ETH", Price: "1", FiatCurrency: "EUR"}, apperr.CodeCurrency},
	} {
		var ae *apperr.Error
		if err := st.PutPrice(ctx, tt.give); !errors.As(err, &ae) || ae.Code != tt.wantCode {
			t.Errorf("PutPrice(%+v) = %v, want %s", tt.give, err, tt.wantCode)
		}
	}
	if got, _ := st.Prices(ctx); len(got) != 2 {
		t.Errorf("refused prices were stored: %+v", got)
	}
}
