package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/platform/principal"
	commonv1 "github.com/zcustody/suite/proto/common/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	"github.com/zcustody/suite/services/custody"
	"github.com/zcustody/suite/services/custody/server"
)

func companyContext(companyID string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindCompany, CompanyID: companyID})
}

func userContext(companyID, email string, roles ...string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindUser, CompanyID: companyID, UserEmail: email, Roles: roles})
}

func systemContext(system string) context.Context {
	return principal.NewContext(context.Background(), principal.Principal{Kind: principal.KindSystem, System: system})
}

func TestListLedgerFees(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, e := range []custody.FeeEstimate{
		{CurrencyID: "btc-btc", High: []string{"30", "25"}, Medium: []string{"12.5"}, Low: []string{"2"}, ObservedAt: now.Add(-time.Minute)},
		{CurrencyID: "eth-eth", High: []string{"3"}, Medium: []string{"2"}, Low: []string{"1"}, ObservedAt: now.Add(-2 * time.Minute)}, // stale under a 90 s bound
	} {
		if _, err := f.store.PutFee(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	srv := server.New(f.store, server.Options{FeeMaxAge: 90 * time.Second, Now: func() time.Time { return now }})
	got, err := srv.ListLedgerFees(userContext(company, "api-viewer@ztest.example", principal.RoleViewer), &custodyv1.ListLedgerFeesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	unavailable := func(id, typ, weight string) *custodyv1.LedgerFee {
		return &custodyv1.LedgerFee{CurrencyId: id, Status: "ERROR", Type: typ, Weight: weight, Error: &commonv1.ErrorObject{Code: "ER-252",
			Message: "The fee estimate for " + id + " is currently unavailable. Please contact customer support."}}
	}
	want := &custodyv1.ListLedgerFeesResponse{Items: []*custodyv1.LedgerFee{
		{CurrencyId: "btc-btc", Status: "SUCCESS", Type: "UTXO", Weight: "sat/vB",
			High: &custodyv1.FeeTier{Value: []string{"30", "25"}}, Medium: &custodyv1.FeeTier{Value: []string{"12.5"}}, Low: &custodyv1.FeeTier{Value: []string{"2"}}},
		unavailable("eth-eth", "GAS", "Gwei"),
		unavailable("eurc-xlm", "BASE_FEE", "stroop"),
		unavailable("usdc-eth", "GAS", "Gwei"),
		unavailable("usdc-xlm", "BASE_FEE", "stroop"),
		unavailable("xlm-xlm", "BASE_FEE", "stroop"),
		unavailable("xrp-xrp", "BASE_FEE", "drop"),
	}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("ListLedgerFees() mismatch (-want +got):\n%s", diff)
	}
	// Fees are network data: another company sees the same entries.
	other, err := srv.ListLedgerFees(companyContext("ZACME"), &custodyv1.ListLedgerFeesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, other, protocmp.Transform()); diff != "" {
		t.Errorf("ListLedgerFees() for ZACME mismatch (-want +got):\n%s", diff)
	}
}

func TestListLedgerFeesDefaultBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	e := custody.FeeEstimate{CurrencyID: "xrp-xrp", High: []string{"12"}, Medium: []string{"10"}, Low: []string{"10"}}
	for _, tt := range []struct {
		age  time.Duration
		want string
	}{{server.DefaultFeeMaxAge, "SUCCESS"}, {server.DefaultFeeMaxAge + time.Millisecond, "ERROR"}} {
		srv := server.New(f.store, server.Options{Now: func() time.Time { return now.Add(tt.age) }})
		e.ObservedAt = now
		if _, err := f.store.PutFee(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		got, err := srv.ListLedgerFees(companyContext(company), &custodyv1.ListLedgerFeesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		last := got.GetItems()[len(got.GetItems())-1]
		if last.GetCurrencyId() != "xrp-xrp" || last.GetStatus() != tt.want {
			t.Errorf("an estimate %s old: %v, want xrp-xrp %s", tt.age, last, tt.want)
		}
	}
}
