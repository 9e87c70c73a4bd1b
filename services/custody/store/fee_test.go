package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/services/custody"
)

func TestPutFeeKeepsTheNewestEstimate(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	first := custody.FeeEstimate{CurrencyID: "btc-btc", High: []string{"30", "25"}, Medium: []string{"12.5"}, Low: []string{"2.001"}, ObservedAt: at}
	newer := custody.FeeEstimate{CurrencyID: "btc-btc", High: []string{"40"}, Medium: []string{"20"}, Low: []string{"5"}, ObservedAt: at.Add(time.Minute)}
	eth := custody.FeeEstimate{CurrencyID: "eth-eth", High: []string{"3.5"}, Medium: []string{"2"}, Low: []string{"0.000000001"}, ObservedAt: at}
	steps := []struct {
		name string
		give custody.FeeEstimate
		want bool
	}{
		{"first estimate", first, true},
		{"other currency", eth, true},
		{"newer estimate", newer, true},
		{"older estimate arrives late", first, false},
		{"same observation again", newer, false},
	}
	for _, s := range steps {
		got, err := st.PutFee(ctx, s.give)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s: PutFee() stored = %t, want %t", s.name, got, s.want)
		}
	}
	fees, err := st.Fees(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]custody.FeeEstimate{newer, eth}, fees); diff != "" {
		t.Errorf("Fees() mismatch (-want +got):\n%s", diff)
	}
}

func TestFeesEmpty(t *testing.T) {
	t.Parallel()
	fees, err := newStore(t).Fees(context.Background())
	if err != nil || fees == nil || len(fees) != 0 {
		t.Errorf("Fees() of an empty store = %v, %v; want an empty list", fees, err)
	}
}
