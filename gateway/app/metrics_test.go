package app_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/gateway/internal/routes"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/testdb"
)

// TestMetricsCountRoutesAndShedding: the metrics server on METRICS_ADDR counts the API's
// answers by contract route and status code (refused, unknown and shed requests alike),
// shows the shedder's limit, in-flight requests and refusals, and never puts a raw path in
// a label.
func TestMetricsCountRoutesAndShedding(t *testing.T) {
	t.Parallel()
	api, metricsURL := runGateway(t, map[string]string{"MAX_IN_FLIGHT": "1", "SHED_LATENCY_TARGET": "0"})

	known := post(t, api+"/v2/api/core/wallets/W-7f3a9c/action", "{}")
	unknown := post(t, api+"/v3/api/nowhere/ZC-55821", "{}")
	if known != http.StatusUnauthorized {
		t.Errorf("unsigned request: %d, want 401", known)
	}
	hold := holdSlot(t, api, metricsURL)
	if code := post(t, api+"/v3/api/trading/wallets", "{}"); code != http.StatusServiceUnavailable {
		t.Errorf("request beyond MAX_IN_FLIGHT=1: %d, want 503", code)
	}
	body := scrape(t, metricsURL)
	_ = hold.Close()

	for series, want := range map[string]float64{
		`gateway_http_requests_total{code="401",route="/v2/api/core/wallets/{wallet_id}/action"}`: 1,
		`gateway_http_requests_total{code="` + strconv.Itoa(unknown) + `",route="other"}`:         1,
		`gateway_http_requests_total{code="503",route="/v3/api/trading/wallets"}`:                 1,
		`gateway_http_request_duration_seconds_count{route="other"}`:                              1,
		`gateway_shed_total`:        1,
		`gateway_shed_limit`:        1,
		`gateway_in_flight`:         1,
		`go_goroutines`:             -1, // present, any value
		`process_cpu_seconds_total`: -1,
	} {
		got, ok := sample(body, series)
		switch {
		case !ok:
			t.Errorf("no sample %s", series)
		case want >= 0 && got != want:
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	checkRouteLabels(t, body, "W-7f3a9c", "ZC-55821", "nowhere")
}

// TestMetricsAddressTaken: a gateway whose METRICS_ADDR is taken does not start.
func TestMetricsAddressTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := gatewayConfig(t, map[string]string{"METRICS_ADDR": taken.Addr().String()})
	err = app.Run(t.Context(), cfg, slog.New(slog.DiscardHandler), nil)
	if err == nil || !strings.Contains(err.Error(), "METRICS_ADDR") {
		t.Errorf("Run with METRICS_ADDR taken = %v, want a METRICS_ADDR error", err)
	}
}

// gatewayConfig is the gateway's configuration from its defaults and env, on a fresh
// database, with a new signing key and every backend unreachable.
func gatewayConfig(t *testing.T, env map[string]string) app.Config {
	t.Helper()
	db := testdb.New(t)
	vars := map[string]string{"MONGODB_URI": os.Getenv("MONGODB_URI"), "MONGODB_DATABASE": db.Name(),
		"PRINCIPAL_PRIVATE_KEY_FILE": keyFile(t), "HTTP_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0"}
	for _, name := range []string{"SERVICEDESK", "TRADING", "INTERCHANGE", "CUSTODY", "COMPLIANCE"} {
		vars[name+"_ADDR"] = "127.0.0.1:1"
	}
	for k, v := range env {
		vars[k] = v
	}
	var cfg app.Config
	if err := envconfig.ProcessWith(t.Context(), &envconfig.Config{Target: &cfg, Lookuper: envconfig.MapLookuper(vars)}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runGateway runs the gateway as its binary does and returns its API and metrics URLs.
func runGateway(t *testing.T, env map[string]string) (api, metricsURL string) {
	t.Helper()
	// The metrics socket stays held from the pick to the gateway's start (config.Reserve).
	metricsAddr, metricsSocket, _, err := config.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env["METRICS_ADDR"] = metricsSocket
	cfg := gatewayConfig(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, slog.New(slog.DiscardHandler), func(a string) { ready <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway stopped with %v", err)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr, "http://" + metricsAddr + "/metrics"
	case err := <-done:
		t.Fatalf("gateway did not start: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("gateway did not start within 15s")
	}
	return "", ""
}

// holdSlot starts a request whose body never finishes, so that it holds an in-flight slot,
// and returns once the metrics show it in flight.
func holdSlot(t *testing.T, api, metricsURL string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(api, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	start := "POST /v3/api/trading/wallets HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
	if _, err := conn.Write([]byte(start)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, _ := sample(scrape(t, metricsURL), "gateway_in_flight"); n == 1 {
			return conn
		}
	}
	t.Fatal("the slow request never showed in gateway_in_flight")
	return nil
}

// checkRouteLabels fails if a route label is neither a contract template nor "other", or
// if the exposition mentions any of the raw path parts.
func checkRouteLabels(t *testing.T, body string, raw ...string) {
	t.Helper()
	table, err := routes.Load()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"other": true}
	for _, r := range table.Routes() {
		allowed[r.Template] = true
	}
	for _, m := range regexp.MustCompile(`route="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if !allowed[m[1]] {
			t.Errorf("route label %q is not a contract template", m[1])
		}
	}
	for _, s := range raw {
		if strings.Contains(body, s) {
			t.Errorf("the metrics mention %q from a request path", s)
		}
	}
}

func post(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// sample returns the value of series (name and labels, as exposed) in a text exposition.
func sample(body, series string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(rest, 64)
		return v, err == nil
	}
	return 0, false
}

func keyFile(t *testing.T) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gateway.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
