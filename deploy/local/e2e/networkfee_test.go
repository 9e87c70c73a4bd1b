package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/zcustody/suite/deploy/local/demo"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
)

// TestWithdrawalPostedForItsNetworkFee: the settlement engine records a withdrawal of 0.25
// BTC holding a network fee limit of 0.001; the venue's operator accepts it through endpoint
// 11 naming the fee really paid (0.0003), and one journal entry posts 0.2503 and gives the
// other 0.0007 back (a partial post). The wallet's history through the gateway shows the
// hold and the post with the balances after each, the balance as of the hold's time is what
// the hold left, and the withdrawal search shows the limit and the fee.
func TestWithdrawalPostedForItsNetworkFee(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	conn, ctx := internalConn(t, "interchange")
	id := "WD-" + uuid.NewString()[:12]
	req := &interchangev1.CreateWithdrawalRequest{TransferId: id, CompanyId: demo.CompanyZTEST, WalletId: f.btc, Currency: "BTC",
		Amount: "0.25", DestinationAddress: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", NetworkFeeLimit: "0.001"}
	if resp, err := interchangev1.NewSettlementEngineServiceClient(conn).CreateWithdrawal(ctx(), req); err != nil || resp.GetStatus() != "PENDING_CONFIRMATION" {
		t.Fatalf("CreateWithdrawal = %v, %v; want PENDING_CONFIRMATION", resp, err)
	}
	held := statement(t, tradingHistoryPath, f.btc)
	if want := "[1 deposit BTC 1/1/0 2 withdrawal.hold BTC 0.749/1/0.251]"; fmt.Sprint(held) != want {
		t.Fatalf("trading history = %v, want %s", held, want)
	}

	venue := f.operatorClient(maker)
	decide := func(decision, reason, fee string) response {
		return do(t, venue, http.MethodPost, withdrawalPath, mustJSON(t, map[string]string{"transferId": id, "withdrawalConfirmation": decision, "reason": reason, "networkFee": fee}))
	}
	for _, tt := range []struct{ name, decision, reason, fee string }{
		{"a fee above the limit", "ACCEPT", "", "0.0011"},
		{"a fee finer than a satoshi", "ACCEPT", "", "0.000000001"},
		{"a fee on a decline", "DECLINE", "wrong address", "0.0003"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, decide(tt.decision, tt.reason, tt.fee), http.StatusBadRequest, "ER-108")
		})
	}
	// The post comes at least a millisecond after the hold, so a balance as of the hold's
	// time cannot include it.
	waitPast(t, postedAt(t, held[1]))
	wantOK(t, decide("ACCEPT", "", "0.0003"), &struct{}{})
	wantOK(t, decide("ACCEPT", "", "0.0003"), &struct{}{}) // the same decision again
	wantError(t, decide("ACCEPT", "", "0.0004"), http.StatusConflict, "ER-104")

	rows := statement(t, tradingHistoryPath, f.btc)
	want := "[1 deposit BTC 1/1/0 2 withdrawal.hold BTC 0.749/1/0.251 3 withdrawal.post BTC 0.7497/0.7497/0]"
	if fmt.Sprint(rows) != want {
		t.Fatalf("trading history = %v, want %s", rows, want)
	}
	if rows[2].Reference != id {
		t.Errorf("the post references %q, want the transfer %s", rows[2].Reference, id)
	}
	for _, tt := range []struct{ asOf, want string }{
		{held[1].CreatedAt, "[BTC@2 0.749/1/0.251/0]"},
		{rows[2].CreatedAt, "[BTC@3 0.7497/0.7497/0/0]"},
	} {
		if got := balanceAsOf(t, tradingBalancePath, f.btc, tt.asOf); fmt.Sprint(got) != tt.want {
			t.Errorf("balance as of %s = %v, want %s", tt.asOf, got, tt.want)
		}
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.7497", "0.7497", "0", "0"}) {
		t.Errorf("client BTC = %v, want 0.2503 gone and the rest of the limit back", got)
	}

	var found struct {
		Items []struct {
			TransferID      string `json:"transferId"`
			Status          string `json:"status"`
			NetworkFeeLimit string `json:"networkFeeLimit"`
			NetworkFee      string `json:"networkFee"`
			Completed       bool   `json:"completed"`
		} `json:"items"`
	}
	wantOK(t, do(t, newClient(demo.CompanyZTEST, viewer), http.MethodPost, "/v3/api/interchange/withdrawal/search",
		mustJSON(t, map[string]any{"transferIds": []string{id}})), &found)
	if len(found.Items) != 1 || found.Items[0].NetworkFeeLimit != "0.001" || found.Items[0].NetworkFee != "0.0003" ||
		found.Items[0].Status != "ACCEPTED" || !found.Items[0].Completed {
		t.Errorf("withdrawal search = %+v, want %s ACCEPTED and completed with limit 0.001 and fee 0.0003", found.Items, id)
	}
}
