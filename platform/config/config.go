// Package config holds the settings every service binary shares and loads them from the
// environment (names as in STYLE.md: MONGODB_URI, GRPC_ADDR, …).
package config

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/zcustody/suite/platform/principal"
)

// Common is embedded in each service's config.
type Common struct {
	MongoURI        string        `env:"MONGODB_URI, required"`
	Database        string        `env:"MONGODB_DATABASE"`
	GRPCAddr        string        `env:"GRPC_ADDR, default=127.0.0.1:9000"`
	MetricsAddr     string        `env:"METRICS_ADDR, default=127.0.0.1:9090"`
	LogLevel        string        `env:"LOG_LEVEL, default=info"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT, default=20s"`
	HealthInterval  time.Duration `env:"HEALTH_INTERVAL, default=2s"`
	// PrincipalPublicKeyFile is the gateway's token key (issuer "gateway").
	PrincipalPublicKeyFile string `env:"PRINCIPAL_PUBLIC_KEY_FILE, required"`
	// InternalPublicKeys trusts more issuers: "name=path.pem,name2=path2.pem".
	InternalPublicKeys string `env:"INTERNAL_PUBLIC_KEYS"`
	// ServicePrivateKeyFile is this service's own identity for calls it makes to other
	// services (Ed25519 PKCS#8 PEM); the callees trust it through INTERNAL_PUBLIC_KEYS.
	ServicePrivateKeyFile string `env:"SERVICE_PRIVATE_KEY_FILE"`
	// Production refuses the published demo keys (PRODUCTION=true).
	Production bool `env:"PRODUCTION, default=false"`
	// GRPCReflection serves gRPC server reflection (it lists every method to anyone who can
	// reach the port): "true" or "false"; unset, on except with PRODUCTION=true.
	GRPCReflection string `env:"GRPC_REFLECTION"`
	// EventsAddr is the events service's gRPC address: the relay hands this service's
	// outboxes to it every RelayInterval. Unset, the events stay in the outboxes (nothing is
	// lost; they leave once it is set).
	EventsAddr    string        `env:"EVENTS_ADDR"`
	RelayInterval time.Duration `env:"RELAY_INTERVAL, default=100ms"`
	// PollIdle is how far apart an idle poller's passes grow (the outbox relays, the events
	// sequencer, the webhook dispatcher): each pass that finds nothing doubles the wait, up
	// to PollIdle; work found, or staged in the process, brings it back to the interval.
	PollIdle time.Duration `env:"POLL_IDLE, default=1s"`
}

// Reflection reports whether the gRPC server serves reflection: GRPC_REFLECTION when set,
// otherwise everywhere but in production.
func (c *Common) Reflection() (bool, error) {
	switch c.GRPCReflection {
	case "":
		return !c.Production, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("GRPC_REFLECTION %q: want true or false", c.GRPCReflection)
}

// ServiceSigner returns the signer of the service's own system principal, issuer name.
func (c *Common) ServiceSigner(name string) (*principal.Signer, error) {
	if c.ServicePrivateKeyFile == "" {
		return nil, errors.New("SERVICE_PRIVATE_KEY_FILE is required")
	}
	key, err := principal.LoadPrivateKey(c.ServicePrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("SERVICE_PRIVATE_KEY_FILE: %w", err)
	}
	return principal.NewSigner(name, key, time.Minute), nil
}

// Load fills cfg (a pointer to a struct embedding Common) from the environment.
func Load(ctx context.Context, cfg any) error {
	if err := envconfig.Process(ctx, cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// Validate checks the common settings; defaultDB names the service's database.
func (c *Common) Validate(defaultDB string) error {
	if c.Database == "" {
		c.Database = defaultDB
	}
	var errs []error
	if !strings.HasPrefix(c.MongoURI, "mongodb://") && !strings.HasPrefix(c.MongoURI, "mongodb+srv://") {
		errs = append(errs, errors.New("MONGODB_URI must start with mongodb:// or mongodb+srv://"))
	}
	if c.ShutdownTimeout <= 0 || c.HealthInterval <= 0 {
		errs = append(errs, errors.New("SHUTDOWN_TIMEOUT and HEALTH_INTERVAL must be positive"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("LOG_LEVEL %q: want debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// TrustedIssuers loads the public keys of every issuer the service accepts tokens from.
func (c *Common) TrustedIssuers() (map[string]ed25519.PublicKey, error) {
	keys := map[string]ed25519.PublicKey{}
	gw, err := principal.LoadPublicKey(c.PrincipalPublicKeyFile)
	if err != nil {
		return nil, fmt.Errorf("PRINCIPAL_PUBLIC_KEY_FILE: %w", err)
	}
	keys["gateway"] = gw
	for entry := range strings.SplitSeq(c.InternalPublicKeys, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, path, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("INTERNAL_PUBLIC_KEYS entry %q: want name=path", entry)
		}
		key, err := principal.LoadPublicKey(path)
		if err != nil {
			return nil, fmt.Errorf("INTERNAL_PUBLIC_KEYS %s: %w", name, err)
		}
		keys[name] = key
	}
	return keys, nil
}
