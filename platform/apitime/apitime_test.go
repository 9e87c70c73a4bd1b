package apitime_test

import (
	"testing"
	"time"

	"github.com/zcustody/suite/platform/apitime"
)

func TestFormat(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		give time.Time
		want string
	}{
		{time.Time{}, ""},
		{time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC), "2026-11-21T10:15:30.123Z"},
		{time.Date(2026, 11, 21, 10, 15, 30, 0, time.UTC), "2026-11-21T10:15:30.000Z"},
		{time.Date(2026, 11, 21, 11, 15, 30, 5_000_000, paris), "2026-11-21T10:15:30.005Z"},
	}
	for _, tt := range tests {
		if got := apitime.Format(tt.give); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
