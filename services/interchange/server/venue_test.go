package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	"github.com/zcustody/suite/services/interchange/settlement"
)

// TestOnlyTheVenueInstructs: endpoint 3 is the venue operator's. A client company, its
// MAKER, and the operator of another venue are refused (403) and nothing is stored.
func TestOnlyTheVenueInstructs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := instruction("V-1", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1")})
	maker := f.callerCtx(principal.Principal{Kind: principal.KindUser, CompanyID: ztest, Roles: []string{principal.RoleMaker}})
	for name, ctx := range map[string]context.Context{
		"a client company":         f.companyCtx(ztest),
		"a client's MAKER":         maker,
		"another venue's operator": f.operatorCtx(zderibit, "DERIBIT"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.svc.CreateSettlement(ctx, req)
			wantAppErr(t, err, "ER-403", "")
			if status.Code(err) != codes.PermissionDenied {
				t.Errorf("code %s, want PermissionDenied (403)", status.Code(err))
			}
		})
	}
	for name, p := range map[string]principal.Principal{
		"ZTEST":    {Kind: principal.KindCompany, CompanyID: ztest},
		"ZBYBIT":   {Kind: principal.KindCompany, CompanyID: zbybit, VenueIDs: []string{venue}},
		"ZDERIBIT": {Kind: principal.KindCompany, CompanyID: zderibit, VenueIDs: []string{"DERIBIT"}},
	} {
		got, err := f.svc.SearchSettlements(f.callerCtx(p), &interchangev1.SearchSettlementsRequest{})
		if err != nil || got.GetTotal() != 0 {
			t.Errorf("%s's settlements after the refusals: %v, %v; want none stored", name, got, err)
		}
	}
	// A venue id that is not one: 400 naming it, for an operator; nothing echoed for a client.
	bad := instruction("V-2", []*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1")})
	bad.Header.VenueId = "bybit venue"
	_, err := f.svc.CreateSettlement(f.venueCtx(), bad)
	wantAppErr(t, err, "ER-108", "header.venueId")
}

// TestVenueSettlesItsClients: BYBIT's operator instructs one settlement over two clients'
// wallets at BYBIT (a receivable from ZTEST, a payable to ZACME); the engine carries it to
// COMPLETE and each client's wallet moves, the venue's settlement wallet funding the payable
// and receiving the receivable. The settlement is the operator's: a client does not find it
// by the venue's request id.
func TestVenueSettlesItsClients(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ledger.fund(t, ztest, btcWallet, "BTC", "1")
	f.ledger.fund(t, venueCompany, venueBTC, "BTC", "0.4")
	resp, err := f.svc.CreateSettlement(f.venueCtx(), instruction("V-3",
		[]*interchangev1.Settlement{leg(btcWallet, "BTC", "BTC", "1"), leg(acmeBTC, "BTC", "BTC", "-0.4")}))
	if err != nil {
		t.Fatalf("the operator's instruction: %v", err)
	}
	id := resp.GetSettlementTrackingId()
	f.walk(t, id, settlement.StatusInitiated, settlement.StatusPayIn, settlement.StatusPayOut, settlement.StatusComplete)
	f.wantBalances(t, "at COMPLETE", map[string][3]string{
		btcWallet + " BTC":        zero,
		acmeBTC + " BTC":          {"0.4", "0.4", "0"},
		venueBTC + " BTC":         {"1", "1", "0"},
		"clearing:" + id + " BTC": zero,
	})
	st, err := f.svc.GetSettlementStatus(f.venueCtx(), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "V-3"})
	if err != nil || st.GetStatus() != settlement.StatusComplete {
		t.Errorf("the operator reads V-3: %v, %v; want COMPLETE", st, err)
	}
	if _, err := f.svc.GetSettlementStatus(f.companyCtx(ztest), &interchangev1.GetSettlementStatusRequest{SettlementRequestId: "V-3"}); status.Code(err) != codes.NotFound {
		t.Errorf("a client reads the venue's V-3: %v, want NotFound", err)
	}
}
