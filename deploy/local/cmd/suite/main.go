// Command suite runs the whole suite locally (make run): the embedded database, the five
// services and the gateway, with the demo data loaded.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/stack"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
)

func main() {
	restore := foreground()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	restore()
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	logFile, err := openLog()
	if err != nil {
		return err
	}
	defer logFile.Close()
	logger := logging.New(logFile, envOr("LOG_LEVEL", "info"), "suite")
	s, err := stack.Start(ctx, stack.Options{
		MongoURI: os.Getenv("MONGODB_URI"),
		DataDir:  envOr("DATA_DIR", ".data"),
		HTTPAddr: envOr("HTTP_ADDR", "127.0.0.1:8080"),
		Logger:   logger,
	})
	if err != nil {
		return err
	}
	if err := writeServices(envOr("DATA_DIR", ".data"), s.Services); err != nil {
		return err
	}
	fmt.Printf(`The suite is running.

  gateway     %s   (OpenAPI: %s/openapi.json, health: %s/healthz)
  database    %s
  logs        %s
  gRPC        %s
  metrics     %s

Try it (signs with the demo keys of company ZTEST, user api-maker@ztest.example):

  go run ./deploy/local/cmd/suitectl POST /v3/api/servicedesk/products '{}'
  go run ./deploy/local/cmd/suitectl -as viewer POST /v3/api/servicedesk/products '{"products":["CUSTODY"]}'
  go run ./deploy/local/cmd/suitectl -company zacme POST /v3/api/compliance/vasps/VASP-003/activate/false

%s
Press Ctrl-C to stop.
`, s.GatewayURL, s.GatewayURL, s.GatewayURL, s.MongoURI, logFile.Name(), addrList(s.Services), addrList(s.Metrics()), limits(s.GatewayConfig()))
	feedDemo(ctx, s.MongoURI, logger)
	fmt.Println("stopping…")
	return s.Stop()
}

// limits describes the gateway's effective limits, which for local work are looser than a
// deployment's defaults (gateway/app.Config).
// addrList lists addresses by process name: the services' internal gRPC addresses (signed
// system principals only; suitectl's internal calls read them from DATA_DIR/services.json),
// or every process's metrics address.
func addrList(addrs map[string]string) string {
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(addrs)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name + " " + addrs[name])
	}
	return b.String()
}

func limits(c gatewayapp.Config) string {
	onOff := func(v float64, unit string) string {
		if v <= 0 {
			return "off"
		}
		return fmt.Sprintf("%g%s", v, unit)
	}
	shedding := "off"
	if c.MaxInFlight > 0 {
		shedding = fmt.Sprintf("at most %d in flight", c.MaxInFlight)
	}
	return fmt.Sprintf(`Gateway limits of this local run (looser than a deployment's defaults: 50/s per company,
20/s per user, burst 100, 200/s per client address, load shedding at 512 in flight):
  per company %s, per user %s, burst %d, per client address %s, load shedding %s
`, onOff(c.CompanyRPS, "/s"), onOff(c.UserRPS, "/s"), c.RateBurst, onOff(c.PeerRPS, "/s"), shedding)
}

func openLog() (*os.File, error) {
	dir := envOr("DATA_DIR", ".data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	f, err := os.OpenFile(dir+"/suite.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// feedDemo refreshes the demo fee estimates and prices every few minutes until ctx ends,
// standing in for the fee and price feeds a real deployment has.
func feedDemo(ctx context.Context, uri string, logger *slog.Logger) {
	client, err := mongodb.Connect(ctx, uri)
	if err != nil {
		logger.Warn("demo fee feed unavailable", "error", err.Error())
		<-ctx.Done()
		return
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	ticker := time.NewTicker(5 * time.Minute)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := demo.RefreshFees(ctx, client); err != nil {
				logger.Warn("refresh demo fees", "error", err.Error())
			}
			if err := demo.RefreshPrices(ctx, client); err != nil {
				logger.Warn("refresh demo prices", "error", err.Error())
			}
		}
	}
}

// writeServices records the services' gRPC addresses for suitectl's internal calls.
func writeServices(dir string, addrs map[string]string) error {
	data, err := json.Marshal(addrs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "services.json"), data, 0o600); err != nil {
		return fmt.Errorf("write services file: %w", err)
	}
	return nil
}
