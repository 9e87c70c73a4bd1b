// Package inproc runs the real gateway (gateway/app) in this process in front of stub
// backends that answer without a database: the real trading gRPC handler over a store that
// returns a fixed page, and stand-ins for the service desk's identity and create. Its
// benchmarks isolate the CPU the gateway adds to a call, which the database otherwise hides
// (on the embedded FerretDB a wallet search costs 0.15 s of database CPU at 1,000 wallets);
// run them with -cpuprofile to see the gateway's hot paths. Only the replay claim still goes
// to a database, the embedded FerretDB, as in the suite.
package inproc

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sethvargo/go-envconfig"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/deploy/local/embeddb"
	gatewayapp "github.com/zcustody/suite/gateway/app"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	tradingserver "github.com/zcustody/suite/services/trading/server"
)

// Harness is the gateway over stub backends.
type Harness struct {
	// GatewayURL is the gateway's HTTP address (httptest server, keep-alive).
	GatewayURL string
	// Trading and Servicedesk are direct clients of the stub backends.
	Trading     tradingv1.TradingServiceClient
	Servicedesk servicedeskv1.ServicedeskServiceClient
	// Signer signs principal tokens as the gateway does (for the direct calls).
	Signer *principal.Signer

	closers []func() error
	failed  atomic.Int64 // benchmark calls that failed
}

// Start starts the embedded database, the stub backends and the gateway; dir holds the
// database and the gateway's key.
func Start(ctx context.Context, dir string) (h *Harness, err error) {
	h = &Harness{}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Close())
		}
	}()
	db, err := embeddb.Start(ctx, embeddb.Config{Dir: filepath.Join(dir, "ferretdb"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	h.closers = append(h.closers, db.Close)
	keyFile, key, err := gatewayKey(dir)
	if err != nil {
		return nil, err
	}
	h.Signer = principal.NewSigner(principal.GatewayIssuer, key, time.Minute)
	addr, err := h.serveBackends(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	return h, h.startGateway(ctx, db.URI(), addr, keyFile)
}

// Close stops everything.
func (h *Harness) Close() error {
	var errs []error
	for i := len(h.closers) - 1; i >= 0; i-- {
		errs = append(errs, h.closers[i]())
	}
	return errors.Join(errs...)
}

func gatewayKey(dir string) (string, ed25519.PrivateKey, error) {
	pemKey, err := demo.Key("gateway-principal.pem")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "gateway-principal.pem")
	if err := os.WriteFile(path, pemKey, 0o600); err != nil {
		return "", nil, fmt.Errorf("write key: %w", err)
	}
	key, err := principal.LoadPrivateKey(path)
	return path, key, err
}

// serveBackends serves the stubs on one gRPC server, behind the services' principal check.
func (h *Harness) serveBackends(gatewayPub ed25519.PublicKey) (string, error) {
	verifier := principal.NewVerifier(map[string]ed25519.PublicKey{principal.GatewayIssuer: gatewayPub})
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(verifier.UnaryServerInterceptor()))
	tradingv1.RegisterTradingServiceServer(srv, tradingserver.New(fixedPage{}))
	identity, err := newIdentity()
	if err != nil {
		return "", err
	}
	servicedeskv1.RegisterIdentityServiceServer(srv, identity)
	servicedeskv1.RegisterServicedeskServiceServer(srv, creator{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen: %w", err)
	}
	go func() { _ = srv.Serve(lis) }()
	h.closers = append(h.closers, func() error { srv.Stop(); return nil })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", fmt.Errorf("dial stubs: %w", err)
	}
	h.closers = append(h.closers, conn.Close)
	h.Trading, h.Servicedesk = tradingv1.NewTradingServiceClient(conn), servicedeskv1.NewServicedeskServiceClient(conn)
	return lis.Addr().String(), nil
}

// startGateway builds the gateway with its defaults (from its env tags), every backend on the
// stubs, and the rate limits off.
func (h *Harness) startGateway(ctx context.Context, mongoURI, backends, keyFile string) error {
	var cfg gatewayapp.Config
	env := map[string]string{"MONGODB_URI": mongoURI, "PRINCIPAL_PRIVATE_KEY_FILE": keyFile, "LOG_LEVEL": "warn", "METRICS_ADDR": "127.0.0.1:0",
		"RATE_LIMIT_COMPANY_RPS": "0", "RATE_LIMIT_USER_RPS": "0", "RATE_LIMIT_PEER_RPS": "0", "RATE_LIMIT_BURST": "1"}
	for _, name := range []string{"SERVICEDESK", "TRADING", "INTERCHANGE", "CUSTODY", "COMPLIANCE"} {
		env[name+"_ADDR"] = backends
	}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &cfg, Lookuper: envconfig.MapLookuper(env)}); err != nil {
		return fmt.Errorf("gateway config: %w", err)
	}
	g, err := gatewayapp.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	h.closers = append(h.closers, func() error { g.Close(); return nil })
	srv := httptest.NewServer(g.Handler)
	h.closers = append(h.closers, func() error { srv.Close(); return nil })
	h.GatewayURL = srv.URL
	return nil
}

// UserToken is the token the gateway forwards for one of the bench's users.
func (h *Harness) UserToken(email string) (string, error) {
	return h.Signer.Sign(principal.Principal{Kind: principal.KindUser, CompanyID: data.Company, CompanyName: data.CompanyName,
		UserEmail: email, Roles: []string{principal.RoleMaker, principal.RoleViewer}, Entitlements: []string{data.WriteService}})
}
