package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	interchangestore "github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/withdrawal"
)

const btcAddress = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"

func withdrawalReq(id, amount string) *interchangev1.CreateWithdrawalRequest {
	return &interchangev1.CreateWithdrawalRequest{TransferId: id, CompanyId: ztest, WalletId: btcWallet, Currency: "BTC",
		Amount: amount, DestinationAddress: btcAddress}
}

func (f fixture) withdraw(t *testing.T, req *interchangev1.CreateWithdrawalRequest) {
	t.Helper()
	resp, err := f.engine.CreateWithdrawal(engineCtx(), req)
	if err != nil || resp.GetStatus() != withdrawal.StatusPending || resp.GetTransferId() != req.GetTransferId() {
		t.Fatalf("CreateWithdrawal = %v, %v; want %s pending", resp, err, req.GetTransferId())
	}
}

func confirm(f fixture, ctx context.Context, id, decision, reason string) error {
	resp, err := f.svc.ConfirmWithdrawal(ctx, &interchangev1.ConfirmWithdrawalRequest{TransferId: id, WithdrawalConfirmation: decision, Reason: reason})
	if err == nil && resp.GetTransferId() != id {
		return status.Errorf(codes.Internal, "answer %v names another transfer", resp)
	}
	return err
}

func TestCreateWithdrawal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-1", "0.5"))
	f.withdraw(t, withdrawalReq("WD-1", "0.5")) // the same again
	_, err := f.engine.CreateWithdrawal(engineCtx(), withdrawalReq("WD-1", "0.6"))
	wantAppErr(t, err, "ER-104", "transferId")
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.5", "1", "0.5"} {
		t.Errorf("client BTC = %v, want 0.5 held once from the creation", got)
	}
	with := func(change func(r *interchangev1.CreateWithdrawalRequest)) *interchangev1.CreateWithdrawalRequest {
		r := withdrawalReq("WD-2", "1")
		change(r)
		return r
	}
	tests := []struct {
		name      string
		give      *interchangev1.CreateWithdrawalRequest
		wantCode  string
		wantField string
	}{
		{"no transfer", with(func(r *interchangev1.CreateWithdrawalRequest) { r.TransferId = "" }), "ER-101", "transferId"},
		{"transfer format", with(func(r *interchangev1.CreateWithdrawalRequest) { r.TransferId = "WD 2" }), "ER-108", "transferId"},
		{"no company", with(func(r *interchangev1.CreateWithdrawalRequest) { r.CompanyId = "" }), "ER-101", "companyId"},
		{"wallet of another company", with(func(r *interchangev1.CreateWithdrawalRequest) { r.WalletId = acmeBTC }), "ER-108", "walletId"},
		{"venue wallet", with(func(r *interchangev1.CreateWithdrawalRequest) { r.WalletId = "BYBIT-ISW-BTC" }), "ER-108", "walletId"},
		{"unknown wallet", with(func(r *interchangev1.CreateWithdrawalRequest) { r.WalletId = "ZTEST-TW-NOPE000001" }), "ER-102", "walletId"},
		{"wallet at no venue", with(func(r *interchangev1.CreateWithdrawalRequest) { r.WalletId = "ZTEST-TW-NOVENUE001" }), "ER-108", "walletId"},
		{"wallet in another currency", with(func(r *interchangev1.CreateWithdrawalRequest) { r.WalletId = ethWallet }), "ER-108", "currency"},
		{"currency", with(func(r *interchangev1.CreateWithdrawalRequest) { r.Currency = "DOGE" }), "ER-111", "currency"},
		{"amount", with(func(r *interchangev1.CreateWithdrawalRequest) { r.Amount = "0" }), "ER-108", "amount"},
		{"no address", with(func(r *interchangev1.CreateWithdrawalRequest) { r.DestinationAddress = "" }), "ER-101", "destinationAddress"},
		{"address of another ledger", with(func(r *interchangev1.CreateWithdrawalRequest) {
			r.DestinationAddress = "0x52908400098527886E0F7030069857D2E4169EE7"
		}), "ER-108", "destinationAddress"},
	}
	for _, tt := range tests {
		_, err := f.engine.CreateWithdrawal(engineCtx(), tt.give)
		t.Run(tt.name, func(t *testing.T) { wantAppErr(t, err, tt.wantCode, tt.wantField) })
	}
}

// TestWithdrawalBelongsToItsVenue: a withdrawal out of a wallet at DERIBIT is decided by
// DERIBIT's operator; BYBIT's does not find it.
func TestWithdrawalBelongsToItsVenue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, deribitBTC, "BTC", "1")
	req := withdrawalReq("WD-DRB", "0.4")
	req.WalletId = deribitBTC
	f.withdraw(t, req)
	if err := confirm(f, f.venueCtx(), "WD-DRB", "ACCEPT", ""); status.Code(err) != codes.NotFound {
		t.Errorf("BYBIT's operator accepts at DERIBIT: %v, want NotFound", err)
	}
	if got := f.ledger.get(t, deribitBTC, "BTC"); got != [3]string{"0.6", "1", "0.4"} {
		t.Errorf("client BTC at DERIBIT = %v after BYBIT's attempt, want 0.4 still held", got)
	}
	if err := confirm(f, f.operatorCtx(zderibit, "DERIBIT"), "WD-DRB", "ACCEPT", ""); err != nil {
		t.Fatalf("DERIBIT's operator accepts: %v", err)
	}
	if got := f.ledger.get(t, deribitBTC, "BTC"); got != [3]string{"0.6", "0.6", "0"} {
		t.Errorf("client BTC at DERIBIT = %v, want 0.4 gone", got)
	}
}

// TestWithdrawalWithoutVenueGetsOne: a pending withdrawal stored before withdrawals kept
// their venue can be decided by no one; the engine creating it again gives it its venue,
// and its operator decides it.
func TestWithdrawalWithoutVenueGetsOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	created := f.clock.Now()
	old := withdrawal.Withdrawal{TransferID: "WD-OLD", CompanyID: ztest, WalletID: btcWallet, Currency: "BTC", Amount: "0.3",
		DestinationAddress: btcAddress, Status: withdrawal.StatusPending, Version: 1, HoldAttempt: 1, CreatedAt: created, UpdatedAt: created}
	if err := interchangestore.PutWithdrawal(context.Background(), f.db, old); err != nil {
		t.Fatal(err)
	}
	if err := confirm(f, f.venueCtx(), "WD-OLD", "ACCEPT", ""); status.Code(err) != codes.NotFound {
		t.Fatalf("accept a withdrawal without a venue: %v, want NotFound", err)
	}
	f.withdraw(t, withdrawalReq("WD-OLD", "0.3"))
	if err := confirm(f, f.venueCtx(), "WD-OLD", "ACCEPT", ""); err != nil {
		t.Fatalf("accept once it has its venue: %v", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.7", "0.7", "0"} {
		t.Errorf("client BTC = %v, want 0.3 gone", got)
	}
}

// TestUndecidedWithdrawalExpires: a withdrawal its venue leaves undecided past the expiry is
// declined by the sweeper with the expiry's reason, and can no longer be accepted; one
// decided in time, and one still within its time, are left as they are.
func TestUndecidedWithdrawalExpires(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-OLD", "0.3"))
	f.withdraw(t, withdrawalReq("WD-ACC", "0.2"))
	if err := confirm(f, f.venueCtx(), "WD-ACC", "ACCEPT", ""); err != nil {
		t.Fatal(err)
	}
	f.clock.advance(withdrawal.DefaultExpiry / 2)
	f.withdraw(t, withdrawalReq("WD-NEW", "0.1"))
	f.clock.advance(withdrawal.DefaultExpiry/2 + time.Second)
	f.sweeper(grace).Once(context.Background())
	st := interchangestore.New(f.db, nil)
	for id, want := range map[string]string{"WD-OLD": withdrawal.StatusDeclined, "WD-ACC": withdrawal.StatusAccepted, "WD-NEW": withdrawal.StatusPending} {
		w, err := st.Withdrawal(context.Background(), ztest, id)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status != want || (id == "WD-OLD" && w.Reason != withdrawal.ExpiryReason) {
			t.Errorf("%s after the expiry sweep: %s %q, want %s", id, w.Status, w.Reason, want)
		}
	}
	if err := confirm(f, f.venueCtx(), "WD-OLD", "ACCEPT", ""); status.Code(err) != codes.Aborted {
		t.Errorf("accept an expired withdrawal: %v, want Aborted (409)", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.7", "0.8", "0.1"} {
		t.Errorf("client BTC = %v, want the accepted 0.2 gone, the expired 0.3 released, the pending 0.1 held", got)
	}
}

func TestConfirmWithdrawal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-A", "0.25"))
	f.withdraw(t, withdrawalReq("WD-D", "0.5"))
	f.withdraw(t, withdrawalReq("WD-P", "0.05"))
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.2", "1", "0.8"} {
		t.Errorf("client BTC = %v, want the three amounts held from their creation", got)
	}
	ctx := f.venueCtx()
	checks := []struct {
		name, id, decision, reason string
		want                       codes.Code
	}{
		{"accept", "WD-A", "ACCEPT", "", codes.OK},
		{"accept again", "WD-A", "ACCEPT", "", codes.OK},
		{"decline an accepted one", "WD-A", "DECLINE", "changed my mind", codes.Aborted},
		{"decline without reason", "WD-D", "DECLINE", "", codes.InvalidArgument},
		{"unknown decision", "WD-D", "REJECT", "x", codes.InvalidArgument},
		{"decline", "WD-D", "DECLINE", "wrong address", codes.OK},
		{"decline again", "WD-D", "DECLINE", "another reason", codes.OK},
		{"accept a declined one", "WD-D", "ACCEPT", "", codes.Aborted},
		{"unknown transfer", "WD-NONE", "ACCEPT", "", codes.NotFound},
		{"transfer id longer than any stored", strings.Repeat("W", 65), "ACCEPT", "", codes.InvalidArgument},
	}
	for _, c := range checks {
		if err := confirm(f, ctx, c.id, c.decision, c.reason); status.Code(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	// The decision is the venue's: a client, the wallet's own included, is refused by the
	// policy (TestChain in app); the operator of another venue does not find it.
	if err := confirm(f, f.operatorCtx(zderibit, "DERIBIT"), "WD-P", "DECLINE", "not mine"); status.Code(err) != codes.NotFound {
		t.Errorf("another venue's operator declines: %v, want NotFound", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.7", "0.75", "0.05"} {
		t.Errorf("client BTC = %v, want the accepted 0.25 gone, the declined 0.5 back, 0.05 still held", got)
	}
}

// TestWithdrawalBeyondTheFunds: a withdrawal of more than its wallet holds is declined at
// its creation (409, nothing held), and stays refused when asked again, even once the
// wallet holds enough: a refusal never turns into a success. Another transfer id may try.
func TestWithdrawalBeyondTheFunds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	for range 2 {
		_, err := f.engine.CreateWithdrawal(engineCtx(), withdrawalReq("WD-BIG", "2"))
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "insufficient funds") {
			t.Errorf("withdraw 2 of 1: %v, want 409 insufficient funds", err)
		}
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC = %v, want nothing held", got)
	}
	if err := confirm(f, f.venueCtx(), "WD-BIG", "ACCEPT", ""); status.Code(err) != codes.Aborted {
		t.Errorf("accept the refused withdrawal: %v, want 409 (declined)", err)
	}
	f.ledger.fund(t, ztest, btcWallet, "BTC", "3")
	if _, err := f.engine.CreateWithdrawal(engineCtx(), withdrawalReq("WD-BIG", "2")); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("the refused withdrawal asked again once funded: %v, want 409 still", err)
	}
	f.withdraw(t, withdrawalReq("WD-BIG-2", "2"))
	if err := confirm(f, f.venueCtx(), "WD-BIG-2", "ACCEPT", ""); err != nil {
		t.Errorf("accept the new one: %v", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC = %v, want 2 of 3 gone", got)
	}
}

// TestRacingDecisions: concurrent ACCEPTs and DECLINEs of one transfer take one decision,
// every call of that decision succeeds, and the funds end exactly as that decision says.
func TestRacingDecisions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-RACE", "0.4"))
	var wg sync.WaitGroup
	results := make(chan string, 20)
	for i := range 20 {
		decision := []string{"ACCEPT", "DECLINE"}[i%2]
		wg.Go(func() {
			err := confirm(f, f.venueCtx(), "WD-RACE", decision, "race")
			switch status.Code(err) {
			case codes.OK:
				results <- decision
			case codes.Aborted:
			default:
				t.Errorf("%s: %v", decision, err)
			}
		})
	}
	wg.Wait()
	close(results)
	won := map[string]int{}
	for d := range results {
		won[d]++
	}
	if len(won) != 1 {
		t.Fatalf("decisions that succeeded: %v, want one decision", won)
	}
	want := [3]string{"1", "1", "0"}
	if won["ACCEPT"] > 0 {
		want = [3]string{"0.6", "0.6", "0"}
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != want {
		t.Errorf("client BTC after %v = %v, want %v", won, got, want)
	}
	if won["ACCEPT"] != 10 && won["DECLINE"] != 10 {
		t.Errorf("%v: every call of the winning decision should succeed", won)
	}
}

// TestDeclineCompletesAnInterruptedAccept: an ACCEPT whose post was cut short holds the
// amount; a DECLINE then is 409 (already ACCEPTED) and completes the accepted withdrawal.
func TestDeclineCompletesAnInterruptedAccept(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-INT", "0.4"))
	f.ledger.setFail(failOnce("wd:WD-INT:hold:1:post", tradingDown))
	if err := confirm(f, f.venueCtx(), "WD-INT", "ACCEPT", ""); status.Code(err) != codes.Unavailable {
		t.Fatalf("accept with trading down: %v, want Unavailable", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.6", "1", "0.4"} {
		t.Errorf("client BTC = %v, want 0.4 held", got)
	}
	err := confirm(f, f.venueCtx(), "WD-INT", "DECLINE", "late")
	if status.Code(err) != codes.Aborted || !strings.Contains(status.Convert(err).Message(), "ACCEPTED") {
		t.Errorf("decline of an accepted transfer: %v, want 409 already ACCEPTED", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.6", "0.6", "0"} {
		t.Errorf("client BTC = %v, want the accepted 0.4 gone", got)
	}
}

// declineDuringAcceptHold makes the DECLINE of transfer id win while the ACCEPT's hold is on
// its way to trading: the DECLINE is decided and done before the hold is placed. then, when
// set, runs once the DECLINE is done.
func declineDuringAcceptHold(t *testing.T, f fixture, id string, then func()) *error {
	t.Helper()
	var declined error
	f.ledger.setFail(func(entry string) error {
		if entry != "wd:"+id+":hold:1" {
			return nil
		}
		f.ledger.setFail(nil)
		declined = confirm(f, f.venueCtx(), id, "DECLINE", "wrong address")
		if then != nil {
			then()
		}
		return nil
	})
	return &declined
}

// TestLosingAcceptReleasesItsHold: an ACCEPT that loses the race to a DECLINE after placing
// its hold releases that hold itself and answers 409 (already DECLINED).
func TestLosingAcceptReleasesItsHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-LOSE", "0.4"))
	declined := declineDuringAcceptHold(t, f, "WD-LOSE", nil)
	err := confirm(f, f.venueCtx(), "WD-LOSE", "ACCEPT", "")
	if status.Code(err) != codes.Aborted || !strings.Contains(status.Convert(err).Message(), "DECLINED") {
		t.Errorf("the losing accept: %v, want 409 already DECLINED", err)
	}
	if *declined != nil {
		t.Errorf("the winning decline: %v", *declined)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC = %v, want the losing accept's hold released", got)
	}
}

// TestLosingAcceptNeverHolds: the DECLINE that wins while the ACCEPT's hold is on its way
// releases the hold's id before the hold arrives, so the hold can never be placed: nothing
// stays held for the sweeper to find, even when nobody confirms again.
func TestLosingAcceptNeverHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.withdraw(t, withdrawalReq("WD-LOST", "0.4"))
	declined := declineDuringAcceptHold(t, f, "WD-LOST", nil)
	err := confirm(f, f.venueCtx(), "WD-LOST", "ACCEPT", "")
	if status.Code(err) != codes.Aborted || !strings.Contains(status.Convert(err).Message(), "DECLINED") {
		t.Errorf("the losing accept: %v, want 409 already DECLINED", err)
	}
	if *declined != nil {
		t.Errorf("the winning decline: %v", *declined)
	}
	f.sweeper(0).Once(context.Background())
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"1", "1", "0"} {
		t.Errorf("client BTC = %v, want nothing held", got)
	}
}

// TestLegacyWithdrawalHoldAttempts: a pending withdrawal stored before holds were placed at
// creation (no hold, and no holdAttempt field) whose ACCEPT found the wallet short can be
// accepted once the wallet is funded (the next ACCEPT takes the next attempt); past
// withdrawal.MaxHoldAttempts refused holds an ACCEPT is 409 without trying, and the
// withdrawal can still be declined, releasing nothing it never held.
func TestLegacyWithdrawalHoldAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "0.1")
	created := f.clock.Now()
	for _, id := range []string{"WD-LEGACY", "WD-TRIED"} {
		doc := bson.D{{Key: "_id", Value: id}, {Key: "companyId", Value: ztest}, {Key: "walletId", Value: btcWallet}, {Key: "venueId", Value: venue},
			{Key: "currency", Value: "BTC"}, {Key: "amount", Value: "0.5"}, {Key: "destinationAddress", Value: btcAddress},
			{Key: "status", Value: withdrawal.StatusPending}, {Key: "reason", Value: ""}, {Key: "version", Value: int64(1)},
			{Key: "createdAt", Value: created}, {Key: "updatedAt", Value: created}, {Key: "decidedAt", Value: time.Time{}}}
		if id == "WD-TRIED" {
			doc = append(doc, bson.E{Key: "holdAttempt", Value: withdrawal.MaxHoldAttempts + 1})
		}
		if _, err := f.db.Collection("withdrawals").InsertOne(context.Background(), doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := confirm(f, f.venueCtx(), "WD-LEGACY", "ACCEPT", ""); status.Code(err) != codes.Aborted {
		t.Fatalf("accept 0.5 of 0.1: %v, want 409", err)
	}
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	if err := confirm(f, f.venueCtx(), "WD-LEGACY", "ACCEPT", ""); err != nil {
		t.Fatalf("accept once funded: %v", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.5", "0.5", "0"} {
		t.Errorf("client BTC = %v, want 0.5 gone", got)
	}
	err := confirm(f, f.venueCtx(), "WD-TRIED", "ACCEPT", "")
	if status.Code(err) != codes.Aborted || !strings.Contains(status.Convert(err).Message(), "can only be declined") {
		t.Errorf("accept past the attempts: %v, want 409 can only be declined", err)
	}
	if err := confirm(f, f.venueCtx(), "WD-TRIED", "DECLINE", "too many tries"); err != nil {
		t.Errorf("decline past the attempts: %v", err)
	}
	if got := f.ledger.get(t, btcWallet, "BTC"); got != [3]string{"0.5", "0.5", "0"} {
		t.Errorf("client BTC after the decline = %v, want unchanged", got)
	}
}
