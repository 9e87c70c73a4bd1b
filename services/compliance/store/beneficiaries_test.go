package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/compliance/store"
)

func beneficiary(id, companyID string) compliance.Beneficiary {
	at := time.Date(2026, 2, 3, 4, 5, 6, 789_000_000, time.UTC)
	return compliance.Create(id, companyID, "maker@"+companyID, "SERV-REQ-0", compliance.NewBeneficiary{EntityType: compliance.EntityIndividual,
		Name: "Jane Doe", RegisteredAddress: compliance.Address{Line1: "1 High St", City: "London", Country: "GB"}}, at)
}

func TestBeneficiaryRoundTrip(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	b := beneficiary("BNF-ZT-AAAAAAAAAA", "ZT")
	b.OperatingAddress = &compliance.Address{Line1: "2 Low St", City: "Leeds", Country: "GB"}
	if err := st.InsertBeneficiary(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := st.Beneficiary(ctx, "ZT", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b, got); diff != "" {
		t.Errorf("Beneficiary() (-inserted +read):\n%s", diff)
	}
	if err := st.InsertBeneficiary(ctx, b); !errors.Is(err, apperr.ErrExists) {
		t.Errorf("second insert: %v, want ErrExists", err)
	}
	if _, err := st.Beneficiary(ctx, "OTHER", b.ID); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("another company's read: %v, want ErrNotFound", err)
	}
	if _, err := st.Beneficiary(ctx, "ZT", "BNF-ZT-MISSING000"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
}

// TestBeneficiaryDocument pins the stored shape: the collection and field names of the
// design, and null for a missing operating address.
func TestBeneficiaryDocument(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := store.New(db)
	ctx := context.Background()
	if err := st.PutBeneficiary(ctx, beneficiary("BNF-ZT-BBBBBBBBBB", "ZT")); err != nil {
		t.Fatal(err)
	}
	var doc bson.M
	if err := db.Collection("beneficiaries").FindOne(ctx, bson.D{{Key: "_id", Value: "BNF-ZT-BBBBBBBBBB"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"_id", "beneficiaryName", "companyId", "createdAt", "createdBy", "entityType", "lastRequestId", "legalName",
		"operatingAddress", "registeredAddress", "status", "updatedAt", "version"}
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("document keys (-want +got):\n%s", diff)
	}
	if doc["operatingAddress"] != nil || doc["status"] != "ACTIVE" {
		t.Errorf("operatingAddress %v status %v, want null and ACTIVE", doc["operatingAddress"], doc["status"])
	}
}

func TestChangeBeneficiary(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	b := beneficiary("BNF-ZT-CCCCCCCCCC", "ZT")
	if err := st.InsertBeneficiary(ctx, b); err != nil {
		t.Fatal(err)
	}
	name := "Jane Smith"
	after := compliance.Update{ID: b.ID, Name: &name}.Apply(b)
	got, err := st.ChangeBeneficiary(ctx, b, after, "SERV-REQ-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != name || got.LegalName != name || got.Version != 2 || got.LastRequestID != "SERV-REQ-1" || !got.UpdatedAt.After(b.UpdatedAt) || !got.CreatedAt.Equal(b.CreatedAt) {
		t.Errorf("after the update: %+v", got)
	}
	if _, err := st.ChangeBeneficiary(ctx, b, after, "SERV-REQ-2"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("update at a stale version: %v, want ErrConflict", err)
	}
	off, err := st.ChangeBeneficiary(ctx, got, compliance.Deactivate(got), "SERV-REQ-3")
	if err != nil || off.Status != compliance.StatusDeactivated || off.Version != 3 || off.Name != name {
		t.Fatalf("deactivate: %+v, %v", off, err)
	}
	if _, err := st.ChangeBeneficiary(ctx, off, compliance.Deactivate(off), "SERV-REQ-4"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("change of a deactivated beneficiary at its version: %v, want ErrConflict", err)
	}
	other := b
	other.CompanyID = "OTHER"
	if _, err := st.ChangeBeneficiary(ctx, other, other, "SERV-REQ-5"); !errors.Is(err, apperr.ErrConflict) {
		t.Errorf("change under another company: %v, want ErrConflict", err)
	}
}

// TestChangeBeneficiaryRace: of 20 racing changes from the same version exactly one wins.
func TestChangeBeneficiaryRace(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	b := beneficiary("BNF-ZT-DDDDDDDDDD", "ZT")
	if err := st.InsertBeneficiary(ctx, b); err != nil {
		t.Fatal(err)
	}
	var wins, conflicts atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := st.ChangeBeneficiary(ctx, b, compliance.Deactivate(b), "SERV-REQ-R"+string(rune('A'+i)))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, apperr.ErrConflict):
				conflicts.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != 19 {
		t.Errorf("%d wins and %d conflicts, want 1 and 19", wins.Load(), conflicts.Load())
	}
	if got, err := st.Beneficiary(ctx, "ZT", b.ID); err != nil || got.Version != 2 {
		t.Errorf("after the race: %+v, %v; want version 2", got, err)
	}
}
