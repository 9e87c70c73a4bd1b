package webhook_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/webhook"
)

func TestDefaultScheduleSpansADay(t *testing.T) {
	t.Parallel()
	s := webhook.DefaultSchedule
	if s.Attempts() != 13 {
		t.Errorf("%d attempts, want 13", s.Attempts())
	}
	var longest time.Duration
	for made := 1; made < s.Attempts(); made++ {
		d, err := s.Next(made, 0, 0.999999)
		if err != nil {
			t.Fatalf("after attempt %d: %v", made, err)
		}
		longest += d
	}
	if span := s.Span(); span < webhook.MinSpan || span > 26*time.Hour {
		t.Errorf("shortest span %s, want between 24 h and 26 h", span)
	}
	if longest < 38*time.Hour || longest > 39*time.Hour {
		t.Errorf("longest span %s, want about 38 h 15 min (+20 %%)", longest)
	}
	if _, err := s.Next(s.Attempts(), 0, 0.5); !errors.Is(err, webhook.ErrExhausted) {
		t.Errorf("after the last attempt: %v, want ErrExhausted", err)
	}
}

func TestNextJitterAndRetryAfter(t *testing.T) {
	t.Parallel()
	s := webhook.Schedule{Delays: []time.Duration{10 * time.Second, time.Minute}, Jitter: 0.2}
	tests := []struct {
		made       int
		retryAfter time.Duration
		r          float64
		want       time.Duration
	}{
		{1, 0, 0.5, 10 * time.Second},
		{1, 0, 0, 8 * time.Second},
		{2, 0, 0.75, 66 * time.Second},
		{1, 2 * time.Minute, 0.5, 2 * time.Minute}, // the receiver asks for longer
		{2, 5 * time.Second, 0.5, time.Minute},     // a shorter Retry-After does not hurry us
	}
	for _, tt := range tests {
		if got, err := s.Next(tt.made, tt.retryAfter, tt.r); err != nil || got != tt.want {
			t.Errorf("Next(%d, %s, %g) = %s, %v; want %s", tt.made, tt.retryAfter, tt.r, got, err, tt.want)
		}
	}
	for i := 0; i < 100; i++ {
		d, err := s.Jittered(1, 0)
		if err != nil || d < 8*time.Second || d > 12*time.Second {
			t.Fatalf("Jittered(1) = %s, %v; want within ±20 %% of 10 s", d, err)
		}
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	s, err := webhook.ParseSchedule("1s, 2s,3s ±10%", true)
	if err != nil || len(s.Delays) != 3 || s.Delays[1] != 2*time.Second || s.Jitter != 0.1 {
		t.Fatalf("ParseSchedule = %+v, %v", s, err)
	}
	if s, err := webhook.ParseSchedule("10h,10h,10h +-10%", false); err != nil || s.Span() != 27*time.Hour {
		t.Errorf("a 30 h schedule: %+v, %v", s, err)
	}
	for _, bad := range []string{"", "1s,,2s", "-1s", "1s ±100%", "1s ±x", "1s,2s"} {
		if _, err := webhook.ParseSchedule(bad, bad == "1s ±100%" || bad == "1s ±x"); err == nil {
			t.Errorf("ParseSchedule(%q) accepted", bad)
		}
	}
}
