package e2e_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
)

func confirmBody(t *testing.T, id, decision, reason string) []byte {
	t.Helper()
	return mustJSON(t, map[string]string{"transferId": id, "withdrawalConfirmation": decision, "reason": reason})
}

// confirmAs decides a withdrawal through endpoint 11 as c.
func confirmAs(t *testing.T, c *signing.Client, id, decision, reason string) response {
	t.Helper()
	return do(t, c, http.MethodPost, withdrawalPath, confirmBody(t, id, decision, reason))
}

// pendingWithdrawal records a withdrawal of amount BTC from wallet as the settlement engine.
func pendingWithdrawal(t *testing.T, wallet, amount string) string {
	t.Helper()
	conn, ctx := internalConn(t, "interchange")
	id := "WD-" + uuid.NewString()[:12]
	req := &interchangev1.CreateWithdrawalRequest{TransferId: id, CompanyId: demo.CompanyZTEST, WalletId: wallet, Currency: "BTC",
		Amount: amount, DestinationAddress: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}
	client := interchangev1.NewSettlementEngineServiceClient(conn)
	for range 2 { // the same withdrawal twice: one transfer
		resp, err := client.CreateWithdrawal(ctx(), req)
		if err != nil || resp.GetStatus() != "PENDING_CONFIRMATION" {
			t.Fatalf("CreateWithdrawal = %v, %v; want PENDING_CONFIRMATION", resp, err)
		}
	}
	req.Amount = "9"
	if _, err := client.CreateWithdrawal(ctx(), req); status.Code(err) != codes.AlreadyExists || grpcERCode(err) != "ER-104" {
		t.Errorf("another withdrawal under %s: %v, want ER-104", id, err)
	}
	return id
}

// TestWithdrawalConfirmation: the operator of the wallet's venue decides; the wallet's own
// client, another client (403) and another venue's operator (404) cannot.
func TestWithdrawalConfirmation(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	accepted, declined := pendingWithdrawal(t, f.btc, "0.25"), pendingWithdrawal(t, f.btc, "0.5")
	venue, ztest, zacme := f.operatorClient(company), newClient(demo.CompanyZTEST, company), newClient(demo.CompanyZACME, company)
	tests := []struct {
		name                 string
		as                   *signing.Client
		id, decision, reason string
		status               int
		code                 string
	}{
		{"the client accepts its own", ztest, accepted, "ACCEPT", "", 403, "ER-403"},
		{"the client's maker accepts its own", newClient(demo.CompanyZTEST, maker), accepted, "ACCEPT", "", 403, "ER-403"},
		{"another venue's operator", newClient(demo.CompanyZBYBIT, company), accepted, "ACCEPT", "", 404, "ER-102"},
		{"accept", venue, accepted, "ACCEPT", "", 200, ""},
		{"accept again, as the operator's maker", f.operatorClient(maker), accepted, "ACCEPT", "", 200, ""},
		{"the operator's viewer", f.operatorClient(viewer), declined, "DECLINE", "no", 403, "ER-403"},
		{"decline an accepted one", venue, accepted, "DECLINE", "too late", 409, "ER-409"},
		{"decline without a reason", venue, declined, "DECLINE", "", 400, "ER-101"},
		{"REJECT is not a decision", venue, declined, "REJECT", "x", 400, "ER-108"},
		{"no decision", venue, declined, "", "", 400, "ER-101"},
		{"another client", zacme, declined, "DECLINE", "not ours", 403, "ER-403"},
		{"decline", venue, declined, "DECLINE", "wrong address", 200, ""},
		{"decline again", venue, declined, "DECLINE", "wrong address", 200, ""},
		{"accept a declined one", venue, declined, "ACCEPT", "", 409, "ER-409"},
		{"unknown transfer", venue, "WD-UNKNOWN", "ACCEPT", "", 404, "ER-102"},
	}
	for _, tt := range tests {
		r := confirmAs(t, tt.as, tt.id, tt.decision, tt.reason)
		if tt.status != http.StatusOK {
			t.Run(tt.name, func(t *testing.T) { wantError(t, r, tt.status, tt.code) })
			continue
		}
		var got struct {
			TransferID string `json:"transferId"`
		}
		wantOK(t, r, &got)
		if got.TransferID != tt.id {
			t.Errorf("%s: answer %s, want transferId %s", tt.name, r.body, tt.id)
		}
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.75", "0.75", "0", "0"}) {
		t.Errorf("client BTC = %v, want only the accepted 0.25 gone", got)
	}
	// More than the wallet holds: refused at its creation (declined, nothing held), and so
	// refused again when asked again or accepted.
	conn, ctx := internalConn(t, "interchange")
	big := &interchangev1.CreateWithdrawalRequest{TransferId: "WD-" + uuid.NewString()[:12], CompanyId: demo.CompanyZTEST, WalletId: f.btc,
		Currency: "BTC", Amount: "5", DestinationAddress: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}
	for range 2 {
		_, err := interchangev1.NewSettlementEngineServiceClient(conn).CreateWithdrawal(ctx(), big)
		if status.Code(err) != codes.FailedPrecondition || grpcERCode(err) != "ER-409" {
			t.Errorf("withdraw 5 BTC of 0.75: %v, want FailedPrecondition ER-409", err)
		}
	}
	wantError(t, confirmAs(t, venue, big.GetTransferId(), "ACCEPT", ""), http.StatusConflict, "ER-409")
	if got := clientBalances(t, f.btc)[f.btc]; got != (amounts{"0.75", "0.75", "0", "0"}) {
		t.Errorf("client BTC after a refused withdrawal = %v, want unchanged", got)
	}
}

// TestWithdrawalRacingDecisions: 20 racing ACCEPTs and DECLINEs take one decision; every call
// of that decision answers 200, every other 409, and the funds move once or not at all.
func TestWithdrawalRacingDecisions(t *testing.T) {
	t.Parallel()
	f := newVenueFixture(t, "1", "0", "0", "0")
	id := pendingWithdrawal(t, f.btc, "0.3")
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]int{}
	for i := range 20 {
		decision := []string{"ACCEPT", "DECLINE"}[i%2]
		wg.Go(func() {
			r := confirmAs(t, f.operatorClient(company), id, decision, "race")
			mu.Lock()
			defer mu.Unlock()
			switch r.status {
			case http.StatusOK:
				won[decision]++
			case http.StatusConflict:
			default:
				t.Errorf("%s: %d %s", decision, r.status, r.body)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || (won["ACCEPT"] != 10 && won["DECLINE"] != 10) {
		t.Fatalf("successful calls per decision %v, want all 10 of one decision", won)
	}
	want := amounts{"1", "1", "0", "0"}
	if won["ACCEPT"] == 10 {
		want = amounts{"0.7", "0.7", "0", "0"}
	}
	if got := clientBalances(t, f.btc)[f.btc]; got != want {
		t.Errorf("client BTC after %v = %v, want %v", won, got, want)
	}
}

// TestWithdrawalDemoData: the demo withdrawals await confirmation by the operator of their
// wallet's venue: ZACME's at BYBIT is BYBIT's to decide, not DERIBIT's nor ZACME's.
func TestWithdrawalDemoData(t *testing.T) {
	t.Parallel()
	wantError(t, confirmAs(t, newClient(demo.CompanyZDERIBIT, company), "ZACME-WD-DEMO0001", "DECLINE", "not ours"), http.StatusNotFound, "ER-102")
	wantError(t, confirmAs(t, newClient(demo.CompanyZACME, company), "ZACME-WD-DEMO0001", "DECLINE", "ours"), http.StatusForbidden, "ER-403")
	var got struct {
		TransferID string `json:"transferId"`
	}
	wantOK(t, confirmAs(t, newClient(demo.CompanyZBYBIT, company), "ZACME-WD-DEMO0001", "DECLINE", "e2e: unknown destination"), &got)
	if got.TransferID != "ZACME-WD-DEMO0001" {
		t.Errorf("answer %+v, want ZACME-WD-DEMO0001", got)
	}
}
