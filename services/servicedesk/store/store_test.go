package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/servicedesk"
	"github.com/zcustody/suite/services/servicedesk/store"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	st := store.New(testdb.New(t))
	ctx := context.Background()
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.SyncCatalog(ctx, servicedesk.Catalog()); err != nil {
		t.Fatal(err)
	}
	return st
}

func ids(services []servicedesk.Service) []string {
	out := []string{}
	for _, s := range services {
		out = append(out, s.ID)
	}
	return out
}

func TestFindCatalog(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	all := ids(servicedesk.Catalog())
	tests := []struct {
		name string
		give servicedesk.CatalogFilter
		want []string
	}{
		{"entitlements only", servicedesk.CatalogFilter{Entitled: []string{"0x0013-001", "0x0007-004"}}, []string{"0x0007-004", "0x0013-001"}},
		{"no entitlements sees nothing", servicedesk.CatalogFilter{}, []string{}},
		{"product", servicedesk.CatalogFilter{Entitled: all, Products: []string{servicedesk.ProductCustody}}, []string{"0x0013-001", "0x0013-002", "0x0013-003", "0x0014-007"}},
		{"product ids OR-ed", servicedesk.CatalogFilter{Entitled: all, ProductIDs: []int32{0x14, 0x3}, Venue: true}, []string{"0x0003-001", "0x0003-002", "0x0003-003", "0x0003-004", "0x0014-007"}},
		{"venue-only services left out for a client", servicedesk.CatalogFilter{Entitled: all, ProductIDs: []int32{0x14, 0x3}}, []string{"0x0003-001", "0x0003-002", "0x0003-004", "0x0014-007"}},
		{"custodian-only services left out for a client", servicedesk.CatalogFilter{Entitled: all, ProductIDs: []int32{0x9, 0x14}}, []string{"0x0014-007"}},
		{"custodian-only services for the custodian", servicedesk.CatalogFilter{Entitled: all, ProductIDs: []int32{0x9, 0x14}, Custodian: true}, []string{"0x0009-001", "0x0014-007"}},
		{"filters AND-ed", servicedesk.CatalogFilter{Entitled: all, Products: []string{servicedesk.ProductCustody}, RequestTypes: []string{servicedesk.RequestDeactivate}}, []string{"0x0013-003"}},
		{"service name exact", servicedesk.CatalogFilter{Entitled: all, ServiceNames: []string{"Custody Wallet"}}, []string{}},
		{"service ids within entitlements", servicedesk.CatalogFilter{Entitled: []string{"0x0013-001"}, ServiceIDs: []string{"0x0013-001", "0x0013-002"}}, []string{"0x0013-001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.FindCatalog(context.Background(), tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("FindCatalog() ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncCatalogIsIdempotent(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	if err := st.SyncCatalog(ctx, servicedesk.Catalog()); err != nil {
		t.Fatal(err)
	}
	got, err := st.FindCatalog(ctx, servicedesk.CatalogFilter{Entitled: ids(servicedesk.Catalog()), Venue: true, Custodian: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(servicedesk.Catalog()); len(got) != want {
		t.Fatalf("catalog holds %d services after a second sync, want %d", len(got), want)
	}
	if got[0].Template == "" || got[0].Owner == "" || got[0].Expiry == 0 {
		t.Errorf("catalog service lost fields on the round trip: %+v", got[0])
	}
	venueOnly, custodianOnly := 0, 0
	for _, svc := range got {
		if svc.VenueOnly {
			venueOnly++
		}
		if svc.CustodianOnly {
			custodianOnly++
		}
	}
	if custodianOnly != 1 {
		t.Errorf("%d custodian-only services after the round trip, want 1 (0x0009-001)", custodianOnly)
	}
	if venueOnly != 1 {
		t.Errorf("%d venue-only services after the round trip, want 1 (0x0003-003)", venueOnly)
	}
}

func TestCompanyAndUser(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	company := servicedesk.Company{ID: "ZT", Name: "Test", Active: true, PublicKeys: []string{"k1", "k2"}, Custodian: true}
	user := servicedesk.User{Email: "a@zt.example", CompanyID: "ZT", Roles: []string{"MAKER"}, Entitlements: []string{"0x0013-001"}, Active: true, PublicKey: "p"}
	if err := st.PutCompany(ctx, company); err != nil {
		t.Fatal(err)
	}
	if err := st.PutUser(ctx, user); err != nil {
		t.Fatal(err)
	}
	gotCompany, err := st.Company(ctx, "ZT")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(company, gotCompany); diff != "" {
		t.Errorf("Company() (-want +got):\n%s", diff)
	}
	gotUser, err := st.User(ctx, "ZT", "a@zt.example")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(user, gotUser); diff != "" {
		t.Errorf("User() (-want +got):\n%s", diff)
	}
	if _, err := st.User(ctx, "OTHER", "a@zt.example"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("User() of another company: err = %v, want ErrNotFound", err)
	}
	if _, err := st.Company(ctx, "NOPE"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("Company(NOPE): err = %v, want ErrNotFound", err)
	}
}

// TestVenueHasOneOperator: a second company naming a venue another operates is refused and
// not stored; the operator itself may be written again; an empty venue id is refused.
func TestVenueHasOneOperator(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	first := servicedesk.Company{ID: "ZOPA", Name: "Operator A", Active: true, PublicKeys: []string{"k"}, VenueIDs: []string{"VENUEA", "VENUEB"}}
	if err := st.PutCompany(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCompany(ctx, first); err != nil {
		t.Errorf("the operator written again: %v", err)
	}
	for name, c := range map[string]servicedesk.Company{
		"another operator of VENUEB": {ID: "ZOPB", Name: "Operator B", Active: true, PublicKeys: []string{"k"}, VenueIDs: []string{"VENUEC", "VENUEB"}},
		"an empty venue id":          {ID: "ZOPC", Name: "Operator C", Active: true, PublicKeys: []string{"k"}, VenueIDs: []string{""}},
	} {
		if err := st.PutCompany(ctx, c); !errors.Is(err, apperr.ErrConflict) {
			t.Errorf("%s: %v, want ErrConflict", name, err)
		}
		if _, err := st.Company(ctx, c.ID); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("%s: the refused company is stored (%v)", name, err)
		}
	}
	client := servicedesk.Company{ID: "ZCLI", Name: "Client", Active: true, PublicKeys: []string{"k"}}
	if err := st.PutCompany(ctx, client); err != nil {
		t.Errorf("a client: %v", err)
	}
}
