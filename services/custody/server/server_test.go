package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

func TestListLegacyWallets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	created := time.Date(2026, 1, 15, 9, 0, 0, 120_000_000, time.UTC)
	for _, o := range []custody.Opening{
		{ID: "ZTEST-NOBENF-B", Name: "Treasury ETH", CompanyID: company, CreatedBy: maker, CurrencyID: "eth-eth", Balance: custody.Amounts{Available: "12.5", Ledger: "12.5"}},
		{ID: "ZTEST-NOBENF-A", Name: "Treasury BTC", CompanyID: company, CreatedBy: maker, CurrencyID: "btc-btc", Balance: custody.Amounts{Available: "1", Ledger: "1.25", PendingOut: "0.25"}},
		{ID: "ZACME-NOBENF-A", Name: "Acme BTC", CompanyID: "ZACME", CreatedBy: "api-maker@zacme.example", CurrencyID: "btc-btc"},
	} {
		o.At = created
		w, err := custody.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutWallet(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	want := &custodyv1.ListLegacyWalletsResponse{Wallets: []*custodyv1.LegacyWallet{
		{WalletId: "ZTEST-NOBENF-A", WalletName: "Treasury BTC", WalletCompany: company, CreatedBy: maker, Status: "ACTIVE", Valid: true, Blockchain: "BTC",
			AssetBalances: []*custodyv1.AssetBalance{{Currency: "BTC", UnitCurrency: "SATOSHI",
				AvailableUnitBalance: "100000000", LedgerUnitBalance: "125000000", PendingOutUnitBalance: "25000000", PendingInUnitBalance: "0",
				AvailableBalance: "1", LedgerBalance: "1.25", PendingOutBalance: "0.25", PendingInBalance: "0"}},
			CreatedAt: "2026-01-15T09:00:00.120Z", UpdatedAt: "2026-01-15T09:00:00.120Z"},
		{WalletId: "ZTEST-NOBENF-B", WalletName: "Treasury ETH", WalletCompany: company, CreatedBy: maker, Status: "ACTIVE", Valid: true, Blockchain: "ETH",
			AssetBalances: []*custodyv1.AssetBalance{{Currency: "ETH", UnitCurrency: "WEI",
				AvailableUnitBalance: "12500000000000000000", LedgerUnitBalance: "12500000000000000000", PendingOutUnitBalance: "0", PendingInUnitBalance: "0",
				AvailableBalance: "12.5", LedgerBalance: "12.5", PendingOutBalance: "0", PendingInBalance: "0"}},
			CreatedAt: "2026-01-15T09:00:00.120Z", UpdatedAt: "2026-01-15T09:00:00.120Z"},
	}}
	srv := server.New(f.store, server.Options{})
	callers := []principal.Principal{
		{Kind: principal.KindCompany, CompanyID: company},
		{Kind: principal.KindUser, CompanyID: company, UserEmail: "api-viewer@ztest.example", Roles: []string{principal.RoleViewer}},
	}
	for _, p := range callers {
		got, err := srv.ListLegacyWallets(principal.NewContext(context.Background(), p), &custodyv1.ListLegacyWalletsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("ListLegacyWallets() as %s mismatch (-want +got):\n%s", p.Kind, diff)
		}
	}
	empty, err := srv.ListLegacyWallets(principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindCompany, CompanyID: "ZNONE"}), &custodyv1.ListLegacyWalletsRequest{})
	if err != nil || empty.GetWallets() == nil || len(empty.GetWallets()) != 0 {
		t.Errorf("ListLegacyWallets() of a company without wallets = %v, %v; want an empty list", empty, err)
	}
}

// TestListLegacyWalletsNeedsACompany: the wallets are a company's; a caller acting for none
// has none to list (who may call at all is the policy's: the chain test in app).
func TestListLegacyWalletsNeedsACompany(t *testing.T) {
	t.Parallel()
	srv := server.New(newFixture(t).store, server.Options{})
	for _, ctx := range []context.Context{
		principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: "servicedesk"}),
		principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindUser}),
	} {
		_, err := srv.ListLegacyWallets(ctx, &custodyv1.ListLegacyWalletsRequest{})
		checkErr(t, err, wantErr{codes.PermissionDenied, apperr.CodeForbidden, ""})
	}
	_, err := srv.ListLegacyWallets(context.Background(), &custodyv1.ListLegacyWalletsRequest{})
	checkErr(t, err, wantErr{codes.Unauthenticated, apperr.CodeUnauthorized, ""})
}
