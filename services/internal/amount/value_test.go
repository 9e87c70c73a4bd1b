package amount_test

import (
	"errors"
	"testing"

	"github.com/zcustody/suite/services/internal/amount"
)

func TestParseSigned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		places  int32
		wantErr error
	}{
		{"0", 8, nil}, {"-1.5", 8, nil}, {"2", 0, nil}, {"-0.00000001", 8, nil}, {"100000000000000000.000000000000000001", 18, nil},
		{"-0", 8, amount.ErrNotCanonical}, {"+1", 8, amount.ErrNotCanonical}, {"1.50", 8, amount.ErrNotCanonical},
		{"-01", 8, amount.ErrNotCanonical}, {"1e3", 8, amount.ErrNotCanonical}, {"", 8, amount.ErrNotCanonical},
		{"0.000000001", 8, amount.ErrTooFine}, {"-1.5", 0, amount.ErrTooFine},
	}
	for _, tt := range tests {
		a, err := amount.ParseSigned(tt.give, tt.places)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("ParseSigned(%q, %d) = %v, want %v", tt.give, tt.places, err, tt.wantErr)
			continue
		}
		if err == nil && a.String() != tt.give {
			t.Errorf("ParseSigned(%q).String() = %q, want the input back", tt.give, a.String())
		}
	}
}

func TestAmountArithmeticIsExact(t *testing.T) {
	t.Parallel()
	a, b := amount.MustStored("0.1"), amount.MustStored("0.2")
	if got := a.Add(b).String(); got != "0.3" {
		t.Errorf("0.1 + 0.2 = %s, want 0.3", got)
	}
	wei := amount.MustStored("100.000000000000000001")
	if got := wei.Sub(amount.MustStored("20.500000000000000001")).String(); got != "79.5" {
		t.Errorf("wei difference = %s, want 79.5", got)
	}
	if got := a.Neg().Abs().Cmp(a); got != 0 {
		t.Errorf("|-0.1| compared with 0.1 = %d", got)
	}
	if _, err := amount.ParsePositiveAmount("0", 8); !errors.Is(err, amount.ErrNotPositive) {
		t.Errorf("ParsePositiveAmount(0) = %v, want ErrNotPositive", err)
	}
}

func TestParsePrice(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		give string
		ok   bool
	}{{"65000.00", true}, {"0.12", true}, {"0", true}, {"-1", false}, {"1e3", false}, {"01", false}, {"1.", false}} {
		_, err := amount.ParsePrice(tt.give)
		if (err == nil) != tt.ok {
			t.Errorf("ParsePrice(%q) = %v, want ok %v", tt.give, err, tt.ok)
		}
	}
}
