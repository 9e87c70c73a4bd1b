// Package app wires the gateway: configuration, backends, middleware and the HTTP server.
package app

import (
	"errors"
	"fmt"
	"time"
)

// Config is the gateway's configuration, from the environment.
type Config struct {
	HTTPAddr        string        `env:"HTTP_ADDR, default=127.0.0.1:8080"`
	MongoURI        string        `env:"MONGODB_URI, required"`
	Database        string        `env:"MONGODB_DATABASE, default=gateway"`
	ServicedeskAddr string        `env:"SERVICEDESK_ADDR, default=127.0.0.1:9001"`
	TradingAddr     string        `env:"TRADING_ADDR, default=127.0.0.1:9002"`
	InterchangeAddr string        `env:"INTERCHANGE_ADDR, default=127.0.0.1:9003"`
	CustodyAddr     string        `env:"CUSTODY_ADDR, default=127.0.0.1:9004"`
	ComplianceAddr  string        `env:"COMPLIANCE_ADDR, default=127.0.0.1:9005"`
	PrivateKeyFile  string        `env:"PRINCIPAL_PRIVATE_KEY_FILE, required"`
	LogLevel        string        `env:"LOG_LEVEL, default=info"`
	SignatureWindow time.Duration `env:"SIGNATURE_WINDOW, default=5m"`
	IdentityTTL     time.Duration `env:"IDENTITY_CACHE_TTL, default=30s"`
	MaxBodyBytes    int64         `env:"MAX_BODY_BYTES, default=1048576"`
	RequestTimeout  time.Duration `env:"REQUEST_TIMEOUT, default=15s"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT, default=20s"`
}

// Validate checks the settings.
func (c Config) Validate() error {
	var errs []error
	if c.SignatureWindow < time.Second || c.SignatureWindow > time.Hour {
		errs = append(errs, fmt.Errorf("SIGNATURE_WINDOW %s: want 1s..1h", c.SignatureWindow))
	}
	if c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 64<<20 {
		errs = append(errs, fmt.Errorf("MAX_BODY_BYTES %d: want 1 KiB..64 MiB", c.MaxBodyBytes))
	}
	if c.RequestTimeout <= 0 || c.ShutdownTimeout <= 0 || c.IdentityTTL < 0 {
		errs = append(errs, errors.New("REQUEST_TIMEOUT and SHUTDOWN_TIMEOUT must be positive, IDENTITY_CACHE_TTL not negative"))
	}
	return errors.Join(errs...)
}
