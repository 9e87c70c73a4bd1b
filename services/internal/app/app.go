// Package app holds the start-up every service shares: connect the database, build the gRPC
// server with its interceptors, and run until the context ends.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/grpcserver"
	"github.com/zcustody/suite/services/internal/outbox"
)

// Deps is what a service's wiring needs. Everything it starts (the gRPC server, the
// metrics server, the health watch and the background loops registered with Every) runs in
// Run's one errgroup: when one fails all stop, and the database disconnects only after all
// have stopped.
type Deps struct {
	Logger *slog.Logger
	Client *mongo.Client
	DB     *mongo.Database
	Server *grpcserver.Server
	cfg    config.Common
	lis    grpcserver.Listeners
	loops  []loop
	undo   []func()
	closed sync.Once
}

type loop struct {
	name     string
	interval time.Duration
	run      func(context.Context) // runs until the context ends
}

// Setup validates cfg, opens the service's ports, connects the database and builds the gRPC
// server. The ports open first: a port in use ends the start at once, before anything else
// runs. policy is the service's authorization table (authz). Call Close (deferred) so that
// a start that fails after Setup releases the ports and the connection.
func Setup(ctx context.Context, cfg config.Common, service string, logger *slog.Logger, policy authz.Policy) (*Deps, error) {
	logger = logging.WithRequests(logger)
	if err := cfg.Validate(service); err != nil {
		return nil, err
	}
	if err := cfg.RefuseDemoKeys(); err != nil {
		return nil, err
	}
	issuers, err := cfg.TrustedIssuers()
	if err != nil {
		return nil, err
	}
	reflect, err := cfg.Reflection()
	if err != nil {
		return nil, err
	}
	lis, err := grpcserver.Listen(cfg)
	if err != nil {
		return nil, err
	}
	client, err := mongodb.Connect(ctx, cfg.MongoURI)
	if err != nil {
		lis.Close()
		return nil, err
	}
	srv := grpcserver.New(logger, principal.NewVerifier(issuers), policy)
	if reflect {
		srv.EnableReflection()
	}
	return &Deps{Logger: logger, Client: client, DB: client.Database(cfg.Database), Server: srv, cfg: cfg, lis: lis}, nil
}

// NewDeps builds Deps without configuration or ports, for tests and in-process use: the
// gRPC server has the full interceptor chain (verifier, policy) and a service's Register
// works on it as on Setup's. The caller serves d.Server.GRPC on a listener of its own
// (bufconn, say) and calls Close when done, which closes the peer connections Dial opened;
// db's connection stays the caller's (Client is nil). Run must not be called on it (it
// serves Setup's ports), so the background loops registered with Every do not run.
func NewDeps(logger *slog.Logger, db *mongo.Database, verifier *principal.Verifier, policy authz.Policy) *Deps {
	logger = logging.WithRequests(logger)
	return &Deps{Logger: logger, DB: db, Server: grpcserver.New(logger, verifier, policy)}
}

// Start runs a service: Setup, then register (the service's wiring on the Deps), then Run
// until ctx ends; everything Setup opened is released however it ends.
func Start(ctx context.Context, cfg config.Common, service string, logger *slog.Logger, policy authz.Policy, register func(context.Context, *Deps) error) error {
	deps, err := Setup(ctx, cfg, service, logger, policy)
	if err != nil {
		return err
	}
	defer deps.Close()
	if err := register(ctx, deps); err != nil {
		return err
	}
	return deps.Run(ctx)
}

// Every registers a background loop: f runs every interval while the service runs, in Run's
// errgroup, and stops before the database disconnects. Register before Run.
func (d *Deps) Every(name string, interval time.Duration, f func(context.Context)) {
	d.loops = append(d.loops, loop{name: name, interval: interval, run: func(ctx context.Context) { every(ctx, interval, f) }})
}

// OnClose registers f (closing a peer connection, say) to run in Close, after everything
// Run started has stopped; the last registered runs first.
func (d *Deps) OnClose(f func()) { d.undo = append(d.undo, f) }

// Dial opens a client connection to the peer service name at addr, with the request's
// identifiers passed along; Close closes it.
func (d *Deps) Dial(name, addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithChainUnaryInterceptor(grpcserver.PropagateRequest()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", name, err)
	}
	d.OnClose(func() { _ = conn.Close() })
	return conn, nil
}

// Run serves until ctx ends or any part fails, stops every part, then closes the database
// connection. It returns the first failure.
func (d *Deps) Run(ctx context.Context) error {
	defer d.Close()
	ping := func(ctx context.Context) error { return d.Client.Ping(ctx, nil) }
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := d.Server.Serve(gctx, d.lis, d.cfg, ping); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		// The server stops only when the context ends; ending it ends the loops too.
		return nil
	})
	for _, l := range d.loops {
		g.Go(func() error {
			d.Logger.Debug("background loop started", "loop", l.name, "interval", l.interval.String())
			l.run(gctx)
			return nil
		})
	}
	return g.Wait()
}

// Close releases the ports and disconnects the database; Run calls it when everything has
// stopped. Calling it again does nothing.
func (d *Deps) Close() {
	d.closed.Do(func() {
		for i := len(d.undo) - 1; i >= 0; i-- {
			d.undo[i]()
		}
		d.lis.Close()
		// A database that went away must not hold up the exit.
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if d.Client == nil {
			return
		}
		if err := d.Client.Disconnect(dctx); err != nil {
			d.Logger.Warn("disconnect mongodb", "error", err.Error())
		}
	})
}

// Poll runs pass, which returns how much work it found, every interval while it finds some.
// After a pass that finds none the wait doubles, up to idle, so an idle service costs its
// database one query per idle instead of one per interval (on the embedded database each is
// a scan of a whole collection). A wake (a channel wake returns, closed when work may be
// waiting, like outbox.Staged) brings the next pass to within interval; a nil wake has none.
func (d *Deps) Poll(name string, interval, idle time.Duration, wake func() <-chan struct{}, pass func(context.Context) int) {
	d.loops = append(d.loops, loop{name: name, interval: interval, run: func(ctx context.Context) {
		poll(ctx, interval, max(idle, interval), wake, pass)
	}})
}

func poll(ctx context.Context, interval, idle time.Duration, wake func() <-chan struct{}, pass func(context.Context) int) {
	wait := interval
	next := time.Now().Add(wait)
	for {
		var woken <-chan struct{}
		if wake != nil {
			woken = wake()
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-woken:
			t.Stop()
			if soon := time.Now().Add(interval); soon.Before(next) {
				next = soon
			}
			wait = interval
			continue
		case <-t.C:
		}
		if pass(ctx) > 0 {
			wait = interval
		} else {
			wait = min(2*wait, idle)
		}
		next = time.Now().Add(wait)
	}
}

// every calls f every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			f(ctx)
		}
	}
}

// Main is a service binary's main: it loads the configuration C from the environment, runs
// run until SIGINT or SIGTERM, and exits 1 with the error logged when the start or the run
// fails.
func Main[C any](name string, run func(context.Context, C, *slog.Logger) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := logging.New(os.Stdout, os.Getenv("LOG_LEVEL"), name)
	var cfg C
	err := config.Load(ctx, &cfg)
	if err == nil {
		err = run(ctx, cfg, logger)
	}
	if err != nil {
		logger.Error("exit", "error", err.Error())
		stop()
		os.Exit(1)
	}
}

// Relay runs the outbox relay of each collection in outboxes (services/internal/outbox)
// into the events service at cfg.EventsAddr, as the system principal service, signed with
// the service's own key (SERVICE_PRIVATE_KEY_FILE). Without an events address it only says
// so: the events wait in the outboxes.
func (d *Deps) Relay(cfg config.Common, service string, outboxes ...*mongo.Collection) error {
	if cfg.EventsAddr == "" {
		d.Logger.Warn("EVENTS_ADDR is not set: events stay in the outboxes until it is")
		return nil
	}
	signer, err := cfg.ServiceSigner(service)
	if err != nil {
		return fmt.Errorf("the outbox relay: %w", err)
	}
	if cfg.RelayInterval <= 0 {
		return fmt.Errorf("RELAY_INTERVAL must be positive")
	}
	conn, err := d.Dial("events", cfg.EventsAddr)
	if err != nil {
		return err
	}
	sink := outbox.NewRemote(eventsv1.NewEventLogServiceClient(conn), signer, service)
	for _, coll := range outboxes {
		r := outbox.NewRelay(coll, sink, d.Logger)
		d.Poll("outbox relay "+coll.Name(), cfg.RelayInterval, cfg.PollIdle, outbox.Staged, func(ctx context.Context) int {
			n, err := r.Once(ctx)
			if err != nil && ctx.Err() == nil {
				d.Logger.Warn("outbox relay", "collection", coll.Name(), "error", err.Error())
				return 1 // try again soon
			}
			return n
		})
	}
	return nil
}
