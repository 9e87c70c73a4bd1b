package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/trading"
)

// feeReq is a withdrawal of amount holding a network fee limit.
func feeReq(id, amount, limit string) *interchangev1.CreateWithdrawalRequest {
	r := withdrawalReq(id, amount)
	r.NetworkFeeLimit = limit
	return r
}

func confirmFee(f fixture, ctx context.Context, id, decision, reason, fee string) error {
	_, err := f.svc.ConfirmWithdrawal(ctx, &interchangev1.ConfirmWithdrawalRequest{TransferId: id, WithdrawalConfirmation: decision, Reason: reason, NetworkFee: fee})
	return err
}

// TestWithdrawalChargesItsNetworkFee: a withdrawal created with a network fee limit holds
// the amount plus the limit; the venue's ACCEPT names the fee really paid, and one entry
// posts the amount plus that fee and gives the rest of the limit back (a partial post). The
// fee is checked against the limit and the currency, recorded with the decision (a repeat
// with another fee is refused), and shown in the search.
func TestWithdrawalChargesItsNetworkFee(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, feeReq("WD-FEE", "0.5", "0.001"))
	f.withdraw(t, feeReq("WD-FEE", "0.5", "0.001")) // the same again
	_, err := f.engine.CreateWithdrawal(engineCtx(), feeReq("WD-FEE", "0.5", "0.002"))
	wantAppErr(t, err, "ER-104", "transferId")
	_, err = f.engine.CreateWithdrawal(engineCtx(), feeReq("WD-BAD", "0.5", "0.000000001"))
	wantAppErr(t, err, "ER-108", "networkFeeLimit")
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.499", "1", "0.501"} {
		t.Fatalf("client BTC = %v, want the amount and the fee limit held", got)
	}
	f.withdraw(t, withdrawalReq("WD-NOFEE", "0.1")) // no limit: holds the amount only
	f.withdraw(t, feeReq("WD-ZERO", "0.1", "0"))    // a limit of 0 holds no fee either
	f.withdraw(t, feeReq("WD-FULL", "0.1", "0.002"))

	ctx := f.venueCtx()
	refused := []struct {
		name, id, decision, reason, fee, code string
	}{
		{"fee above the limit", "WD-FEE", "ACCEPT", "", "0.0011", "ER-108"},
		{"fee finer than the currency", "WD-FEE", "ACCEPT", "", "0.000000001", "ER-108"},
		{"fee not canonical", "WD-FEE", "ACCEPT", "", "0.00040", "ER-108"},
		{"negative fee", "WD-FEE", "ACCEPT", "", "-0.0001", "ER-108"},
		{"fee on a decline", "WD-FEE", "DECLINE", "wrong address", "0.0001", "ER-108"},
		{"fee on a withdrawal holding none", "WD-NOFEE", "ACCEPT", "", "0.0001", "ER-108"},
		{"fee on a zero limit", "WD-ZERO", "ACCEPT", "", "0.0001", "ER-108"},
	}
	for _, c := range refused {
		err := confirmFee(f, ctx, c.id, c.decision, c.reason, c.fee)
		wantAppErr(t, err, c.code, "networkFee")
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", c.name, err)
		}
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.197", "1", "0.803"} {
		t.Fatalf("client BTC = %v after refused decisions, want every hold still in place", got)
	}

	if err := confirmFee(f, ctx, "WD-FEE", "ACCEPT", "", "0.0004"); err != nil {
		t.Fatalf("ACCEPT with a network fee: %v", err)
	}
	// 0.5 + 0.0004 left; 0.0006 of the limit came back; 0.303 still held by the others.
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.1976", "0.4996", "0.302"} {
		t.Errorf("client BTC = %v, want 0.5004 charged and the rest of the limit released", got)
	}
	if got := f.ledger.get(t, trading.WorldNetworkFees, "BTC"); got[1] != "0.0004" || got[2] != "0" {
		t.Errorf("network fees account = %v, want 0.0004 received", got)
	}
	if err := confirmFee(f, ctx, "WD-FEE", "ACCEPT", "", "0.0004"); err != nil {
		t.Errorf("the same ACCEPT again: %v", err)
	}
	wantAppErr(t, confirmFee(f, ctx, "WD-FEE", "ACCEPT", "", "0.0005"), "ER-104", "networkFee")
	wantAppErr(t, confirmFee(f, ctx, "WD-FEE", "ACCEPT", "", ""), "ER-104", "networkFee")

	// Without a fee named, the whole limit is charged; without a limit, none.
	for _, id := range []string{"WD-FULL", "WD-NOFEE", "WD-ZERO"} {
		if err := confirmFee(f, ctx, id, "ACCEPT", "", ""); err != nil {
			t.Fatalf("ACCEPT %s: %v", id, err)
		}
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.1976", "0.1976", "0"} {
		t.Errorf("client BTC = %v, want 0.102 and 0.1 and 0.1 more gone", got)
	}
	if got := f.ledger.get(t, trading.WorldNetworkFees, "BTC"); got[1] != "0.0024" {
		t.Errorf("network fees account = %v, want 0.0024 received", got)
	}

	resp, err := f.svc.SearchWithdrawals(f.companyCtx(ztest), &interchangev1.SearchWithdrawalsRequest{TransferIds: []string{"WD-FEE", "WD-FULL", "WD-NOFEE"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, w := range resp.GetItems() {
		got[w.GetTransferId()] = [2]string{w.GetNetworkFeeLimit(), w.GetNetworkFee()}
	}
	want := map[string][2]string{"WD-FEE": {"0.001", "0.0004"}, "WD-FULL": {"0.002", "0.002"}, "WD-NOFEE": {"", ""}}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("search shows %s with limit and fee %v, want %v", id, got[id], w)
		}
	}
	f.ledger.reconciled(t)
}
