package trading

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// format keeps the value and every decimal, and pads to the asked decimals exactly as
// StringFixed does.
func TestFormatPadsLikeStringFixed(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		d := decimal.New(r.Int64N(2_000_000_001)-1_000_000_000, -r.Int32N(12))
		places := r.Int32N(10)
		got := format(d, places)
		if !decimal.RequireFromString(got).Equal(d) {
			t.Fatalf("format(%s, %d) = %s: another value", d, places, got)
		}
		have := decimals(d.String())
		if want := max(have, int(places)); decimals(got) != want {
			t.Fatalf("format(%s, %d) = %s: %d decimals, want %d", d, places, got, decimals(got), want)
		}
		if have < int(places) && got != d.StringFixed(places) {
			t.Fatalf("format(%s, %d) = %s, want StringFixed's %s", d, places, got, d.StringFixed(places))
		}
	}
}

func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}
