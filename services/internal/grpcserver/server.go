// Package grpcserver runs a service's gRPC server the same way for every service: principal
// verification, panic recovery, error mapping, request logs, Prometheus metrics on their own
// port, grpc.health.v1 that follows the database, reflection, and graceful shutdown.
package grpcserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/services/internal/authz"
	"github.com/zcustody/suite/services/internal/validation"
)

// MaxMessageSize bounds every request and response message.
const MaxMessageSize = 4 << 20

// LivenessService is the grpc.health.v1 service name of the liveness probe.
const LivenessService = "liveness"

// Server is a service's gRPC server and its side servers.
type Server struct {
	GRPC     *grpc.Server
	health   *health.Server
	registry *prometheus.Registry
	logger   *slog.Logger
	services []string
}

// New builds the server; register the service implementations on s.GRPC before Run.
// policy says who may call each method; calls it does not allow are refused.
func New(logger *slog.Logger, verifier *principal.Verifier, policy authz.Policy) *Server {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	registry.MustRegister(metrics)
	panics := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "panic in handler", "panic", fmt.Sprint(p))
		return status.Error(codes.Internal, "internal error")
	})
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 5 * time.Minute, MaxConnectionAge: 30 * time.Minute, MaxConnectionAgeGrace: 30 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(
			requestContext(),
			metrics.UnaryServerInterceptor(),
			logUnary(logger),
			recovery.UnaryServerInterceptor(panics),
			verifier.UnaryServerInterceptor(),
			policy.UnaryServerInterceptor(),
			// After authentication and authorization: a stranger learns nothing of the rules.
			validation.UnaryServerInterceptor(),
		),
		grpc.ChainStreamInterceptor(
			metrics.StreamServerInterceptor(),
			recovery.StreamServerInterceptor(panics),
			verifier.StreamServerInterceptor(),
			policy.StreamServerInterceptor(),
		),
	)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	// LivenessService answers SERVING while the process runs, whatever the database does, so
	// a database outage makes pods unready without restarting them.
	hs.SetServingStatus(LivenessService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	return &Server{GRPC: srv, health: hs, registry: registry, logger: logger}
}

// EnableReflection serves gRPC server reflection (config.Common.Reflection decides).
func (s *Server) EnableReflection() { reflection.Register(s.GRPC) }

// Metrics is the registry the metrics server serves: a service registers its own gauges
// and counters there.
func (s *Server) Metrics() prometheus.Registerer { return s.registry }

// Listeners are a service's two sockets: gRPC and metrics.
type Listeners struct {
	GRPC, Metrics net.Listener
}

// Listen opens cfg's gRPC and metrics sockets (config.Listen: host:port or fd:N), before
// anything else starts, so that a taken port ends the start at once.
func Listen(cfg config.Common) (Listeners, error) {
	grpcLis, err := config.Listen(cfg.GRPCAddr)
	if err != nil {
		return Listeners{}, fmt.Errorf("GRPC_ADDR: %w", err)
	}
	metricsLis, err := config.Listen(cfg.MetricsAddr)
	if err != nil {
		grpcLis.Close()
		return Listeners{}, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	return Listeners{GRPC: grpcLis, Metrics: metricsLis}, nil
}

// Close closes both sockets (after Serve they are closed already; closing again is harmless).
func (l Listeners) Close() {
	for _, lis := range []net.Listener{l.GRPC, l.Metrics} {
		if lis != nil {
			_ = lis.Close()
		}
	}
}

// Serve serves on lis until ctx ends, then drains in-flight calls for at most
// cfg.ShutdownTimeout. ping reports whether the database answers; health says SERVING only
// while it does.
func (s *Server) Serve(ctx context.Context, lis Listeners, cfg config.Common, ping func(context.Context) error) error {
	for name := range s.GRPC.GetServiceInfo() {
		s.services = append(s.services, name)
	}
	metricsSrv := &http.Server{Handler: promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		s.logger.Info("grpc server listening", "addr", lis.GRPC.Addr().String())
		if err := s.GRPC.Serve(lis.GRPC); err != nil {
			return fmt.Errorf("grpc server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := metricsSrv.Serve(lis.Metrics); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("metrics server: %w", err)
		}
		return nil
	})
	g.Go(func() error { s.watchHealth(gctx, cfg.HealthInterval, ping); return nil })
	g.Go(func() error {
		<-gctx.Done()
		s.shutdown(cfg.ShutdownTimeout)
		return metricsSrv.Shutdown(context.WithoutCancel(ctx))
	})
	return g.Wait()
}

func (s *Server) shutdown(timeout time.Duration) {
	s.logger.Info("shutting down", "timeout", timeout.String())
	s.health.Shutdown()
	done := make(chan struct{})
	go func() { s.GRPC.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		s.logger.Warn("graceful stop timed out; closing connections")
		s.GRPC.Stop()
		<-done
	}
}

func (s *Server) watchHealth(ctx context.Context, every time.Duration, ping func(context.Context) error) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	last := healthpb.HealthCheckResponse_UNKNOWN
	for {
		next := healthpb.HealthCheckResponse_SERVING
		pingCtx, cancel := context.WithTimeout(ctx, every)
		if err := ping(pingCtx); err != nil {
			next = healthpb.HealthCheckResponse_NOT_SERVING
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		if next != last {
			s.logger.Info("health changed", "status", next.String())
			s.setAll(next)
			last = next
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (s *Server) setAll(st healthpb.HealthCheckResponse_ServingStatus) {
	s.health.SetServingStatus("", st)
	for _, name := range s.services {
		s.health.SetServingStatus(name, st)
	}
}
