package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/store"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes),
// the relay's and the event log's reads too.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(store.Indexes(), events.LogIndexes("events")...), nil))
}

// TestEveryQueryShape sends the request search with and without its filters, by each sort
// key both ways, and the sweeper's two searches, on an empty store, so that TestMain checks
// every shape they can send (a page past the first counts too).
func TestEveryQueryShape(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, by := range []string{"id", "createdAt", "updatedAt"} {
		for _, desc := range []bool{false, true} {
			for _, f := range []servicedesk.RequestFilter{
				{CompanyID: "C"},
				{CompanyID: "C", ProductIDs: []string{"p"}, ServiceIDs: []string{"s"}, RequestTypes: []string{"t"}, RequestIDs: []string{"r"},
					EndToEndIDs: []string{"e"}, Statuses: []string{"s"}, ModifiedDays: []time.Time{day, day.AddDate(0, 0, 1)},
					Details: []string{"a", "b"}, EntityIDs: []string{"x"}},
			} {
				f.Limit, f.Offset, f.SortBy, f.Desc = 10, 1, by, desc
				if _, _, err := st.SearchRequests(ctx, f); err != nil {
					t.Errorf("SearchRequests(%+v): %v", f, err)
				}
			}
		}
	}
	// As the sweeper asks (server.Sweep): expired pending requests, stalled authorised ones.
	if _, err := st.Due(ctx, []string{servicedesk.StatusPendingConfirmation, servicedesk.StatusPendingAuthorisation}, "expiresAt", day, 100); err != nil {
		t.Errorf("Due(expiresAt): %v", err)
	}
	if _, err := st.Due(ctx, []string{servicedesk.StatusAuthorised}, "authorisedAt", day, 20); err != nil {
		t.Errorf("Due(authorisedAt): %v", err)
	}
}
