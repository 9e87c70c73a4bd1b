// Package app wires the gateway: configuration, backends, middleware and the HTTP server.
package app

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
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
	EventsAddr      string        `env:"EVENTS_ADDR, default=127.0.0.1:9006"`
	PrivateKeyFile  string        `env:"PRINCIPAL_PRIVATE_KEY_FILE, required"`
	LogLevel        string        `env:"LOG_LEVEL, default=info"`
	SignatureWindow time.Duration `env:"SIGNATURE_WINDOW, default=5m"`
	IdentityTTL     time.Duration `env:"IDENTITY_CACHE_TTL, default=30s"`
	MaxBodyBytes    int64         `env:"MAX_BODY_BYTES, default=1048576"`
	RequestTimeout  time.Duration `env:"REQUEST_TIMEOUT, default=15s"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT, default=20s"`
	// MetricsAddr serves the Prometheus metrics on a server of their own, apart from the
	// API; set empty (METRICS_ADDR=) it turns that server off.
	MetricsAddr string `env:"METRICS_ADDR, default=127.0.0.1:9090"`
	// Slow clients: the headers must arrive within ReadHeaderTimeout, the whole request
	// within ReadTimeout.
	ReadHeaderTimeout time.Duration `env:"READ_HEADER_TIMEOUT, default=5s"`
	ReadTimeout       time.Duration `env:"READ_TIMEOUT, default=30s"`
	// TrustedProxies lists the CIDRs (comma-separated) whose X-Forwarded-Proto/-Host are
	// believed when rebuilding the signed URL.
	TrustedProxies string `env:"TRUSTED_PROXIES"`
	// PublicBaseURL lists (comma-separated) the scheme://host[:port] that clients call and
	// sign: a request signed for any other URL is refused (401), so a captured request cannot
	// be replayed against another deployment that trusts the same company key. Required with
	// PRODUCTION=true; unset elsewhere, the listen address when it names one host (else any).
	PublicBaseURL string `env:"PUBLIC_BASE_URL"`
	// Rate limits per gateway replica (docs/security.md); 0 turns a limit off.
	CompanyRPS float64 `env:"RATE_LIMIT_COMPANY_RPS, default=50"`
	UserRPS    float64 `env:"RATE_LIMIT_USER_RPS, default=20"`
	RateBurst  int     `env:"RATE_LIMIT_BURST, default=100"`
	// MaxInFlight is the hard ceiling on requests served at once; beyond the current limit
	// the gateway answers 503 at once (0 turns shedding off). ShedLatencyTarget makes the
	// limit follow the capacity below that ceiling: it falls while even the fastest requests
	// take longer than the target, and climbs back when they do not (0: the limit stays at
	// MaxInFlight). See docs/decisions.md.
	MaxInFlight       int           `env:"MAX_IN_FLIGHT, default=512"`
	ShedLatencyTarget time.Duration `env:"SHED_LATENCY_TARGET, default=1s"`
	// PeerRPS throttles each client address before authentication (0 turns it off).
	PeerRPS float64 `env:"RATE_LIMIT_PEER_RPS, default=200"`
	// Production refuses the published demo keys, its own and companies' (PRODUCTION=true).
	Production bool `env:"PRODUCTION, default=false"`
}

// Proxies parses TrustedProxies.
func (c Config) Proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(c.TrustedProxies, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES %q: want CIDRs such as 10.0.0.0/8", part)
		}
		out = append(out, p)
	}
	return out, nil
}

// PublicBases parses PublicBaseURL into scheme://host values (lower case).
func (c Config) PublicBases() ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(c.PublicBaseURL, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := url.Parse(part)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("PUBLIC_BASE_URL %q: want scheme://host[:port] such as https://api.example.com", part)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
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
	if _, err := c.Proxies(); err != nil {
		errs = append(errs, err)
	}
	if bases, err := c.PublicBases(); err != nil {
		errs = append(errs, err)
	} else if len(bases) == 0 && c.Production {
		errs = append(errs, errors.New("PUBLIC_BASE_URL is required with PRODUCTION=true: the URL clients sign"))
	}
	if c.CompanyRPS < 0 || c.UserRPS < 0 || c.PeerRPS < 0 || c.RateBurst < 1 {
		errs = append(errs, errors.New("RATE_LIMIT_COMPANY_RPS and RATE_LIMIT_USER_RPS must not be negative, RATE_LIMIT_BURST at least 1"))
	}
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 {
		errs = append(errs, errors.New("READ_HEADER_TIMEOUT and READ_TIMEOUT must be positive"))
	}
	if c.MaxInFlight < 0 || c.ShedLatencyTarget < 0 {
		errs = append(errs, errors.New("MAX_IN_FLIGHT and SHED_LATENCY_TARGET must not be negative"))
	}
	if c.RequestTimeout <= 0 || c.ShutdownTimeout <= 0 || c.IdentityTTL < 0 {
		errs = append(errs, errors.New("REQUEST_TIMEOUT and SHUTDOWN_TIMEOUT must be positive, IDENTITY_CACHE_TTL not negative"))
	}
	return errors.Join(errs...)
}
