package server_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/principal"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	"github.com/zcustody/suite/services/trading"
)

// operator is the context of a viewer of a venue operator's company.
func operator(companyID string, venues ...string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindUser, CompanyID: companyID,
		UserEmail: "api-viewer@" + companyID + ".example", Roles: []string{principal.RoleViewer}, VenueIDs: venues})
}

// actingFor is the context of an internal system acting for a company with venues.
func actingFor(system, companyID string, venues ...string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: system, Issuer: system,
		CompanyID: companyID, VenueIDs: venues})
}

// TestVenueOperatorSeesWalletsAtItsVenues: endpoint 2 shows a venue operator every client's
// trading wallets held at its venues (and its own), nothing at other venues, and so does
// interchange acting for it (no other system's claim of a venue counts); a client still
// sees only its own.
func TestVenueOperatorSeesWalletsAtItsVenues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, w := range []struct{ id, company, venue string }{
		{"ZTEST-TW-BYBIT00001", "ZTEST", "BYBIT"},
		{"ZTEST-TW-DERIBIT001", "ZTEST", "DERIBIT"},
		{"ZACME-TW-BYBIT00001", "ZACME", "BYBIT"},
	} {
		tw := trading.Wallet{ID: w.id, CompanyID: w.company, VenueID: w.venue, Name: w.id, Status: trading.StatusActive, Currency: "BTC",
			CustomProperties: `{}`, Version: 1}
		if _, err := f.store.InsertWallet(context.Background(), tw); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		ctx  context.Context
		req  *tradingv1.SearchWalletsRequest
		want []string
	}{
		{"BYBIT's operator", operator("ZBYBIT", "BYBIT"), &tradingv1.SearchWalletsRequest{}, []string{"ZACME-TW-BYBIT00001", "ZTEST-TW-BYBIT00001"}},
		{"DERIBIT's operator", operator("ZDERIBIT", "DERIBIT"), &tradingv1.SearchWalletsRequest{}, []string{"ZTEST-TW-DERIBIT001"}},
		{"an operator of both", operator("ZBOTH", "BYBIT", "DERIBIT"), &tradingv1.SearchWalletsRequest{CompanyIds: []string{"ZTEST"}},
			[]string{"ZTEST-TW-BYBIT00001", "ZTEST-TW-DERIBIT001"}},
		{"another venue's wallet by id", operator("ZBYBIT", "BYBIT"), &tradingv1.SearchWalletsRequest{Ids: []string{"ZTEST-TW-DERIBIT001"}}, nil},
		{"interchange acting for BYBIT's operator", actingFor("interchange", "ZBYBIT", "BYBIT"), &tradingv1.SearchWalletsRequest{},
			[]string{"ZACME-TW-BYBIT00001", "ZTEST-TW-BYBIT00001"}},
		{"another system claiming a venue", actingFor("settlement-engine", "ZBYBIT", "BYBIT"), &tradingv1.SearchWalletsRequest{}, nil},
		{"a client", user("ZACME"), &tradingv1.SearchWalletsRequest{}, []string{"ZACME-TW-BYBIT00001"}},
		{"a client naming another's wallet", user("ZACME"), &tradingv1.SearchWalletsRequest{Ids: []string{"ZTEST-TW-BYBIT00001"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := f.server.SearchWallets(tt.ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range resp.GetItems() {
				got = append(got, w.GetId())
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("wallets (-want +got):\n%s", diff)
			}
			if int(resp.GetTotal()) != len(tt.want) {
				t.Errorf("total %d, want %d", resp.GetTotal(), len(tt.want))
			}
		})
	}
}
