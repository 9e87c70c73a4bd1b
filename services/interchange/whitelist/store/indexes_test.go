package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/interchange/whitelist/address"
	"github.com/zcustody/suite/services/interchange/whitelist/store"
	"github.com/zcustody/suite/services/internal/page"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes),
// the events log's that the event tests read included.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(store.Indexes(), events.LogIndexes("events")...), nil))
}

// TestEveryQueryShape sends both lists with and without their filters, by each sort key both
// ways, on an empty store, so that TestMain checks every shape they can send (a page past
// the first counts too).
func TestEveryQueryShape(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	for _, by := range []string{"id", "createdAt"} {
		for _, desc := range []bool{false, true} {
			pg := page.Page{Limit: 10, Offset: 1, SortBy: by, Desc: desc}
			for _, f := range []address.Filter{
				{CompanyID: "C", Page: pg},
				{CompanyID: "C", Addresses: []string{"a"}, Blockchains: []string{"b"}, BlockchainIDs: []string{"i"}, Statuses: []string{"s"}, Fragment: "f", Page: pg},
			} {
				if _, _, err := st.SearchWhitelisted(ctx, f); err != nil {
					t.Errorf("SearchWhitelisted(%+v): %v", f, err)
				}
			}
			for _, f := range []address.SettlementFilter{
				{CompanyID: "C", Page: pg},
				{CompanyID: "C", Addresses: []string{"a"}, Currencies: []string{"USDC"}, Page: pg},
			} {
				if _, _, err := st.ListSettlements(ctx, f); err != nil {
					t.Errorf("ListSettlements(%+v): %v", f, err)
				}
			}
		}
	}
}
