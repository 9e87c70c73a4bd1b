package suite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// StartServices starts the five services one after another, each timed from exec to
// grpc.health SERVING, then the gateway, timed to /healthz 200. Starting them one at a time
// keeps each start-up free of the others' CPU use.
func (s *Suite) StartServices(ctx context.Context) error {
	for _, name := range append(Services, "gateway") {
		addr, err := s.hold()
		if err != nil {
			return err
		}
		s.Addrs[name] = addr
	}
	for _, name := range Services {
		if err := s.startService(ctx, name); err != nil {
			return err
		}
	}
	return s.startGateway(ctx)
}

func (s *Suite) startService(ctx context.Context, name string) error {
	metrics, err := s.hold()
	if err != nil {
		return err
	}
	env := []string{
		"MONGODB_URI=" + s.MongoURI, "MONGODB_DATABASE=" + name, "GRPC_ADDR=fd:3", "METRICS_ADDR=fd:4",
		"LOG_LEVEL=info", "PRINCIPAL_PUBLIC_KEY_FILE=" + s.keys.path("gateway-principal.pub.pem"),
		"INTERNAL_PUBLIC_KEYS=" + s.keys.trusted(), "SERVICE_PRIVATE_KEY_FILE=" + s.keys.identity(name),
		"OPERATOR_PRIVATE_KEY_FILE=" + s.keys.path("operator.pem"), "PRODUCTION=false",
		// Idle pollers (the outbox relays, the sequencer, the dispatcher) back off to one pass
		// every 5 s instead of the default 1 s: on the embedded database each relay pass scans
		// a whole collection (the service desk's 1,000 requests take about 0.6 s), which at 1 s
		// would take most of the database from what the scenarios measure. Staged events wake
		// a relay at once, so a change's event still leaves within RELAY_INTERVAL.
		"POLL_IDLE=5s",
	}
	env = append(append(env, s.peerEnv()...), s.ownEnv(name)...)
	p, err := launch(name, s.bin(name), nil, env, s.opts.CPUs, s.logDir(), nil, s.take(s.Addrs[name]), s.take(metrics))
	if err != nil {
		return err
	}
	s.Procs = append(s.Procs, p)
	conn, err := grpc.NewClient(s.Addrs[name], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 5 * time.Millisecond, Multiplier: 1.2,
			MaxDelay: 20 * time.Millisecond}, MinConnectTimeout: time.Second}))
	if err != nil {
		return fmt.Errorf("dial %s: %w", name, err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	return p.waitUntil(ctx, startLimit, func(ctx context.Context) bool {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		resp, err := health.Check(cctx, &healthpb.HealthCheckRequest{})
		return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
}

// ownEnv is what one service needs besides the common settings: the events service and the
// dispatcher the webhook keyring and the switches that let the bench's receiver listen on
// plain http on loopback; the dispatcher works on the events service's database.
func (s *Suite) ownEnv(name string) []string {
	webhooks := []string{"WEBHOOK_KEYS=" + s.webhookKeys, "WEBHOOK_KEY_CURRENT=bench", "WEBHOOK_ALLOW_HTTP=true", "WEBHOOK_ALLOW_PRIVATE=true"}
	switch name {
	case "events":
		return webhooks
	case "dispatcher":
		return append(webhooks, "MONGODB_DATABASE=events")
	}
	return nil
}

// peerEnv is every *_ADDR a service or the gateway may need.
func (s *Suite) peerEnv() []string {
	var env []string
	for _, name := range Services {
		env = append(env, strings.ToUpper(name)+"_ADDR="+s.Addrs[name])
	}
	return env
}

// noShedding turns the gateway's load shedding off: the capacity steps measure what the
// gateway costs, and their closed loops at high concurrency would otherwise be answered
// mostly by the shedder. The overload scenario has a gateway with the defaults.
var noShedding = []string{"MAX_IN_FLIGHT=0", "SHED_LATENCY_TARGET=0"}

// startGateway starts the gateway the capacity steps measure, without load shedding.
func (s *Suite) startGateway(ctx context.Context) error {
	p, url, err := s.launchGateway(ctx, "gateway", s.Addrs["gateway"], noShedding)
	if err != nil {
		return err
	}
	s.Procs = append(s.Procs, p)
	s.GatewayURL = url
	return nil
}

// StartOverloadGateway starts a second gateway on the same services, with the gateway's
// default load shedding (and GatewayEnv), for the overload scenario; Stop stops it. It is
// not one of Procs: its CPU and memory are not part of the capacity figures.
func (s *Suite) StartOverloadGateway(ctx context.Context) (string, error) {
	addr, err := s.hold()
	if err != nil {
		return "", err
	}
	p, url, err := s.launchGateway(ctx, "gateway-overload", addr, nil)
	if err != nil {
		return "", err
	}
	s.extra = append(s.extra, p)
	return url, nil
}

// launchGateway starts a gateway on addr (GatewayEnv, then override, after the bench's
// defaults) and waits until /healthz answers 200.
func (s *Suite) launchGateway(ctx context.Context, name, addr string, override []string) (*Proc, string, error) {
	env := []string{
		"HTTP_ADDR=fd:3", "METRICS_ADDR=127.0.0.1:0", "MONGODB_URI=" + s.MongoURI, "MONGODB_DATABASE=gateway",
		"PRINCIPAL_PRIVATE_KEY_FILE=" + s.keys.path("gateway-principal.pem"), "LOG_LEVEL=info", "PRODUCTION=false",
		// Capacity is measured without the per-company, per-user and per-address rate limits
		// (0 turns a limit off); the overload scenario relies on load shedding alone.
		"RATE_LIMIT_COMPANY_RPS=0", "RATE_LIMIT_USER_RPS=0", "RATE_LIMIT_PEER_RPS=0", "RATE_LIMIT_BURST=1",
	}
	env = append(append(append(env, s.peerEnv()...), s.opts.GatewayEnv...), override...)
	p, err := launch(name, s.bin("gateway"), nil, env, s.opts.CPUs, s.logDir(), nil, s.take(addr))
	if err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	client := &http.Client{Timeout: time.Second}
	err = p.waitUntil(ctx, startLimit, func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return nil, "", errors.Join(err, p.stop(5*time.Second))
	}
	return p, url, nil
}

// Settle waits, then records every process's idle memory, and returns each process's idle
// CPU use over the wait (CPU seconds per second: health checks, timers, the runtime).
func (s *Suite) Settle(ctx context.Context, wait time.Duration) (map[string]float64, error) {
	before, start := s.CPU(), time.Now()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(wait):
	}
	idle := map[string]float64{}
	elapsed := time.Since(start).Seconds()
	for name, t := range s.CPU() {
		idle[name] = (t - before[name]).Seconds() / elapsed
	}
	for _, p := range s.Procs {
		m, err := p.Memory()
		if err != nil {
			return nil, err
		}
		p.Idle = m
	}
	return idle, nil
}
