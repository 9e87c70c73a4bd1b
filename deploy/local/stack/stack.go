// Package stack starts the whole suite in one process for local runs and black-box tests:
// the embedded database (unless a MongoDB URI is given), the six services (each a real gRPC
// server on its own port), and the gateway.
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/embeddb"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/mongodb"
	complianceapp "github.com/zcustody/suite/services/compliance/app"
	custodyapp "github.com/zcustody/suite/services/custody/app"
	eventsapp "github.com/zcustody/suite/services/events/app"
	dispatchapp "github.com/zcustody/suite/services/events/dispatch/app"
	interchangeapp "github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/interchange/settlement"
	servicedeskapp "github.com/zcustody/suite/services/servicedesk/app"
	tradingapp "github.com/zcustody/suite/services/trading/app"
)

// Options configure a stack.
type Options struct {
	// MongoURI, when set, is used instead of starting the embedded database.
	MongoURI string
	// DataDir holds the embedded database and the key files the processes read.
	DataDir string
	// HTTPAddr is the gateway's address; "127.0.0.1:0" picks a free port.
	HTTPAddr string
	// Logger receives every component's logs.
	Logger *slog.Logger
	// Gateway overrides gateway settings after the defaults are filled in (tests).
	Gateway func(*gatewayapp.Config)
	// Service overrides a service's common settings after the defaults are filled in, at
	// every start of the service (tests: another MongoURI, a shorter ShutdownTimeout).
	Service func(name string, c *config.Common)
	// Peers overrides the addresses a service dials to reach the others (tests interpose
	// proxies); it gets the service's own copy of the name → address map.
	Peers func(name string, peers map[string]string)
	// Interchange overrides interchange's own settings after the defaults are filled in, at
	// every start of it (tests: a shorter recovery sweep).
	Interchange func(*interchangeapp.Config)
	// DeskClock is the service desk's clock (time.Now when nil): a test moves it to let a
	// request's deadline pass.
	DeskClock func() time.Time
}

// Stack is a running suite.
type Stack struct {
	MongoURI   string
	GatewayURL string
	// Services maps service name → gRPC address.
	Services map[string]string
	cancel   context.CancelFunc
	group    *errgroup.Group
	db       *embeddb.DB

	// Kept to stop and start single services again (StopService, StartService).
	opts       Options
	keys       keyFiles
	runCtx     context.Context
	gatewayCfg gatewayapp.Config
	// gatewayMetrics is the gateway's metrics address.
	gatewayMetrics string
	mu             sync.Mutex
	procs          map[string]*proc
	// reserved holds the sockets reserve opened until listenSpec hands them over.
	reserved map[string]reservation
}

// proc is one running service.
type proc struct {
	// metrics is the service's metrics address, kept for a restart: picking a new free port
	// then could hand out the service's own gRPC port, freed by the stop a moment before.
	metrics string
	cancel  context.CancelFunc
	done    chan struct{}
	err     error // what Run returned, once done is closed
	stopped bool  // stopped by StopService: its end does not stop the stack
	again   bool  // started by StartService: its failure does not stop the stack
}

// Start starts everything and returns once the services are SERVING and the gateway listens.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	s := &Stack{MongoURI: opts.MongoURI, Services: map[string]string{}, opts: opts, procs: map[string]*proc{}}
	if s.MongoURI == "" {
		db, err := embeddb.Start(ctx, embeddb.Config{Dir: filepath.Join(opts.DataDir, "ferretdb"), Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		s.db, s.MongoURI = db, db.URI()
	}
	if err := loadDemo(ctx, s.MongoURI); err != nil {
		s.closeDB()
		return nil, err
	}
	keys, err := writeKeys(filepath.Join(opts.DataDir, "keys"))
	if err != nil {
		s.closeDB()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	s.group, runCtx = errgroup.WithContext(runCtx)
	s.runCtx, s.keys = runCtx, keys
	if err := s.startServices(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.startGateway(ctx, runCtx, opts, keys); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// demoWebhooks is the local suite's webhook setting: a DEMO-ONLY key-encryption key
// (published here, never for real secrets), and subscriptions to plain http on loopback
// allowed, so that a receiver on the developer's machine or in a test can subscribe.
var demoWebhooks = eventsapp.WebhookConfig{Keys: "demo=ZGVtby1vbmx5LXdlYmhvb2sta2V5LTMyLWJ5dGVzISE=", KeyCurrent: "demo",
	AllowHTTP: true, AllowPrivate: true}

// LocalSchedule is the local suite's webhook retry schedule: the production one compressed
// to seconds, so that a retry is seen while one waits.
const LocalSchedule = "1s,2s,4s,8s,15s,30s,1m ±20%"

// localReconcile runs each ledger's reconciliation every minute while the local suite runs
// (the e2e tests read the outcome).
const localReconcile = time.Minute

type runner func(ctx context.Context, common config.Common, peers map[string]string, logger *slog.Logger) error

func services(opts Options) map[string]runner {
	return map[string]runner{
		servicedeskapp.Name: func(ctx context.Context, c config.Common, peers map[string]string, l *slog.Logger) error {
			return servicedeskapp.Run(ctx, servicedeskapp.Config{Common: c, TradingAddr: peers[tradingapp.Name],
				InterchangeAddr: peers[interchangeapp.Name], CustodyAddr: peers[custodyapp.Name],
				ComplianceAddr: peers[complianceapp.Name], SweepInterval: time.Second, ExecutionGrace: 5 * time.Second, Now: opts.DeskClock}, l)
		},
		tradingapp.Name: func(ctx context.Context, c config.Common, _ map[string]string, l *slog.Logger) error {
			cfg := tradingapp.Config{Common: c, OperatorKeyFile: filepath.Join(filepath.Dir(c.PrincipalPublicKeyFile), "operator.pem"),
				RecoveryInterval: time.Second, RecoveryGrace: 5 * time.Second}
			cfg.Reconcile.Interval = localReconcile
			return tradingapp.Run(ctx, cfg, l)
		},
		interchangeapp.Name: func(ctx context.Context, c config.Common, peers map[string]string, l *slog.Logger) error {
			cfg := interchangeapp.Config{Common: c, TradingAddr: peers[tradingapp.Name], CustodyAddr: peers[custodyapp.Name], ComplianceAddr: peers[complianceapp.Name], ServicedeskAddr: peers[servicedeskapp.Name],
				SweepInterval: time.Second, RecoveryGrace: 30 * time.Second, SettlementLease: settlement.DefaultLease}
			cfg.Reconcile.Interval = localReconcile
			if opts.Interchange != nil {
				opts.Interchange(&cfg)
			}
			return interchangeapp.Run(ctx, cfg, l)
		},
		custodyapp.Name: func(ctx context.Context, c config.Common, peers map[string]string, l *slog.Logger) error {
			cfg := custodyapp.Config{Common: c, ServicedeskAddr: peers[servicedeskapp.Name], ComplianceAddr: peers[complianceapp.Name], FeeMaxAge: 10 * time.Minute,
				RecoveryInterval: time.Second, RecoveryGrace: 5 * time.Second}
			cfg.Reconcile.Interval = localReconcile
			return custodyapp.Run(ctx, cfg, l)
		},
		complianceapp.Name: func(ctx context.Context, c config.Common, _ map[string]string, l *slog.Logger) error {
			return complianceapp.Run(ctx, complianceapp.Config{Common: c}, l)
		},
		eventsapp.Name: func(ctx context.Context, c config.Common, _ map[string]string, l *slog.Logger) error {
			c.EventsAddr = "" // the log relays to nobody
			return eventsapp.Run(ctx, eventsapp.Config{Common: c, SequenceInterval: 100 * time.Millisecond, SequencerLease: 5 * time.Second,
				Retention: 30 * 24 * time.Hour, WatchPoll: 50 * time.Millisecond, WatchHeartbeat: 5 * time.Second, Webhooks: demoWebhooks}, l)
		},
		dispatchapp.Name: func(ctx context.Context, c config.Common, _ map[string]string, l *slog.Logger) error {
			c.EventsAddr, c.Database = "", eventsapp.Name // it shares the events service's database
			return dispatchapp.Run(ctx, dispatchapp.Config{Common: c, WebhookConfig: demoWebhooks, Schedule: LocalSchedule,
				Timeout: 5 * time.Second, SuspendAfter: 5 * 24 * time.Hour, Interval: 100 * time.Millisecond, Workers: 8, PerSubscription: 2,
				Lease: 10 * time.Second, Retention: 30 * 24 * time.Hour}, l)
		},
	}
}

func (s *Stack) startServices(ctx context.Context) error {
	all := services(s.opts)
	for name := range all {
		addr, err := s.reserve()
		if err != nil {
			return err
		}
		s.Services[name] = addr
	}
	for name := range all {
		if err := s.launch(name, false); err != nil {
			return err
		}
	}
	return s.waitServing(ctx)
}

// launch starts service name on its address; again marks a restart by StartService.
func (s *Stack) launch(name string, again bool) error {
	run, ok := services(s.opts)[name]
	if !ok {
		return fmt.Errorf("no service %q", name)
	}
	metricsAddr, err := s.metricsAddr(name, again)
	if err != nil {
		return err
	}
	keys := s.keys
	common := config.Common{MongoURI: s.MongoURI, Database: name, GRPCAddr: s.listenSpec(s.Services[name]), MetricsAddr: s.listenSpec(metricsAddr),
		LogLevel: "info", ShutdownTimeout: 10 * time.Second, HealthInterval: time.Second,
		PrincipalPublicKeyFile: keys.gatewayPublic, InternalPublicKeys: keys.trusted()}
	common.ServicePrivateKeyFile = keys.identity(name)
	if s.opts.Service != nil {
		s.opts.Service(name, &common)
	}
	peers := maps.Clone(s.Services)
	if s.opts.Peers != nil {
		s.opts.Peers(name, peers)
	}
	// The embedded database scans a whole collection for each relay query (production's
	// sparse index makes it cheap): idle pollers (relays, sequencer, dispatcher) back off to
	// one pass a second, and come back to 100 ms when events are staged or found.
	common.EventsAddr, common.RelayInterval, common.PollIdle = peers[eventsapp.Name], 100*time.Millisecond, time.Second
	svcLogger := s.opts.Logger.With("service", name)
	ctx, cancel := context.WithCancel(s.runCtx)
	p := &proc{metrics: metricsAddr, cancel: cancel, done: make(chan struct{}), again: again}
	s.mu.Lock()
	s.procs[name] = p
	s.mu.Unlock()
	s.group.Go(func() error {
		err := run(ctx, common, peers, svcLogger)
		s.mu.Lock()
		p.err = err
		quiet := p.stopped || p.again
		s.mu.Unlock()
		close(p.done)
		if err != nil && !quiet {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	return nil
}

// metricsAddr is the metrics address of service name: the one it had before on a restart,
// a reserved one otherwise.
func (s *Stack) metricsAddr(name string, again bool) (string, error) {
	s.mu.Lock()
	p, ok := s.procs[name]
	s.mu.Unlock()
	if again && ok {
		return p.metrics, nil
	}
	return s.reserve()
}

// Metrics returns the metrics address (Prometheus, /metrics) of every process: the six
// services and the gateway.
func (s *Stack) Metrics() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{"gateway": s.gatewayMetrics}
	for name, p := range s.procs {
		out[name] = p.metrics
	}
	return out
}

// StopService stops one service as its process would stop on SIGTERM: health turns
// NOT_SERVING, in-flight calls get the service's ShutdownTimeout to finish, then the rest
// are cut. It returns once the service has returned, with what it returned.
func (s *Stack) StopService(name string) error {
	s.mu.Lock()
	p, ok := s.procs[name]
	if ok {
		p.stopped = true
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("no service %q", name)
	}
	p.cancel()
	<-p.done
	if p.err != nil && !errors.Is(p.err, context.Canceled) {
		return fmt.Errorf("%s: %w", name, p.err)
	}
	return nil
}

// StartService starts a service that StopService stopped again, on the same gRPC address,
// and returns once it is SERVING (or with the error it ended with).
func (s *Stack) StartService(ctx context.Context, name string) error {
	s.mu.Lock()
	p, ok := s.procs[name]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("no service %q", name)
	}
	select {
	case <-p.done:
	default:
		return fmt.Errorf("%s is running", name)
	}
	if err := s.launch(name, true); err != nil {
		return err
	}
	s.mu.Lock()
	p = s.procs[name]
	s.mu.Unlock()
	return s.waitOne(ctx, name, time.Now().Add(30*time.Second), p.done)
}

// GatewayConfig returns the configuration the stack's gateway runs with (tests start more
// gateways over the same services with it).
func (s *Stack) GatewayConfig() gatewayapp.Config { return s.gatewayCfg }

func (s *Stack) startGateway(ctx, runCtx context.Context, opts Options, keys keyFiles) error {
	addr := opts.HTTPAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	// The metrics take a reserved port, so that stacks running in parallel never collide; it
	// is picked here so that Metrics can tell it.
	gatewayMetrics, err := s.reserve()
	if err != nil {
		return err
	}
	s.gatewayMetrics = gatewayMetrics
	cfg := gatewayapp.Config{HTTPAddr: addr, MetricsAddr: s.listenSpec(gatewayMetrics), MongoURI: s.MongoURI, Database: "gateway",
		ServicedeskAddr: s.Services[servicedeskapp.Name], TradingAddr: s.Services[tradingapp.Name],
		InterchangeAddr: s.Services[interchangeapp.Name], CustodyAddr: s.Services[custodyapp.Name],
		ComplianceAddr: s.Services[complianceapp.Name], EventsAddr: s.Services[eventsapp.Name], PrivateKeyFile: keys.gatewayPrivate, LogLevel: "info",
		SignatureWindow: 5 * time.Minute, IdentityTTL: 30 * time.Second, MaxBodyBytes: 1 << 20,
		RequestTimeout: 15 * time.Second, ShutdownTimeout: 10 * time.Second,
		CompanyRPS: 500, UserRPS: 200, RateBurst: 400, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	if opts.Gateway != nil {
		opts.Gateway(&cfg)
	}
	s.gatewayCfg = cfg
	ready := make(chan string, 1)
	s.group.Go(func() error {
		return gatewayapp.Run(runCtx, cfg, opts.Logger.With("service", "gateway"), func(a string) { ready <- a })
	})
	select {
	case a := <-ready:
		s.GatewayURL = "http://" + a
		return nil
	case <-runCtx.Done():
		return fmt.Errorf("gateway did not start: %w", s.group.Wait())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitServing polls grpc.health.v1 on every service until all say SERVING.
func (s *Stack) waitServing(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for name := range s.Services {
		s.mu.Lock()
		p := s.procs[name]
		s.mu.Unlock()
		if err := s.waitOne(ctx, name, deadline, p.done); err != nil {
			return err
		}
	}
	return nil
}

// waitOne polls grpc.health.v1 on one service until it says SERVING, the deadline passes,
// or done (if set) is closed.
func (s *Stack) waitOne(ctx context.Context, name string, deadline time.Time, done <-chan struct{}) error {
	// Retry the connection every 50 ms rather than after gRPC's default backoff (1 s+), so
	// that a service is seen SERVING as soon as it is.
	conn, err := grpc.NewClient(s.Services[name], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1, MaxDelay: 50 * time.Millisecond}, MinConnectTimeout: time.Second}))
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-done:
			s.mu.Lock()
			defer s.mu.Unlock()
			// A process that failed cancels the others: name every one that failed other
			// than by that cancellation, so the first cause is in the error.
			var others []string
			for other, p := range s.procs {
				if other != name && p.err != nil && !errors.Is(p.err, context.Canceled) {
					others = append(others, other+": "+p.err.Error())
				}
			}
			slices.Sort(others)
			if err := s.procs[name].err; err != nil {
				return fmt.Errorf("%s ended before SERVING: %w (other processes that failed: %v)", name, err, others)
			}
			return fmt.Errorf("%s ended before SERVING (other processes that failed: %v)", name, others)
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s is not SERVING after 30s (last error: %v)", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop shuts everything down and waits for it.
func (s *Stack) Stop() error {
	var err error
	if s.cancel != nil {
		s.cancel()
		if werr := s.group.Wait(); werr != nil && !errors.Is(werr, context.Canceled) {
			err = werr
		}
	}
	s.closeDB()
	s.mu.Lock()
	for addr, r := range s.reserved {
		r.release()
		delete(s.reserved, addr)
	}
	s.mu.Unlock()
	return err
}

func (s *Stack) closeDB() {
	if s.db != nil {
		_ = s.db.Close()
	}
}

func loadDemo(ctx context.Context, uri string) error {
	client, err := mongodb.Connect(ctx, uri)
	if err != nil {
		return err
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	if err := demo.Load(ctx, client); err != nil {
		return fmt.Errorf("load demo data: %w", err)
	}
	return nil
}

// reserve opens a listening socket on a free port (config.Reserve) and keeps it open
// for the server that will serve on it (listenSpec hands it over): the port is never free
// between the pick and the server's start, so nothing else can take it.
func (s *Stack) reserve() (string, error) {
	addr, setting, release, err := config.Reserve()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserved == nil {
		s.reserved = map[string]reservation{}
	}
	s.reserved[addr] = reservation{setting: setting, release: release}
	return addr, nil
}

// reservation is a socket reserve holds: the setting that hands it over, and how to close it
// if nobody took it.
type reservation struct {
	setting string
	release func()
}

// listenSpec is the setting a server listens on addr with: fd:N the first time, handing
// over the socket reserve holds (the server owns it from then on), addr itself when the
// server starts again after it closed its socket.
func (s *Stack) listenSpec(addr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reserved[addr]
	if !ok {
		return addr
	}
	delete(s.reserved, addr)
	return r.setting
}

type keyFiles struct {
	dir                           string
	gatewayPrivate, gatewayPublic string
}

// internalIssuers are the internal identities every service trusts: issuer → demo key file.
var internalIssuers = map[string]string{
	"servicedesk":       "servicedesk-internal",
	"interchange":       "interchange-internal",
	"custody":           "custody-internal",
	"trading":           "trading-internal",
	"compliance":        "compliance-internal",
	"settlement-engine": "settlement-engine",
}

// trusted is INTERNAL_PUBLIC_KEYS for the services.
func (k keyFiles) trusted() string {
	var parts []string
	for issuer, file := range internalIssuers {
		parts = append(parts, issuer+"="+filepath.Join(k.dir, file+".pub.pem"))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// identity is SERVICE_PRIVATE_KEY_FILE of a service that calls others ("" for the rest).
func (k keyFiles) identity(service string) string {
	if file, ok := internalIssuers[service]; ok {
		return filepath.Join(k.dir, file+".pem")
	}
	return ""
}

// writeKeys writes the demo internal key pairs where the processes read them from.
func writeKeys(dir string) (keyFiles, error) {
	names := []string{"gateway-principal.pem", "gateway-principal.pub.pem", "operator.pem", "operator.pub.pem"}
	for _, file := range internalIssuers {
		names = append(names, file+".pem", file+".pub.pem")
	}
	k := keyFiles{dir: dir, gatewayPrivate: filepath.Join(dir, names[0]), gatewayPublic: filepath.Join(dir, names[1])}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return k, fmt.Errorf("key folder: %w", err)
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		data, err := demo.Key(name)
		if err != nil {
			return k, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return k, fmt.Errorf("write key: %w", err)
		}
	}
	return k, nil
}
