package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/compliance/store"
	"github.com/zcustody/suite/services/internal/page"
)

// TestMain checks that an index covers every query the tests send (testdb.CheckIndexes),
// the relay's and the event log's reads too.
func TestMain(m *testing.M) {
	os.Exit(testdb.CheckIndexes(m, append(store.Indexes(), events.LogIndexes("events")...), nil))
}

// TestEveryQueryShape sends the VASP search with and without its filters, both ways, on an
// empty store, so that TestMain checks every shape it can send (a page past the first
// counts too).
func TestEveryQueryShape(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	for _, desc := range []bool{false, true} {
		pg := page.Page{Limit: 10, Offset: 1, SortBy: "id", Desc: desc}
		for _, f := range []compliance.VASPFilter{
			{CompanyID: "ZT", Page: pg},
			{CompanyID: "ZT", IDs: []string{"V1"}, Names: []string{"One"}, TravelRuleMethods: []string{compliance.TravelRuleTrust}, Page: pg},
		} {
			if _, _, err := st.SearchVASPs(context.Background(), f); err != nil {
				t.Errorf("SearchVASPs(%+v): %v", f, err)
			}
		}
	}
}
