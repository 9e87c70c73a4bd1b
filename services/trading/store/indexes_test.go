package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/page"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes), the
// relay's and the reads of the log the events tests relay to included.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(store.Indexes(), events.LogIndexes("events")...), map[string]string{
		"prices find {}": "every price, one per currency, read once per PriceTTL",
	}))
}

// TestEveryQueryShape sends the wallet search (of a company, and of the operator of venues)
// and the address list with and without their filters, by each sort key both ways, on an
// empty store, so that TestMain checks every shape they can send (a page past the first
// counts too).
func TestEveryQueryShape(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	for _, by := range []string{"id", "createdAt", "updatedAt"} {
		for _, desc := range []bool{false, true} {
			pg := page.Page{Limit: 10, Offset: 1, SortBy: by, Desc: desc}
			for _, f := range []trading.WalletFilter{
				{CompanyID: "C", Page: pg},
				{CompanyID: "C", OperatedVenues: []string{"V"}, Page: pg},
				{CompanyID: "C", OperatedVenues: []string{"V"}, IDs: []string{"W"}, VenueIDs: []string{"V"}, Names: []string{"n"},
					Statuses: []string{"s"}, CompanyIDs: []string{"C"}, Currencies: []string{"USDC"}, CreatedBy: []string{"u"}, Page: pg},
			} {
				if _, _, err := st.SearchWallets(ctx, f); err != nil {
					t.Errorf("SearchWallets(%+v): %v", f, err)
				}
			}
			if by == "updatedAt" {
				continue // addresses are listed by id or createdAt
			}
			for _, f := range []trading.AddressFilter{
				{CompanyID: "C", Page: pg},
				{CompanyID: "C", Addresses: []string{"a"}, WalletIDs: []string{"W"}, Currencies: []string{"USDC"}, Page: pg},
			} {
				if _, _, err := st.ListAddresses(ctx, f); err != nil {
					t.Errorf("ListAddresses(%+v): %v", f, err)
				}
			}
		}
	}
	if _, err := st.WalletAddresses(ctx, "W"); err != nil {
		t.Errorf("WalletAddresses: %v", err)
	}
}
