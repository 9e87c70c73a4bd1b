package server_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

func makerContext() context.Context {
	return userContext(company, maker, principal.RoleMaker)
}

// putXLM stores an ACTIVE XLM wallet of the company holding xlm available.
func (f fixture) putXLM(t *testing.T, id, xlm string) {
	t.Helper()
	w, err := custody.Open(custody.Opening{ID: id, Name: "Stellar", CompanyID: company, CreatedBy: maker, CurrencyID: "xlm-xlm",
		Balance: custody.Amounts{Available: xlm, Ledger: xlm}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.PutWallet(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

func TestActivateTrustline(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putXLM(t, "ZTEST-NOBENF-XLM", "2")
	srv := server.New(f.store, server.Options{})
	zeroUSDC := &custodyv1.AssetBalance{Currency: "USDC", UnitCurrency: "STROOP", AvailableUnitBalance: "0", LedgerUnitBalance: "0",
		PendingOutUnitBalance: "0", PendingInUnitBalance: "0", AvailableBalance: "0", LedgerBalance: "0", PendingOutBalance: "0", PendingInBalance: "0"}
	got, err := srv.ActivateTrustline(makerContext(), &custodyv1.ActivateTrustlineRequest{WalletId: "ZTEST-NOBENF-XLM", CurrencyId: "usdc-xlm"})
	if err != nil {
		t.Fatal(err)
	}
	want := &custodyv1.ActivateTrustlineResponse{WalletId: "ZTEST-NOBENF-XLM", CurrencyId: "usdc-xlm", Status: "ACTIVE", AssetBalance: zeroUSDC, MinimumBalanceXlm: "1.5"}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("ActivateTrustline() mismatch (-want +got):\n%s", diff)
	}
	list, err := srv.ListLegacyWallets(companyContext(company), &custodyv1.ListLegacyWalletsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if balances := list.GetWallets()[0].GetAssetBalances(); len(balances) != 2 || !cmp.Equal(balances[1], zeroUSDC, protocmp.Transform()) {
		t.Errorf("endpoint 14 balances %v, want XLM then the zero USDC entry", balances)
	}
	// The second trustline needs (2 + 1 + 1) × 0.5 = 2 XLM: exactly what the wallet holds.
	second, err := srv.ActivateTrustline(makerContext(), &custodyv1.ActivateTrustlineRequest{WalletId: "ZTEST-NOBENF-XLM", CurrencyId: "eurc-xlm"})
	if err != nil || second.GetMinimumBalanceXlm() != "2" {
		t.Fatalf("second trustline = %v, %v; want minimum balance 2", second, err)
	}
	// Activating an asset the wallet holds is a conflict, whatever the reserve.
	_, err = srv.ActivateTrustline(makerContext(), &custodyv1.ActivateTrustlineRequest{WalletId: "ZTEST-NOBENF-XLM", CurrencyId: "usdc-xlm"})
	checkErr(t, err, wantErr{codes.Aborted, apperr.CodeExists, "currencyId"})
	w, err := f.store.Wallet(context.Background(), company, "ZTEST-NOBENF-XLM")
	if err != nil || w.Subentries != 2 || w.Version != 3 {
		t.Errorf("wallet after two trustlines: %+v, %v; want 2 subentries at version 3", w, err)
	}
}

func TestActivateTrustlineRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putXLM(t, "ZTEST-NOBENF-POOR", "1.4999999")
	f.put(t, company, "ZTEST-NOBENF-BTC", nil)
	f.put(t, "ZACME", "ZACME-NOBENF-XLM", func(w *custody.Wallet) { w.Blockchain = "XLM" })
	srv := server.New(f.store, server.Options{})
	tests := []struct {
		name               string
		ctx                context.Context
		walletID, currency string
		want               wantErr
	}{
		{"unknown wallet", makerContext(), "ZTEST-NOBENF-NONE", "usdc-xlm", wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"other company's wallet", makerContext(), "ZACME-NOBENF-XLM", "usdc-xlm", wantErr{codes.NotFound, "ER-102", "walletId"}},
		{"blank wallet", makerContext(), " ", "usdc-xlm", wantErr{codes.InvalidArgument, "ER-101", "walletId"}},
		{"bitcoin wallet", makerContext(), "ZTEST-NOBENF-BTC", "usdc-xlm", wantErr{codes.InvalidArgument, "ER-111", "walletId"}},
		{"ethereum asset", makerContext(), "ZTEST-NOBENF-POOR", "usdc-eth", wantErr{codes.InvalidArgument, "ER-111", "currencyId"}},
		{"native XLM", makerContext(), "ZTEST-NOBENF-POOR", "xlm-xlm", wantErr{codes.InvalidArgument, "ER-108", "currencyId"}},
		{"one stroop short", makerContext(), "ZTEST-NOBENF-POOR", "usdc-xlm", wantErr{codes.Aborted, "ER-409", "walletId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := srv.ActivateTrustline(tt.ctx, &custodyv1.ActivateTrustlineRequest{WalletId: tt.walletID, CurrencyId: tt.currency})
			checkErr(t, err, tt.want)
		})
	}
}

func TestConcurrentTrustlineActivations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putXLM(t, "ZTEST-NOBENF-XLM", "250")
	srv := server.New(f.store, server.Options{})
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = srv.ActivateTrustline(makerContext(), &custodyv1.ActivateTrustlineRequest{WalletId: "ZTEST-NOBENF-XLM", CurrencyId: "usdc-xlm"})
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		checkErr(t, err, wantErr{codes.Aborted, apperr.CodeExists, "currencyId"})
	}
	w, err := f.store.Wallet(context.Background(), company, "ZTEST-NOBENF-XLM")
	if wins != 1 || err != nil || len(w.AssetBalances) != 2 || w.Subentries != 1 {
		t.Errorf("%d activations succeeded; wallet %+v, %v; want one trustline", wins, w, err)
	}
}
