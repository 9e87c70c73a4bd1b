package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/internal/amount"
	"github.com/zcustody/suite/services/internal/journal"
)

// TestCompleteWaitsForAnEmptyClearingAccount: a settlement whose clearing account still holds
// money after PAY_OUT (here planted: a stray credit) is not completed: it stays PAY_OUT and
// says why (to the engine that asked, and in the log); once the account is back at zero, COMPLETE goes through.
func TestCompleteWaitsForAnEmptyClearingAccount(t *testing.T) {
	t.Parallel()
	f := funded(t)
	id := f.instruct(t, ztest, trade("CLEAR-1"))
	clearing := "clearing:" + id
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut)
	stray := amount.MustStored("0.01")
	move := func(entry, from, to string) {
		t.Helper()
		e := journal.Entry{ID: entry, Kind: journal.Single, Code: "test.stray", Legs: []journal.Leg{
			{Holder: from, Currency: "BTC", Side: journal.Debit, Amount: stray}, {Holder: to, Currency: "BTC", Side: journal.Credit, Amount: stray}}}
		if _, err := f.ledger.store.RecordEntry(context.Background(), e, nil); err != nil {
			t.Fatal(err)
		}
	}
	move("stray-in", "world:deposits", clearing)

	_, err := f.advance(id, settlement.StatusComplete)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "clearing account is not at zero: BTC 0.01 posted") {
		t.Errorf("COMPLETE with 0.01 BTC left in the clearing account: %v; want refused, naming what is left", err)
	}
	resp, err := f.svc.GetSettlementStatus(f.companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "CLEAR-1"})
	if err != nil || resp.GetStatus() != settlement.StatusPayOut {
		t.Errorf("status after the refused COMPLETE = %v, %v; want PAY_OUT", resp, err)
	}
	if lines := f.logs.matching("settlement cannot complete", id); len(lines) != 1 {
		t.Errorf("log lines of the refusal: %q, want one naming the settlement", lines)
	}

	move("stray-out", clearing, "world:withdrawals")
	f.mustAdvance(t, id, settlement.StatusComplete, settlement.StatusComplete)
	f.ledger.reconciled(t)
}
