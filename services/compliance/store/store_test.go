package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/compliance"
	"github.com/zcustody/suite/services/compliance/store"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	st := store.New(testdb.New(t))
	if err := st.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestVASPRoundTrip(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	v := compliance.VASP{ID: "V1", Name: "One", TravelRuleMethod: compliance.TravelRuleTrust, Active: true, RestrictedCompanies: []string{"ZT"}}
	if err := st.PutVASP(ctx, v); err != nil {
		t.Fatal(err)
	}
	got, err := st.VASP(ctx, "V1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "One" || !got.Active || !got.VisibleTo("ZT") || got.VisibleTo("OTHER") {
		t.Errorf("VASP() = %+v, want the stored VASP restricted to ZT", got)
	}
	if _, err := st.VASP(ctx, "V2"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("VASP(V2): err = %v, want ErrNotFound", err)
	}
}

func TestSetActivation(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	steps := []struct {
		give        bool
		wantVersion int64
	}{
		{give: false, wantVersion: 1},
		{give: false, wantVersion: 1}, // same state: no new version
		{give: true, wantVersion: 2},
		{give: false, wantVersion: 3},
	}
	for i, s := range steps {
		got, err := st.SetActivation(ctx, "ZT", "V1", s.give, "maker@zt.example")
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got.Active != s.give || got.Version != s.wantVersion {
			t.Errorf("step %d: active=%v version=%d, want active=%v version=%d", i, got.Active, got.Version, s.give, s.wantVersion)
		}
	}
	other, err := st.SetActivation(ctx, "OTHER", "V1", true, "x")
	if err != nil {
		t.Fatal(err)
	}
	if other.Version != 1 || other.CompanyID != "OTHER" {
		t.Errorf("another company's activation = %+v, want its own first version", other)
	}
}

func TestSetActivationConcurrentSameState(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := st.SetActivation(ctx, "ZT", "V9", false, "x"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent SetActivation: %v", err)
	}
	got, err := st.SetActivation(ctx, "ZT", "V9", false, "x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 {
		t.Errorf("after 20 identical deactivations version = %d, want 1 (one change recorded)", got.Version)
	}
}

// TestActivationHistory reads the audit of activation changes back from the store: one entry
// per change of state, in order, with who and when; none for a repeat of the current state.
func TestActivationHistory(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	empty, err := st.ActivationHistory(ctx, "ZT", "V1")
	if err != nil || len(empty) != 0 {
		t.Fatalf("history before any change = %v, %v; want empty", empty, err)
	}
	steps := []struct {
		give bool
		by   string
	}{
		{false, "maker@zt.example"},
		{false, "checker@zt.example"}, // repeat: no entry
		{true, "checker@zt.example"},
		{true, "ZT"}, // repeat: no entry
		{false, "ZT"},
	}
	var want []compliance.ActivationChange
	for i, s := range steps {
		act, err := st.SetActivation(ctx, "ZT", "V1", s.give, s.by)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if len(want) == 0 || want[len(want)-1].Active != s.give {
			want = append(want, compliance.ActivationChange{Active: s.give, At: act.UpdatedAt, By: s.by})
		}
	}
	if _, err := st.SetActivation(ctx, "OTHER", "V1", true, "other@x"); err != nil {
		t.Fatal(err)
	}
	got, err := st.ActivationHistory(ctx, "ZT", "V1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	for i := 1; i < len(got); i++ {
		if got[i].At.Before(got[i-1].At) {
			t.Errorf("entry %d at %s is before entry %d at %s", i, got[i].At, i-1, got[i-1].At)
		}
	}
	if other, err := st.ActivationHistory(ctx, "OTHER", "V1"); err != nil || len(other) != 1 || !other[0].Active {
		t.Errorf("another company's history = %v, %v; want its one activation", other, err)
	}
}
