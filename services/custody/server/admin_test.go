package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

func estimate(currencyID, observedAt string, values ...string) *custodyv1.FeeEstimate {
	return &custodyv1.FeeEstimate{CurrencyId: currencyID, High: values, Medium: values, Low: values, ObservedAt: observedAt}
}

func TestRefreshFeeEstimates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := server.NewAdmin(f.store)
	ctx := systemContext("settlement-engine")
	refresh := func(estimates ...*custodyv1.FeeEstimate) (int32, error) {
		resp, err := admin.RefreshFeeEstimates(ctx, &custodyv1.RefreshFeeEstimatesRequest{Estimates: estimates})
		return resp.GetUpdated(), err
	}
	if n, err := refresh(estimate("btc-btc", "2026-05-01T10:00:00Z", "20"), estimate("xrp-xrp", "", "12")); err != nil || n != 2 {
		t.Fatalf("refresh = %d, %v; want 2 stored", n, err)
	}
	// A late delivery of an older estimate changes nothing; the newer one is counted.
	if n, err := refresh(estimate("btc-btc", "2026-05-01T09:59:00.000Z", "99"), estimate("xrp-xrp", "", "15")); err != nil || n != 1 {
		t.Fatalf("refresh = %d, %v; want 1 stored", n, err)
	}
	fees, err := f.store.Fees(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(fees) != 2 || fees[0].High[0] != "20" || fees[1].High[0] != "15" || !fees[0].ObservedAt.Equal(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("stored %+v, want btc-btc 20 observed at 10:00 and xrp-xrp 15", fees)
	}
}

func TestRefreshFeeEstimatesRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := server.NewAdmin(f.store)
	good := estimate("btc-btc", "", "20")
	tests := []struct {
		name string
		ctx  context.Context
		give []*custodyv1.FeeEstimate
		want wantErr
	}{
		{"no estimates", systemContext("settlement-engine"), nil, wantErr{codes.InvalidArgument, "ER-112", "estimates"}},
		{"unsupported currency second", systemContext("settlement-engine"), []*custodyv1.FeeEstimate{good, estimate("doge-doge", "", "1")},
			wantErr{codes.InvalidArgument, "ER-111", "estimates[1].currencyId"}},
		{"currency twice", systemContext("settlement-engine"), []*custodyv1.FeeEstimate{good, estimate("btc-btc", "", "21")},
			wantErr{codes.InvalidArgument, "ER-108", "estimates[1].currencyId"}},
		{"bad time", systemContext("settlement-engine"), []*custodyv1.FeeEstimate{estimate("btc-btc", "yesterday", "20")},
			wantErr{codes.InvalidArgument, "ER-108", "estimates[0].observedAt"}},
		{"negative value", systemContext("settlement-engine"), []*custodyv1.FeeEstimate{good, estimate("eth-eth", "", "-2")},
			wantErr{codes.InvalidArgument, "ER-108", "estimates[1].high"}},
		{"tiers out of order", systemContext("settlement-engine"), []*custodyv1.FeeEstimate{{CurrencyId: "eth-eth", High: []string{"1"}, Medium: []string{"2"}, Low: []string{"1"}}},
			wantErr{codes.InvalidArgument, "ER-108", "estimates[0].medium"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := admin.RefreshFeeEstimates(tt.ctx, &custodyv1.RefreshFeeEstimatesRequest{Estimates: tt.give})
			checkErr(t, err, tt.want)
		})
	}
	// All or nothing: the valid first estimates of refused refreshes were not stored.
	if fees, err := f.store.Fees(context.Background()); err != nil || len(fees) != 0 {
		t.Errorf("after refused refreshes the store holds %v, %v; want nothing", fees, err)
	}
}

func TestProposeLegacyWallet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := server.NewAdmin(f.store)
	req := &custodyv1.ProposeLegacyWalletRequest{CompanyId: company, CreatedBy: maker, WalletName: "Proposed ETH", CurrencyId: "eth-eth"}
	resp, err := admin.ProposeLegacyWallet(systemContext("settlement-engine"), req)
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.store.Wallet(context.Background(), company, resp.GetWalletId())
	if err != nil {
		t.Fatal(err)
	}
	want := &custody.Intent{ID: resp.GetIntentId(), ProposalSignature: resp.GetProposalSignature(), CreatedAt: w.CreatedAt}
	if diff := cmp.Diff(want, w.Intent); diff != "" || w.Status != custody.StatusPendingAuth || w.Valid || w.Name != "Proposed ETH" || w.CreatedBy != maker {
		t.Errorf("stored wallet %+v; intent mismatch (-want +got):\n%s", w, diff)
	}
	req.CurrencyId = "doge-doge"
	_, err = admin.ProposeLegacyWallet(systemContext("settlement-engine"), req)
	checkErr(t, err, wantErr{codes.InvalidArgument, "ER-111", "currencyId"})
}
