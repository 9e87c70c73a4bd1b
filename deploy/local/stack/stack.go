// Package stack starts the whole suite in one process for local runs and black-box tests:
// the embedded database (unless a MongoDB URI is given), the five services (each a real gRPC
// server on its own port), and the gateway.
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/embeddb"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	complianceapp "github.com/zcustody/suite/services/compliance/app"
	"github.com/zcustody/suite/services/config"
	custodyapp "github.com/zcustody/suite/services/custody/app"
	interchangeapp "github.com/zcustody/suite/services/interchange/app"
	"github.com/zcustody/suite/services/mongodb"
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
}

// Start starts everything and returns once the services are SERVING and the gateway listens.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	s := &Stack{MongoURI: opts.MongoURI, Services: map[string]string{}}
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
	if err := s.startServices(ctx, runCtx, opts.Logger, keys); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.startGateway(ctx, runCtx, opts, keys); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

type runner func(ctx context.Context, common config.Common, peers map[string]string, logger *slog.Logger) error

func services() map[string]runner {
	return map[string]runner{
		servicedeskapp.Name: func(ctx context.Context, c config.Common, peers map[string]string, l *slog.Logger) error {
			return servicedeskapp.Run(ctx, servicedeskapp.Config{Common: c, TradingAddr: peers[tradingapp.Name],
				InterchangeAddr: peers[interchangeapp.Name], CustodyAddr: peers[custodyapp.Name],
				ComplianceAddr: peers[complianceapp.Name], SweepInterval: time.Second, ExecutionGrace: 5 * time.Second}, l)
		},
		tradingapp.Name: func(ctx context.Context, c config.Common, _ map[string]string, l *slog.Logger) error {
			return tradingapp.Run(ctx, tradingapp.Config{Common: c, OperatorKeyFile: filepath.Join(filepath.Dir(c.PrincipalPublicKeyFile), "operator.pem")}, l)
		},
		interchangeapp.Name: func(ctx context.Context, c config.Common, peers map[string]string, l *slog.Logger) error {
			return interchangeapp.Run(ctx, interchangeapp.Config{Common: c, TradingAddr: peers[tradingapp.Name], ComplianceAddr: peers[complianceapp.Name]}, l)
		},
		custodyapp.Name: func(ctx context.Context, c config.Common, peers map[string]string, l *slog.Logger) error {
			return custodyapp.Run(ctx, custodyapp.Config{Common: c, ServicedeskAddr: peers[servicedeskapp.Name], FeeMaxAge: 10 * time.Minute}, l)
		},
		complianceapp.Name: func(ctx context.Context, c config.Common, _ map[string]string, l *slog.Logger) error {
			return complianceapp.Run(ctx, complianceapp.Config{Common: c}, l)
		},
	}
}

func (s *Stack) startServices(ctx, runCtx context.Context, logger *slog.Logger, keys keyFiles) error {
	all := services()
	for name := range all {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		s.Services[name] = addr
	}
	for name, run := range all {
		metricsAddr, err := freeAddr()
		if err != nil {
			return err
		}
		common := config.Common{MongoURI: s.MongoURI, Database: name, GRPCAddr: s.Services[name], MetricsAddr: metricsAddr,
			LogLevel: "info", ShutdownTimeout: 10 * time.Second, HealthInterval: time.Second,
			PrincipalPublicKeyFile: keys.gatewayPublic, InternalPublicKeys: keys.trusted()}
		common.ServicePrivateKeyFile = keys.identity(name)
		svcLogger := logger.With("service", name)
		s.group.Go(func() error {
			if err := run(runCtx, common, s.Services, svcLogger); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	return s.waitServing(ctx)
}

func (s *Stack) startGateway(ctx, runCtx context.Context, opts Options, keys keyFiles) error {
	addr := opts.HTTPAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cfg := gatewayapp.Config{HTTPAddr: addr, MongoURI: s.MongoURI, Database: "gateway",
		ServicedeskAddr: s.Services[servicedeskapp.Name], TradingAddr: s.Services[tradingapp.Name],
		InterchangeAddr: s.Services[interchangeapp.Name], CustodyAddr: s.Services[custodyapp.Name],
		ComplianceAddr: s.Services[complianceapp.Name], PrivateKeyFile: keys.gatewayPrivate, LogLevel: "info",
		SignatureWindow: 5 * time.Minute, IdentityTTL: 30 * time.Second, MaxBodyBytes: 1 << 20,
		RequestTimeout: 15 * time.Second, ShutdownTimeout: 10 * time.Second,
		CompanyRPS: 500, UserRPS: 200, RateBurst: 400}
	if opts.Gateway != nil {
		opts.Gateway(&cfg)
	}
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
	for name, addr := range s.Services {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		for {
			resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				conn.Close()
				return fmt.Errorf("%s is not SERVING after 30s (last error: %v)", name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		conn.Close()
	}
	return nil
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

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
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
