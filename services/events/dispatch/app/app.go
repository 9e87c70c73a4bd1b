// Package app wires the webhook dispatcher: it shares the events service's database and
// serves no gRPC method but health.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/webhook"
	eventsapp "github.com/zcustody/suite/services/events/app"
	"github.com/zcustody/suite/services/events/dispatch"
	"github.com/zcustody/suite/services/events/store"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/authz"
)

// Name is the dispatcher's name: its log tag and health entry. Its database is the events
// service's (eventsapp.Name).
const Name = "dispatcher"

// Config is the dispatcher's configuration.
type Config struct {
	config.Common
	// Webhooks are the keyring and the URL switches, as the events service reads them.
	eventsapp.WebhookConfig
	// Schedule is the retry schedule (webhook.ParseSchedule); empty is the default. A
	// schedule spanning less than 24 h is refused with PRODUCTION=true.
	Schedule string        `env:"WEBHOOK_SCHEDULE"`
	Timeout  time.Duration `env:"WEBHOOK_TIMEOUT, default=15s"`
	// SuspendAfter is the run of nothing but failures after which a subscription is suspended.
	SuspendAfter time.Duration `env:"SUSPEND_AFTER, default=120h"`
	Interval     time.Duration `env:"DISPATCH_INTERVAL, default=100ms"`
	// Workers are the requests a replica has in flight at once; PerSubscription those of one
	// subscription, so that slow endpoints never hold every worker.
	Workers         int           `env:"DISPATCH_WORKERS, default=8"`
	PerSubscription int           `env:"DISPATCH_PER_SUBSCRIPTION, default=2"`
	Lease           time.Duration `env:"DELIVERY_LEASE, default=30s"`
	Retention       time.Duration `env:"WEBHOOK_RETENTION, default=720h"`
	// Now is the clock (tests); nil is the system clock.
	Now func() time.Time
}

// Options checks cfg and returns the dispatcher's options (without Owner and Logger).
func (c Config) Options() (dispatch.Options, error) {
	var errs []error
	if c.Timeout <= 0 || c.SuspendAfter <= 0 || c.Interval <= 0 || c.Lease <= 0 || c.Retention <= 0 {
		errs = append(errs, errors.New("WEBHOOK_TIMEOUT, SUSPEND_AFTER, DISPATCH_INTERVAL, DELIVERY_LEASE and WEBHOOK_RETENTION must be positive"))
	}
	if c.Workers <= 0 || c.PerSubscription <= 0 || c.PerSubscription > c.Workers {
		errs = append(errs, fmt.Errorf("DISPATCH_WORKERS (%d) and DISPATCH_PER_SUBSCRIPTION (%d) must be positive, the second no larger than the first",
			c.Workers, c.PerSubscription))
	}
	if c.Lease <= c.Timeout {
		errs = append(errs, fmt.Errorf("DELIVERY_LEASE (%s) must outlive WEBHOOK_TIMEOUT (%s)", c.Lease, c.Timeout))
	}
	rules, err := c.Rules(c.Production)
	if err != nil {
		errs = append(errs, err)
	}
	schedule := webhook.DefaultSchedule
	if c.Schedule != "" {
		s, err := webhook.ParseSchedule(c.Schedule, !c.Production)
		if err != nil {
			errs = append(errs, fmt.Errorf("WEBHOOK_SCHEDULE: %w", err))
		}
		schedule = s
	}
	keyring, err := c.Keyring(c.Production)
	if err == nil && keyring == nil {
		err = errors.New("no keys")
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("WEBHOOK_KEYS / WEBHOOK_KEY_CURRENT: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return dispatch.Options{}, err
	}
	rules.Timeout = c.Timeout
	client := webhook.NewClient(rules)
	return dispatch.Options{Keyring: keyring, Client: client, Schedule: schedule, SuspendAfter: c.SuspendAfter, Lease: c.Lease,
		Retention: c.Retention, Workers: c.Workers, PerSubscription: c.PerSubscription, Now: c.Now}, nil
}

// Run starts the dispatcher and runs until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if cfg.Database == "" {
		cfg.Database = eventsapp.Name
	}
	if _, err := cfg.Options(); err != nil {
		return err
	}
	return app.Start(ctx, cfg.Common, Name, logger, authz.Policy{}, func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds the dispatcher on deps: the store and its indexes, and the passes.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	opts, err := cfg.Options()
	if err != nil {
		return err
	}
	opts.Owner, opts.Logger = eventsapp.Owner(), deps.Logger
	st := store.New(deps.DB, opts.Owner, cfg.Lease, cfg.Now)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	d := dispatch.New(st, opts)
	// Nothing in this process learns that events were logged (the events service places them),
	// so an idle dispatcher backs off to ten intervals at most, not to POLL_IDLE. A pass does
	// not wait for its requests; a request that ends wakes the next pass.
	deps.Poll("dispatch", cfg.Interval, min(cfg.PollIdle, 10*cfg.Interval), d.Freed, func(ctx context.Context) int {
		n, err := d.Dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			deps.Logger.Warn("dispatch", "error", err.Error())
			return 1 // try again soon
		}
		return n
	})
	// The requests end with the context (their leases lapse); the database stays until they have.
	deps.OnClose(func() { _ = d.Wait() })
	deps.Every("dispatch-staged", 10*cfg.Interval, func(ctx context.Context) {
		if _, err := d.RelayStaged(ctx); err != nil && ctx.Err() == nil {
			deps.Logger.Warn("dispatch staged events", "error", err.Error())
		}
	})
	// After a key-encryption key rotation (WEBHOOK_KEY_CURRENT moved): a minute after start,
	// then hourly while nothing is left to do.
	deps.Poll("dispatch-reseal", time.Minute, time.Hour, nil, func(ctx context.Context) int {
		resealed, left, err := d.Reseal(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			deps.Logger.Warn("reseal webhook subscriptions", "error", err.Error())
			return 1
		case resealed > 0 || left > 0:
			deps.Logger.Info("resealed webhook subscriptions under the current key", "key", opts.Keyring.Current(),
				"resealed", resealed, "left", left)
		default:
			// What an operator waits for before dropping an old key from WEBHOOK_KEYS.
			deps.Logger.Info("every webhook subscription is sealed under the current key", "key", opts.Keyring.Current())
		}
		// A pass that resealed something looks again soon (a subscription that changed
		// meanwhile is left for it); one with nothing to do, or only unreadable values,
		// backs off to hourly.
		return resealed
	})
	deps.Every("dispatch-retention", time.Hour, func(ctx context.Context) {
		if _, err := d.Prune(ctx); err != nil && ctx.Err() == nil {
			deps.Logger.Warn("dispatch retention", "error", err.Error())
		}
	})
	return nil
}
