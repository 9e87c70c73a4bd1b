package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/services/apperr"
	"github.com/zcustody/suite/services/trading"
	"github.com/zcustody/suite/services/trading/store"
)

func movement(t *testing.T, in trading.MovementInput) trading.Movement {
	t.Helper()
	m, err := trading.ParseMovement(in)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// funded stores a ZTEST BTC wallet holding available and ledger amount.
func funded(t *testing.T, st *store.Store, amount string) trading.Wallet {
	t.Helper()
	w := wallet("ZTEST-TW-AAAAAAAAA1", "ZTEST", "BYBIT", "Alpha", trading.StatusActive, "BTC", "a@x", t0)
	w.Balances[0].Available, w.Balances[0].Ledger = amount, amount
	insert(t, st, w)
	return w
}

func balance(t *testing.T, st *store.Store, company, id string) trading.Balance {
	t.Helper()
	w, err := st.Wallet(context.Background(), company, id)
	if err != nil {
		t.Fatal(err)
	}
	return w.Balances[0]
}

func TestApplyMovementOnce(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	w := funded(t, st, "2.5")
	m := movement(t, trading.MovementInput{ID: "S1:PAY_IN:leg1:hold", CompanyID: "ZTEST", WalletID: w.ID, Currency: "BTC",
		Available: "-1.25", PendingOut: "1.25"})
	want := trading.Balance{Currency: "BTC", Available: "1.25", Ledger: "2.5", PendingOut: "1.25", PendingIn: "0", FeeBuffer: "0",
		SubClients: map[string]string{}}
	for i, wantApplied := range []bool{true, false, false} {
		got, err := st.ApplyMovement(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		if got.Applied != wantApplied {
			t.Errorf("call %d: applied %v, want %v", i+1, got.Applied, wantApplied)
		}
		if diff := cmp.Diff(want, got.Balance); diff != "" {
			t.Errorf("call %d: balance diff (-want +got):\n%s", i+1, diff)
		}
	}
	if diff := cmp.Diff(want, balance(t, st, "ZTEST", w.ID)); diff != "" {
		t.Errorf("stored balance diff (-want +got):\n%s", diff)
	}
}

func TestApplyMovementRefusals(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	w := funded(t, st, "1")
	tests := []struct {
		name     string
		give     trading.MovementInput
		wantCode codes.Code
	}{
		{"overdraft", trading.MovementInput{ID: "M1", CompanyID: "ZTEST", WalletID: w.ID, Currency: "BTC", Available: "-1.00000001", Ledger: "-1.00000001"}, codes.FailedPrecondition},
		{"other company", trading.MovementInput{ID: "M2", CompanyID: "ZACME", WalletID: w.ID, Currency: "BTC", Available: "1"}, codes.NotFound},
		{"unknown wallet", trading.MovementInput{ID: "M3", CompanyID: "ZTEST", WalletID: "ZTEST-TW-NOPE000001", Currency: "BTC", Available: "1"}, codes.NotFound},
		{"currency not held", trading.MovementInput{ID: "M4", CompanyID: "ZTEST", WalletID: w.ID, Currency: "ETH", Available: "1"}, codes.InvalidArgument},
		{"debit of a new venue wallet", trading.MovementInput{ID: "M5", CompanyID: "VENUE-X", WalletID: "X-ISW-BTC", Currency: "BTC", Available: "-1"}, codes.FailedPrecondition},
	}
	for _, tt := range tests {
		_, err := st.ApplyMovement(context.Background(), movement(t, tt.give))
		if status.Code(err) != tt.wantCode {
			t.Errorf("%s: err = %v, want %s", tt.name, err, tt.wantCode)
		}
	}
	if got := balance(t, st, "ZTEST", w.ID); got.Available != "1" || got.Ledger != "1" {
		t.Errorf("refused movements changed the wallet: %+v", got)
	}
	// A refused movement is not recorded: once funded, the same id applies.
	if _, err := st.ApplyMovement(context.Background(), movement(t, trading.MovementInput{ID: "M1-credit", CompanyID: "ZTEST",
		WalletID: w.ID, Currency: "BTC", Available: "1", Ledger: "1"})); err != nil {
		t.Fatal(err)
	}
	got, err := st.ApplyMovement(context.Background(), movement(t, tests[0].give))
	if err != nil || !got.Applied || got.Balance.Available != "0.99999999" {
		t.Errorf("retried M1 = %+v, %v; want applied, 0.99999999 left", got, err)
	}
}

func TestApplyMovementCreatesVenueWallets(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	m := movement(t, trading.MovementInput{ID: "S1:PAY_IN:leg1:credit", CompanyID: "VENUE-BYBIT", WalletID: "BYBIT-ISW-USDC",
		Currency: "USDC", Available: "65000.5", Ledger: "65000.5"})
	if _, err := st.ApplyMovement(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	w, err := st.Wallet(context.Background(), "VENUE-BYBIT", "BYBIT-ISW-USDC")
	if err != nil {
		t.Fatal(err)
	}
	if w.VenueID != "BYBIT" || w.Currency != "USDC" || w.CreatedBy != trading.VenueWalletCreator || w.Balances[0].Available != "65000.5" {
		t.Errorf("venue wallet %+v, want BYBIT's USDC settlement wallet holding 65000.5", w)
	}
	if _, err := st.Wallet(context.Background(), "ZTEST", "BYBIT-ISW-USDC"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("a company reads the venue's wallet: %v", err)
	}
}

// TestApplyMovementConcurrently: racing distinct movements all apply, exactly; racing copies
// of one movement apply once.
func TestApplyMovementConcurrently(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	w := funded(t, st, "10")
	var wg sync.WaitGroup
	applied := make(chan bool, 40)
	for i := range 20 {
		wg.Go(func() {
			m := movement(t, trading.MovementInput{ID: fmt.Sprintf("D%d", i), CompanyID: "ZTEST", WalletID: w.ID, Currency: "BTC",
				Available: "-0.1", Ledger: "-0.1"})
			if _, err := st.ApplyMovement(context.Background(), m); err != nil {
				t.Errorf("movement D%d: %v", i, err)
			}
		})
		wg.Go(func() {
			m := movement(t, trading.MovementInput{ID: "SAME", CompanyID: "ZTEST", WalletID: w.ID, Currency: "BTC",
				Available: "-1", Ledger: "-1"})
			got, err := st.ApplyMovement(context.Background(), m)
			if err != nil {
				t.Errorf("movement SAME: %v", err)
			}
			applied <- got.Applied
		})
	}
	wg.Wait()
	close(applied)
	n := 0
	for a := range applied {
		if a {
			n++
		}
	}
	if n != 1 {
		t.Errorf("SAME applied %d times, want 1", n)
	}
	if got := balance(t, st, "ZTEST", w.ID); got.Available != "7" || got.Ledger != "7" {
		t.Errorf("balance %s/%s after 20 × 0.1 and 1 × 1, want 7/7", got.Available, got.Ledger)
	}
}

// TestApplyMovementRepeatsAreNotOverdrafts: copies of a movement that empties the wallet,
// racing, apply once; none is mistaken for an overdraft by reading the wallet it emptied.
func TestApplyMovementRepeatsAreNotOverdrafts(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	w := funded(t, st, "0.3")
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			m := movement(t, trading.MovementInput{ID: "EMPTY", CompanyID: "ZTEST", WalletID: w.ID, Currency: "BTC",
				Available: "-0.3", Ledger: "-0.3"})
			if _, err := st.ApplyMovement(context.Background(), m); err != nil {
				t.Errorf("repeat of an applied movement: %v", err)
			}
		})
	}
	wg.Wait()
	if got := balance(t, st, "ZTEST", w.ID); got.Available != "0" || got.Ledger != "0" {
		t.Errorf("balance %s/%s, want 0/0", got.Available, got.Ledger)
	}
}
