package fault_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/fault"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// gatewayRun is a gateway started with gatewayapp.Run, as its binary runs it.
type gatewayRun struct {
	url, addr string
	cancel    context.CancelFunc // what SIGTERM does to the binary
	done      chan error         // what Run returned
}

// startGateway runs another gateway over s's services with the stack gateway's settings,
// changed by change.
func startGateway(t *testing.T, s *suite, change func(*gatewayapp.Config)) *gatewayRun {
	t.Helper()
	cfg := s.stack.GatewayConfig()
	cfg.HTTPAddr, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	change(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	g := &gatewayRun{cancel: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		g.done <- gatewayapp.Run(ctx, cfg, s.logger.With("service", "gateway-2"), func(a string) { ready <- a })
	}()
	select {
	case g.addr = <-ready:
	case err := <-g.done:
		cancel()
		t.Fatalf("second gateway: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("second gateway did not start within 10s")
	}
	g.url = "http://" + g.addr
	t.Cleanup(func() {
		cancel()
		select {
		case <-g.done:
		case <-time.After(15 * time.Second):
			t.Error("second gateway did not stop within 15s")
		}
	})
	return g
}

func newRelay(t *testing.T, target string) *fault.Relay {
	t.Helper()
	r, err := fault.NewRelay(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestGatewayDeadline: a service that accepts a call and never answers makes the gateway
// answer 504 ER-504 in the contract's body at REQUEST_TIMEOUT, and the call reaches the
// service with that deadline, so the service's side of it ends then too (nothing keeps
// running for a client that is gone). Once the service answers again, so does the gateway.
// (deploy/local/e2e TestServiceDeadline covers a backend that accepts TCP and never speaks
// HTTP/2; here the service is up and its handler hangs.)
func TestGatewayDeadline(t *testing.T) {
	t.Parallel()
	const timeout = 500 * time.Millisecond
	s := newSuite(t, setup{})
	relay := newRelay(t, s.stack.Services["compliance"])
	type seen struct {
		deadline time.Duration // left on the call when it reached the service
		ended    time.Duration // after how long the service's side of the call ended
		err      error
	}
	calls := make(chan seen, 1)
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		if c.Method != compliancev1.ComplianceService_SearchVasps_FullMethodName {
			return forward()
		}
		start := time.Now()
		var left time.Duration
		if d, ok := ctx.Deadline(); ok {
			left = time.Until(d)
		}
		<-ctx.Done() // the handler hangs
		calls <- seen{deadline: left, ended: time.Since(start), err: ctx.Err()}
		return ctx.Err()
	})
	g := startGateway(t, s, func(c *gatewayapp.Config) {
		c.ComplianceAddr = relay.Addr()
		c.RequestTimeout = timeout
	})
	viewerAt := clientAt(t, g.url, demo.CompanyZTEST, viewer)
	r := call(viewerAt, http.MethodPost, "/v3/api/compliance/vasps/search", []byte(`{}`))
	if msg := contractError(r, http.StatusGatewayTimeout, "ER-504"); msg != "" {
		t.Errorf("a hung service: %s", msg)
	}
	if r.elapsed < timeout || r.elapsed > timeout+time.Second {
		t.Errorf("answered after %v, want about REQUEST_TIMEOUT %v", r.elapsed, timeout)
	}
	select {
	case c := <-calls:
		t.Logf("504 after %v; the call reached the service with %v left and ended there after %v (%v)",
			r.elapsed.Round(time.Millisecond), c.deadline.Round(time.Millisecond), c.ended.Round(time.Millisecond), c.err)
		if c.deadline <= 0 || c.deadline > timeout {
			t.Errorf("the call reached the service with deadline %v left, want one within REQUEST_TIMEOUT %v", c.deadline, timeout)
		}
		if c.ended > timeout+time.Second {
			t.Errorf("the service's side of the call ended after %v, want at the deadline", c.ended)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hung call never ended on the service's side")
	}
	relay.SetHook(nil)
	mustOK(t, call(viewerAt, http.MethodPost, "/v3/api/compliance/vasps/search", []byte(`{}`)), nil)
}

// TestGatewayGracefulShutdown: a gateway told to stop (SIGTERM: its context ends) while
// requests are in flight stops accepting connections at once, lets the requests in flight
// finish with their 200, and only then returns.
func TestGatewayGracefulShutdown(t *testing.T) {
	t.Parallel()
	const inFlight = 4
	s := newSuite(t, setup{})
	relay := newRelay(t, s.stack.Services["trading"])
	var held atomic.Int32
	release := make(chan struct{})
	relay.SetHook(func(ctx context.Context, c fault.Call, forward func() error) error {
		if c.Method == tradingv1.TradingService_SearchWallets_FullMethodName {
			held.Add(1)
			select {
			case <-release: // a slow service
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return forward()
	})
	g := startGateway(t, s, func(c *gatewayapp.Config) {
		c.TradingAddr = relay.Addr()
		c.ShutdownTimeout = 5 * time.Second
	})
	viewerAt := clientAt(t, g.url, demo.CompanyZTEST, viewer)
	// Warm the identity cache, so the requests below wait at trading only.
	mustOK(t, call(viewerAt, http.MethodPost, "/v3/api/compliance/vasps/search", []byte(`{}`)), nil)

	var wg sync.WaitGroup
	results := make([]response, inFlight)
	for i := range inFlight {
		wg.Go(func() {
			c := clientAt(t, g.url, demo.CompanyZTEST, viewer) // a connection of its own
			results[i] = call(c, http.MethodPost, "/v3/api/trading/wallets", []byte(`{}`))
		})
	}
	waitFor(t, 5*time.Second, "requests held at trading", func() bool { return held.Load() == inFlight })
	stopAt := time.Now()
	g.cancel()
	refused := waitFor(t, 2*time.Second, "new connections refused", func() bool {
		conn, err := net.DialTimeout("tcp", g.addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return false
		}
		return true
	})
	if r := call(viewerAt, http.MethodPost, "/v3/api/compliance/vasps/search", []byte(`{}`)); r.err == nil {
		t.Errorf("a new request during the shutdown was answered: %d %s", r.status, r.body)
	}
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-g.done:
		t.Fatalf("the gateway returned (%v) with requests still in flight", err)
	default:
	}
	releaseAt := time.Now()
	close(release)
	wg.Wait()
	for i, r := range results {
		if r.err != nil || r.status != http.StatusOK {
			t.Errorf("request %d in flight during the shutdown: %d %s %v, want 200", i, r.status, r.body, r.err)
		}
	}
	select {
	case err := <-g.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v after a graceful shutdown", err)
		}
		t.Logf("new connections refused %v after the stop; in-flight requests released %v after it, all answered 200; Run returned %v after the release",
			refused.Round(time.Millisecond), releaseAt.Sub(stopAt).Round(time.Millisecond), time.Since(releaseAt).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the requests in flight finished")
	}
	g.done <- nil // for the cleanup
}
