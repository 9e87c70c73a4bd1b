package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zcustody/suite/deploy/bench/internal/journalcost"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		giveArg []string
		giveEnv map[string]string
		want    config
	}{
		{name: "embedded database defaults", want: config{N: embeddedN, Duration: 3 * time.Second, Warmup: time.Second,
			Concurrency: []int{1, 4, 16, 64}, Overload: 5 * time.Second, Out: ".data/bench", Pin: true, Legs: journalcost.DefaultLegs, Delivery: 10 * time.Second}},
		{name: "MongoDB server keeps the issue's N", giveEnv: map[string]string{"MONGODB_URI": "mongodb://db:27017"},
			want: config{N: defaultN, Duration: 3 * time.Second, Warmup: time.Second, Concurrency: []int{1, 4, 16, 64},
				Overload: 5 * time.Second, Out: ".data/bench", MongoURI: "mongodb://db:27017", Pin: true, Legs: journalcost.DefaultLegs, Delivery: 10 * time.Second}},
		{name: "environment over default, flag over environment",
			giveEnv: map[string]string{"BENCH_N": "500", "BENCH_DURATION": "2s", "BENCH_CONCURRENCY": "2,8", "BENCH_PIN": "false",
				"BENCH_LEGS": "50", "BENCH_JOURNAL_ONLY": "true", "BENCH_DELIVERY": "0"},
			giveArg: []string{"-n", "300", "-legs", "200"},
			want: config{N: 300, Duration: 2 * time.Second, Warmup: time.Second, Concurrency: []int{2, 8},
				Overload: 5 * time.Second, Out: ".data/bench", Legs: 200, JournalOnly: true}},
		{name: "no journal scenario", giveEnv: map[string]string{"BENCH_LEGS": "0"},
			want: config{N: embeddedN, Duration: 3 * time.Second, Warmup: time.Second, Concurrency: []int{1, 4, 16, 64},
				Overload: 5 * time.Second, Out: ".data/bench", Pin: true, Delivery: 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseConfig(tt.giveArg, func(k string) string { return tt.giveEnv[k] })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("parseConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		giveArg []string
		giveEnv map[string]string
	}{
		{name: "unparsable environment", giveEnv: map[string]string{"BENCH_DURATION": "soon"}},
		{name: "too few documents for a page", giveArg: []string{"-n", "50"}},
		{name: "bad concurrency", giveArg: []string{"-concurrency", "1,0"}},
		{name: "stray argument", giveArg: []string{"now"}},
		{name: "one leg is no many-leg entry", giveArg: []string{"-legs", "1"}},
		{name: "more legs than an entry takes", giveEnv: map[string]string{"BENCH_LEGS": "2048"}},
		{name: "journal only without the journal", giveArg: []string{"-journal-only", "-legs", "0"}},
		{name: "negative delivery phase", giveArg: []string{"-delivery", "-1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := parseConfig(tt.giveArg, func(k string) string { return tt.giveEnv[k] }); err == nil {
				t.Error("parseConfig succeeded, want an error")
			}
		})
	}
}
