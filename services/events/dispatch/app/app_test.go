package app_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/zcustody/suite/platform/config"
	eventsapp "github.com/zcustody/suite/services/events/app"
	"github.com/zcustody/suite/services/events/dispatch/app"
)

var key = "k1=" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// TestConfigFromEnv: the settings' names and defaults.
func TestConfigFromEnv(t *testing.T) {
	t.Setenv("MONGODB_URI", "mongodb://127.0.0.1:1")
	t.Setenv("PRINCIPAL_PUBLIC_KEY_FILE", "x.pem")
	t.Setenv("WEBHOOK_KEYS", key)
	t.Setenv("WEBHOOK_KEY_CURRENT", "k1")
	t.Setenv("SUSPEND_AFTER", "1h")
	var cfg app.Config
	if err := config.Load(context.Background(), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout != 15*time.Second || cfg.SuspendAfter != time.Hour || cfg.Interval != 100*time.Millisecond || cfg.Lease != 30*time.Second ||
		cfg.Retention != 720*time.Hour || cfg.Workers != 8 || cfg.PerSubscription != 2 || cfg.AllowHTTP || cfg.AllowPrivate {
		t.Errorf("config = %+v", cfg)
	}
	opts, err := cfg.Options()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Schedule.Attempts() != 13 || opts.SuspendAfter != time.Hour || opts.Keyring == nil {
		t.Errorf("options = %+v, want the default schedule", opts)
	}
}

// TestConfigRefusals: production refuses plain http, private addresses and short schedules.
func TestConfigRefusals(t *testing.T) {
	base := app.Config{WebhookConfig: eventsapp.WebhookConfig{Keys: key, KeyCurrent: "k1"}, Timeout: 15 * time.Second, SuspendAfter: time.Hour, Interval: time.Second,
		Workers: 8, PerSubscription: 2, Lease: 30 * time.Second, Retention: time.Hour}
	short := base
	short.Schedule = "1s,2s"
	if _, err := short.Options(); err != nil {
		t.Errorf("a short schedule outside production: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(*app.Config)
		want   string
	}{
		"http in production":      {func(c *app.Config) { c.Production, c.AllowHTTP = true, true }, "WEBHOOK_ALLOW_HTTP"},
		"private in production":   {func(c *app.Config) { c.Production, c.AllowPrivate = true, true }, "WEBHOOK_ALLOW_PRIVATE"},
		"short in production":     {func(c *app.Config) { c.Production, c.Schedule = true, "1s,2s" }, "WEBHOOK_SCHEDULE"},
		"lease within a timeout":  {func(c *app.Config) { c.Lease = 10 * time.Second }, "DELIVERY_LEASE"},
		"no keys":                 {func(c *app.Config) { c.Keys = "" }, "WEBHOOK_KEYS"},
		"no workers":              {func(c *app.Config) { c.Workers = 0 }, "DISPATCH_WORKERS"},
		"a subscription over all": {func(c *app.Config) { c.PerSubscription = 9 }, "DISPATCH_PER_SUBSCRIPTION"},
	} {
		c := base
		tc.change(&c)
		if _, err := c.Options(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tc.want)
		}
	}
}
