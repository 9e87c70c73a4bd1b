package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/zcustody/suite/gateway"
	"github.com/zcustody/suite/platform/config"
)

// routes serves the gateway's own endpoints and sends the rest to the authenticated API.
func (g *Gateway) routes(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", g.healthz)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(gateway.OpenAPI)
	})
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(gateway.OpenAPIYAML)
	})
	mux.Handle("/", api)
	return mux
}

// healthz answers 200 when every backend reports SERVING, else 503 naming the ones that don't.
func (g *Gateway) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	down := []string{}
	for name, conn := range g.backend {
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			down = append(down, name)
		}
	}
	slices.Sort(down)
	code, state := http.StatusOK, "SERVING"
	if len(down) > 0 {
		code, state = http.StatusServiceUnavailable, "NOT_SERVING"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": state, "down": down})
}

// Run builds the gateway and serves HTTP on cfg.HTTPAddr, and its metrics on
// cfg.MetricsAddr, until ctx ends, then finishes in-flight requests for at most
// cfg.ShutdownTimeout. ready, if set, receives the API's address.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, ready func(addr string)) error {
	// The ports open first: a port in use ends the start at once.
	lis, err := config.Listen(cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP_ADDR: %w", err)
	}
	defer lis.Close()
	mlis, err := listenMetrics(cfg.MetricsAddr)
	if err != nil {
		return err
	}
	if mlis != nil {
		defer mlis.Close()
	}
	g, err := New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer g.Close()
	g.bindPublicURL(lis.Addr())
	srv, msrv := HTTPServer(cfg, g.Handler), g.metricsServer(cfg)
	grp, gctx := errgroup.WithContext(ctx)
	grp.Go(func() error { return serveMetrics(msrv, mlis, logger) })
	grp.Go(func() error {
		logger.Info("gateway listening", "addr", lis.Addr().String())
		if ready != nil {
			ready(lis.Addr().String())
		}
		if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve http: %w", err)
		}
		return nil
	})
	grp.Go(func() error { g.replay.Sweep(gctx, time.Minute, logger); return nil })
	grp.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		logger.Info("gateway shutting down")
		// The metrics stay up while the API drains, so the last scrape sees it.
		err := srv.Shutdown(sctx)
		return errors.Join(err, msrv.Shutdown(sctx))
	})
	return grp.Wait()
}

// HTTPServer is the gateway's HTTP server: slow clients are cut off (headers within
// READ_HEADER_TIMEOUT, the whole request within READ_TIMEOUT), answers are bounded by the
// request timeout, idle connections closed, headers at most 64 KiB.
func HTTPServer(cfg Config, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}
