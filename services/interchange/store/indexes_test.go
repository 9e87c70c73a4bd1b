package store_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/interchange/settlement"
	"github.com/zcustody/suite/services/interchange/store"
	"github.com/zcustody/suite/services/interchange/withdrawal"
	"github.com/zcustody/suite/services/internal/page"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes),
// the events log's that the event tests read included.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(store.Indexes(), events.LogIndexes("events")...), map[string]string{
		"withdrawals find eq(status) range(completedAt destinationWalletId) sort(decidedAt _id)": "the transit reconciliation's withdrawals " +
			"done since its window opened: recovery_id bounds that short window, which is then sorted",
	}))
}

// TestEveryQueryShape sends every query of the store once, on an empty database, so that
// TestMain checks every shape it can send (the service's tests exercise the store through
// the server): the searches of a company and of a venue operator, with and without their
// filters, by each sort key both ways (a page past the first counts too), the sweepers'
// searches, the look-ups and the conditional writes, which match nothing here.
func TestEveryQueryShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(testdb.New(t), nil)
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, apperr.ErrNotFound) && !errors.Is(err, apperr.ErrConflict) {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, by := range []string{"id", "createdAt", "updatedAt"} {
		for _, desc := range []bool{false, true} {
			pg := page.Page{Limit: 10, Offset: 1, SortBy: by, Desc: desc}
			for _, venues := range [][]string{nil, {"V"}} {
				_, _, err := st.SearchSettlements(ctx, settlement.Filter{Viewer: settlement.Viewer{CompanyID: "C", Venues: venues}, Page: pg})
				check("SearchSettlements", err)
				_, _, err = st.SearchSettlements(ctx, settlement.Filter{Viewer: settlement.Viewer{CompanyID: "C", Venues: venues},
					RequestIDs: []string{"r"}, TrackingIDs: []string{"t"}, Statuses: []string{"s"}, VenueIDs: []string{"V"}, Page: pg})
				check("SearchSettlements filtered", err)
				_, _, err = st.SearchWithdrawals(ctx, withdrawal.Filter{CompanyID: "C", Venues: venues, Page: pg})
				check("SearchWithdrawals", err)
				_, _, err = st.SearchWithdrawals(ctx, withdrawal.Filter{CompanyID: "C", Venues: venues, TransferIDs: []string{"x"},
					WalletIDs: []string{"w"}, Statuses: []string{"s"}, VenueIDs: []string{"V"}, Page: pg})
				check("SearchWithdrawals filtered", err)
			}
		}
	}
	now := time.Now()
	_, err := st.StalledWithdrawals(ctx, now, 10)
	check("StalledWithdrawals", err)
	_, err = st.UndecidedWithdrawals(ctx, now, 10)
	check("UndecidedWithdrawals", err)
	_, err = st.TransitWithdrawals(ctx, now, 10)
	check("TransitWithdrawals", err)
	_, err = st.StalledSettlements(ctx, now, 10)
	check("StalledSettlements", err)

	s := settlement.Settlement{CompanyID: "C", RequestID: "r", TrackingID: "t", Status: "s", Pending: &settlement.Pending{Token: "k"}}
	_, err = st.SettlementByRequest(ctx, "C", "r")
	check("SettlementByRequest", err)
	_, err = st.SettlementByTracking(ctx, "t")
	check("SettlementByTracking", err)
	_, err = st.Claim(ctx, s, settlement.Pending{Token: "k"})
	check("Claim", err)
	_, err = st.Renew(ctx, s, now)
	check("Renew", err)
	_, err = st.Finish(ctx, s, settlement.Outcome{Status: "s"})
	check("Finish", err)

	w := withdrawal.Withdrawal{TransferID: "x", CompanyID: "C", Status: withdrawal.StatusAccepted}
	_, err = st.Withdrawal(ctx, "C", "x")
	check("Withdrawal", err)
	_, err = st.WithdrawalAtVenues(ctx, []string{"V"}, "x")
	check("WithdrawalAtVenues", err)
	_, err = st.SetVenue(ctx, w, "V")
	check("SetVenue", err)
	_, err = st.Decide(ctx, w, withdrawal.StatusAccepted, "", "")
	check("Decide", err)
	check("NextHoldAttempt", st.NextHoldAttempt(ctx, w))
	check("CompleteWithdrawal", st.CompleteWithdrawal(ctx, w))
}
