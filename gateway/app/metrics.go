package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zcustody/suite/gateway/internal/edge"
	"github.com/zcustody/suite/gateway/internal/routes"
	"github.com/zcustody/suite/platform/config"
)

// otherRoute labels the requests that match no route of the contract, so that a label
// never carries a raw path (unbounded values, identifiers).
const otherRoute = "other"

// metrics counts the API's requests by contract route and status, times them, and reads
// the load shedder, for Prometheus on METRICS_ADDR. No label carries a caller's identity.
type metrics struct {
	registry *prometheus.Registry
	table    *routes.Table
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics registers the gateway's metrics, the shedder's and the Go runtime's and
// process's on a registry of their own.
func newMetrics(table *routes.Table, shed *edge.Shedder) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		table:    table,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_http_requests_total",
			Help: "API requests answered, by contract route (or other) and HTTP status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gateway_http_request_duration_seconds",
			Help:    "Time to answer an API request, by contract route (or other).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gateway_shed_limit",
			Help: "Current limit on API requests served at once; beyond it the gateway answers 503.",
		}, func() float64 { return float64(shed.Limit()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gateway_in_flight",
			Help: "API requests being served.",
		}, func() float64 { return float64(shed.InFlight()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gateway_shed_total",
			Help: "API requests refused by load shedding (503).",
		}, func() float64 { return float64(shed.Refused()) }),
	)
	return m
}

// instrument counts and times every request next answers, by the contract route it matches.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := otherRoute
		if rt, ok := m.table.Match(r.Method, r.URL.Path); ok {
			route = rt.Template
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status())).Inc()
	})
}

// statusWriter remembers the status code written through it. Unwrap lets
// http.ResponseController reach the server's writer (flushing, deadlines).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the code sent, 200 if the handler wrote nothing.
func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// listenMetrics opens METRICS_ADDR; an empty address turns the metrics server off (nil).
func listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	lis, err := config.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	return lis, nil
}

// metricsServer serves the registry on its own server, apart from the API.
func (g *Gateway) metricsServer(cfg Config) *http.Server {
	return &http.Server{
		Handler:           promhttp.HandlerFor(g.metrics.registry, promhttp.HandlerOpts{}),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       90 * time.Second,
	}
}

// serveMetrics serves srv on lis until srv is shut down; nothing if lis is nil.
func serveMetrics(srv *http.Server, lis net.Listener, logger *slog.Logger) error {
	if lis == nil {
		return nil
	}
	logger.Info("metrics listening", "addr", lis.Addr().String())
	if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve metrics: %w", err)
	}
	return nil
}
