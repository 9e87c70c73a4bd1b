// Package app wires the events service: the log's intake, sequencer and retention, the
// search and the stream.
package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/webhook"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/events/server"
	"github.com/zcustody/suite/services/events/store"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/wake"
)

// Name is the service's name: its database, log tag and health entry.
const Name = "events"

// Config is the events service's configuration.
type Config struct {
	config.Common
	// SequenceInterval is how often the sequencer places the relayed events in the log.
	SequenceInterval time.Duration `env:"SEQUENCE_INTERVAL, default=50ms"`
	// SequencerLease is how long a replica holds a company's sequencer without renewing it.
	SequencerLease time.Duration `env:"SEQUENCER_LEASE, default=15s"`
	// Retention is how long events are kept (searchable, streamable, resendable).
	Retention time.Duration `env:"EVENT_RETENTION, default=720h"`
	// WatchPoll and WatchHeartbeat tune WatchEvents streams.
	WatchPoll      time.Duration `env:"WATCH_POLL, default=250ms"`
	WatchHeartbeat time.Duration `env:"WATCH_HEARTBEAT, default=10s"`
	// WatchSystems are the internal systems that may stream any company's events, comma
	// separated; companies always stream their own.
	WatchSystems string `env:"WATCH_SYSTEMS, default=settlement-engine"`
	Webhooks     WebhookConfig
	// Now is the clock (tests); nil is the system clock.
	Now func() time.Time
}

// Watchers are the internal systems of WatchSystems.
func (c Config) Watchers() []string {
	var out []string
	for w := range strings.SplitSeq(c.WatchSystems, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// WebhookConfig is what the events service and the dispatcher share about webhooks: the
// keyring that seals secrets and signing seeds, and which URLs may be subscribed.
type WebhookConfig struct {
	// Keys is the key-encryption keys, "id=base64,id2=base64" (32 bytes each); KeyCurrent
	// names the one that seals. Unset, the subscription endpoints answer "not configured".
	Keys       string `env:"WEBHOOK_KEYS"`
	KeyCurrent string `env:"WEBHOOK_KEY_CURRENT"`
	// AllowHTTP and AllowPrivate let subscriptions use plain http and loopback, private or
	// link-local addresses: for development and tests only, refused with PRODUCTION=true.
	AllowHTTP    bool `env:"WEBHOOK_ALLOW_HTTP, default=false"`
	AllowPrivate bool `env:"WEBHOOK_ALLOW_PRIVATE, default=false"`
}

// publishedWebhookKeys are the SHA-256 of every key-encryption key written in this
// repository, with where: with PRODUCTION=true a keyring holding one is refused, as the demo
// signing keys are (platform/config).
var publishedWebhookKeys = map[string]string{
	"24f0527725f6fce3e05c8144162be997b1b857f8f8efa9cd78f6788912a3620f": "deploy/k8s/base/secrets/webhook-keys.env",
	"46f868a7c8ae62028250d4a9c4883ded2021467de198bbe4db658f0a97d0ae3b": "deploy/local/stack (make run)",
	"630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd": "the events service's tests",
	"66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925": "32 zero bytes (the start-up tests)",
}

// Keyring returns the sealing keyring, nil when no keys are configured. With production set,
// a keyring holding a key published in this repository is refused.
func (w WebhookConfig) Keyring(production bool) (*webhook.Keyring, error) {
	if w.Keys == "" {
		return nil, nil
	}
	if production {
		for entry := range strings.SplitSeq(w.Keys, ",") {
			id, b64, _ := strings.Cut(strings.TrimSpace(entry), "=")
			key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
			if err != nil {
				continue // ParseKeyring says what is wrong with it
			}
			sum := sha256.Sum256(key)
			if where, ok := publishedWebhookKeys[hex.EncodeToString(sum[:])]; ok {
				return nil, fmt.Errorf("WEBHOOK_KEYS: key %q is published (%s), refused with PRODUCTION=true", strings.TrimSpace(id), where)
			}
		}
	}
	return webhook.ParseKeyring(w.KeyCurrent, w.Keys)
}

// Rules returns the URL rules, refusing the development switches in production.
func (w WebhookConfig) Rules(production bool) (webhook.ClientConfig, error) {
	if production && (w.AllowHTTP || w.AllowPrivate) {
		return webhook.ClientConfig{}, fmt.Errorf("WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE are refused with PRODUCTION=true")
	}
	return webhook.ClientConfig{AllowHTTP: w.AllowHTTP, AllowPrivate: w.AllowPrivate}, nil
}

func (c Config) validate() error {
	if c.SequenceInterval <= 0 || c.SequencerLease <= 0 || c.Retention <= 0 || c.WatchPoll <= 0 || c.WatchHeartbeat <= 0 {
		return fmt.Errorf("SEQUENCE_INTERVAL, SEQUENCER_LEASE, EVENT_RETENTION, WATCH_POLL and WATCH_HEARTBEAT must be positive")
	}
	if c.SequencerLease < 4*c.SequenceInterval {
		return fmt.Errorf("SEQUENCER_LEASE (%s) must be at least four SEQUENCE_INTERVALs (%s)", c.SequencerLease, c.SequenceInterval)
	}
	return nil
}

// Run starts the events service and serves until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	return app.Start(ctx, cfg.Common, Name, logger, server.Policy(cfg.Watchers()...), func(ctx context.Context, deps *app.Deps) error {
		return Register(ctx, deps, cfg)
	})
}

// Register builds the events service on deps: its store and indexes, its gRPC services, the
// sequencer and the retention pass.
func Register(ctx context.Context, deps *app.Deps, cfg Config) error {
	st := store.New(deps.DB, Owner(), cfg.SequencerLease, cfg.Now)
	if err := st.EnsureIndexes(ctx); err != nil {
		return err
	}
	appended := wake.New()
	srv := server.New(st, server.Options{Poll: cfg.WatchPoll, Heartbeat: cfg.WatchHeartbeat, Now: cfg.Now, Appended: appended.Notify})
	eventsv1.RegisterEventsServiceServer(deps.Server.GRPC, srv)
	eventsv1.RegisterEventLogServiceServer(deps.Server.GRPC, srv)
	keys, err := cfg.Webhooks.Keyring(cfg.Production)
	if err != nil {
		return err
	}
	rules, err := cfg.Webhooks.Rules(cfg.Production)
	if err != nil {
		return err
	}
	eventsv1.RegisterWebhookServiceServer(deps.Server.GRPC, server.NewWebhooks(st, st, server.WebhookOptions{Keys: keys, URLRules: rules, Now: cfg.Now}))
	deps.Poll("sequencer", cfg.SequenceInterval, cfg.PollIdle, appended.C, func(ctx context.Context) int {
		n, err := st.Sequence(ctx)
		if err != nil && ctx.Err() == nil {
			deps.Logger.Warn("sequencer", "error", err.Error())
			return 1 // try again soon
		}
		return n
	})
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	deps.Every("retention", time.Hour, func(ctx context.Context) {
		companies, err := st.Companies(ctx)
		for _, c := range companies {
			if _, perr := st.Prune(ctx, c, now().Add(-cfg.Retention)); perr != nil {
				err = perr
			}
		}
		if err != nil && ctx.Err() == nil {
			deps.Logger.Warn("retention", "error", err.Error())
		}
	})
	return nil
}

// Owner names this process in leases: the host (the pod's name) and a random suffix, so a
// restarted process never mistakes its predecessor's lease for its own.
func Owner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}
