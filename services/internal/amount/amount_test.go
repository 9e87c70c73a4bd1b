package amount_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zcustody/suite/services/internal/amount"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		wantErr error
	}{
		{"0", nil}, {"12", nil}, {"12.5", nil}, {"0.00000001", nil}, {"123456789012345678.123456789012345678", nil},
		{"", amount.ErrNotCanonical}, {"-1", amount.ErrNotCanonical}, {"+1", amount.ErrNotCanonical}, {"01", amount.ErrNotCanonical},
		{"1.50", amount.ErrNotCanonical}, {"1.", amount.ErrNotCanonical}, {".5", amount.ErrNotCanonical}, {"1e3", amount.ErrNotCanonical},
		{"1,5", amount.ErrNotCanonical}, {" 1", amount.ErrNotCanonical}, {"NaN", amount.ErrNotCanonical}, {"0.0", amount.ErrNotCanonical},
		{strings.Repeat("9", 40), amount.ErrTooLong},
	}
	for _, tt := range tests {
		d, err := amount.Parse(tt.give)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Parse(%q) error = %v, want %v", tt.give, err, tt.wantErr)
			continue
		}
		if err == nil && amount.Format(d) != tt.give {
			t.Errorf("Format(Parse(%q)) = %q, want the input back", tt.give, amount.Format(d))
		}
	}
	if _, err := amount.ParsePositive("0"); !errors.Is(err, amount.ErrNotPositive) {
		t.Errorf("ParsePositive(0) error = %v, want ErrNotPositive", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-1", "1e3", "00.1", "0.10", "123456789.987654321"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := amount.Parse(s)
		if err != nil {
			return
		}
		if got := amount.Format(d); got != s {
			t.Fatalf("Parse accepted %q but formats it as %q", s, got)
		}
		if d.IsNegative() {
			t.Fatalf("Parse accepted a negative amount %q", s)
		}
	})
}
