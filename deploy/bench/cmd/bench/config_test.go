package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
			Concurrency: []int{1, 4, 16, 64}, Overload: 5 * time.Second, Out: ".data/bench", Pin: true}},
		{name: "MongoDB server keeps the issue's N", giveEnv: map[string]string{"MONGODB_URI": "mongodb://db:27017"},
			want: config{N: defaultN, Duration: 3 * time.Second, Warmup: time.Second, Concurrency: []int{1, 4, 16, 64},
				Overload: 5 * time.Second, Out: ".data/bench", MongoURI: "mongodb://db:27017", Pin: true}},
		{name: "environment over default, flag over environment",
			giveEnv: map[string]string{"BENCH_N": "500", "BENCH_DURATION": "2s", "BENCH_CONCURRENCY": "2,8", "BENCH_PIN": "false"},
			giveArg: []string{"-n", "300"},
			want: config{N: 300, Duration: 2 * time.Second, Warmup: time.Second, Concurrency: []int{2, 8},
				Overload: 5 * time.Second, Out: ".data/bench"}},
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
