package webhook

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Schedule says when a failed delivery is tried again: Delays[i] is the wait before attempt
// i+2 (the first attempt goes at once), each jittered by up to ±Jitter of itself. After
// len(Delays)+1 attempts the delivery has failed for good (and stays resendable).
type Schedule struct {
	Delays []time.Duration
	Jitter float64
}

// DefaultSchedule is 13 attempts over about 31 h 53 min (still about 25.5 h with every
// delay jittered short): at once, then after 10 s, 30 s, 2 min, 5 min, 15 min, 30 min, 1 h,
// 2 h, 4 h, 8 h, 8 h and 8 h, each ±20 %.
var DefaultSchedule = Schedule{Jitter: 0.2, Delays: []time.Duration{
	10 * time.Second, 30 * time.Second, 2 * time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}}

// MinSpan is the least a production schedule must span with every delay jittered short: a
// receiver down for a day loses nothing.
const MinSpan = 24 * time.Hour

// ParseSchedule reads a schedule setting: delays separated by commas (Go durations), then
// optionally "±" or "+-" and the jitter as a percentage, e.g. "10s,30s,2m ±20%". A schedule
// that spans less than MinSpan is refused unless short (tests compress it to seconds).
func ParseSchedule(text string, short bool) (Schedule, error) {
	delays, jitter, _ := strings.Cut(strings.ReplaceAll(text, "+-", "±"), "±")
	var s Schedule
	for part := range strings.SplitSeq(delays, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return Schedule{}, fmt.Errorf("webhook schedule: %q is not a positive duration", strings.TrimSpace(part))
		}
		s.Delays = append(s.Delays, d)
	}
	if j := strings.TrimSpace(jitter); j != "" {
		var pct float64
		if _, err := fmt.Sscanf(strings.TrimSuffix(j, "%"), "%g", &pct); err != nil || pct < 0 || pct >= 100 {
			return Schedule{}, fmt.Errorf("webhook schedule: jitter %q: want a percentage from 0 to below 100", j)
		}
		s.Jitter = pct / 100
	}
	if !short && s.Span() < MinSpan {
		return Schedule{}, fmt.Errorf("webhook schedule: spans %s with every delay jittered short, want at least %s", s.Span(), MinSpan)
	}
	return s, nil
}

// Span is how long the schedule keeps trying at the least: every delay jittered short.
func (s Schedule) Span() time.Duration {
	var total time.Duration
	for _, d := range s.Delays {
		total += time.Duration(float64(d) * (1 - s.Jitter))
	}
	return total
}

// Attempts is how many attempts a delivery gets before it has failed for good.
func (s Schedule) Attempts() int { return len(s.Delays) + 1 }

// ErrExhausted says a delivery used every attempt of its schedule.
var ErrExhausted = errors.New("webhook: every attempt of the schedule used")

// Next returns how long to wait after the failed attempt number made (1 for the first) before
// the next one: the schedule's delay jittered by r (a random number in [0, 1)), or the
// receiver's Retry-After when that asks for longer. It returns ErrExhausted after the last.
func (s Schedule) Next(made int, retryAfter time.Duration, r float64) (time.Duration, error) {
	if made < 1 {
		return 0, fmt.Errorf("webhook schedule: attempt %d: attempts count from 1", made)
	}
	if made > len(s.Delays) {
		return 0, ErrExhausted
	}
	d := time.Duration(float64(s.Delays[made-1]) * (1 + s.Jitter*(2*r-1)))
	return max(d, retryAfter), nil
}

// Jittered is Next with a random draw.
func (s Schedule) Jittered(made int, retryAfter time.Duration) (time.Duration, error) {
	return s.Next(made, retryAfter, rand.Float64())
}
