package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/zcustody/suite/gateway/internal/auth"
	"github.com/zcustody/suite/gateway/internal/edge"
	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/gateway/internal/jsonpb"
	"github.com/zcustody/suite/gateway/internal/routes"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/logging"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	compliancev1 "github.com/zcustody/suite/proto/compliance/v1"
	custodyv1 "github.com/zcustody/suite/proto/custody/v1"
	eventsv1 "github.com/zcustody/suite/proto/events/v1"
	interchangev1 "github.com/zcustody/suite/proto/interchange/v1"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// Gateway is the assembled HTTP handler and what it holds open.
type Gateway struct {
	Handler http.Handler
	replay  *auth.ReplayStore
	mongo   *mongo.Client
	conns   []*grpc.ClientConn
	backend map[string]*grpc.ClientConn
	logger  *slog.Logger
	metrics *metrics
	authn   *auth.Authenticator
}

// bindPublicURL makes the URL of the listener the one clients must sign, when no
// PUBLIC_BASE_URL is configured and the listener names one host (a wildcard address names
// none: then any host is taken, and the gateway says so). Call it before serving.
func (g *Gateway) bindPublicURL(addr net.Addr) {
	if len(g.authn.PublicBases) > 0 {
		return
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil || ap.Addr().IsUnspecified() {
		g.logger.Warn("no PUBLIC_BASE_URL and a wildcard listener: signatures are checked against whatever host the client sends", "addr", addr.String())
		return
	}
	g.authn.PublicBases = []string{"http://" + addr.String()}
}

// New connects the backends and builds the handler.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Gateway, error) {
	logger = logging.WithRequests(logger)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Production {
		if err := config.RefuseDemoKeyFiles(cfg.PrivateKeyFile); err != nil {
			return nil, err
		}
	}
	key, err := principal.LoadPrivateKey(cfg.PrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("PRINCIPAL_PRIVATE_KEY_FILE: %w", err)
	}
	table, err := routes.Load()
	if err != nil {
		return nil, err
	}
	client, err := mongodb.Connect(ctx, cfg.MongoURI)
	if err != nil {
		return nil, err
	}
	g := &Gateway{mongo: client, replay: auth.NewReplayStore(client.Database(cfg.Database)), logger: logger, backend: map[string]*grpc.ClientConn{}}
	if err := g.replay.EnsureIndexes(ctx); err != nil {
		g.Close()
		return nil, err
	}
	signer := principal.NewSigner("gateway", key, time.Minute)
	if err := g.dial(cfg); err != nil {
		g.Close()
		return nil, err
	}
	mux, err := g.mux(ctx, table)
	if err != nil {
		g.Close()
		return nil, err
	}
	proxies, _ := cfg.Proxies() // validated above
	authn := &auth.Authenticator{
		Identity: auth.NewIdentityCache(servicedeskv1.NewIdentityServiceClient(g.backend["servicedesk"]), signer, cfg.IdentityTTL),
		Replay:   g.replay, Routes: table, Signer: signer, Window: cfg.SignatureWindow, Logger: logger,
		Limits: auth.NewLimiter(cfg.CompanyRPS, cfg.UserRPS, cfg.RateBurst), TrustedProxies: proxies,
		PeerLimits:     auth.NewLimiter(cfg.PeerRPS, 0, max(cfg.RateBurst, int(2*cfg.PeerRPS))),
		RefuseDemoKeys: cfg.Production,
	}
	authn.PublicBases, _ = cfg.PublicBases() // validated above
	g.authn = authn
	shed := edge.ShedOptions{MaxInFlight: cfg.MaxInFlight, Target: cfg.ShedLatencyTarget, Logger: logger}
	api := edge.Shed(shed, edge.Guard(cfg.MaxBodyBytes, authn.Middleware(withTimeout(cfg.RequestTimeout, mux))))
	// Outside the shedder, so that the requests it refuses are counted too.
	g.metrics = newMetrics(table, api)
	g.Handler = requestLog(logger, g.routes(g.metrics.instrument(api)))
	return g, nil
}

// dial opens one reused client connection per backend service.
func (g *Gateway) dial(cfg Config) error {
	for name, addr := range map[string]string{
		"servicedesk": cfg.ServicedeskAddr, "trading": cfg.TradingAddr, "interchange": cfg.InterchangeAddr,
		"custody": cfg.CustodyAddr, "compliance": cfg.ComplianceAddr, "events": cfg.EventsAddr,
	} {
		opts := []grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(4 << 20)),
		}
		conn, err := grpc.NewClient(addr, opts...)
		if err != nil {
			return fmt.Errorf("dial %s: %w", name, err)
		}
		g.conns = append(g.conns, conn)
		g.backend[name] = conn
	}
	return nil
}

// mux maps the contract's paths onto the backends with grpc-gateway.
func (g *Gateway) mux(ctx context.Context, table *routes.Table) (*runtime.ServeMux, error) {
	mux := runtime.NewServeMux(
		// Responses render as protojson would, faster (internal/jsonpb); requests decode with protojson.
		runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonpb.New(runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{EmitDefaultValues: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		})),
		runtime.WithErrorHandler(httperr.ErrorHandler),
		runtime.WithRoutingErrorHandler(httperr.RoutingErrorHandler(table.Allowed)),
		// Only the documented method reaches a route: no X-HTTP-Method-Override, and no POST
		// with a form body taken for a GET.
		runtime.WithDisableHTTPMethodOverride(),
		runtime.WithDisablePathLengthFallback(),
		// Nothing the client sends becomes gRPC metadata except the verified principal.
		runtime.WithIncomingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithMetadata(func(ctx context.Context, _ *http.Request) metadata.MD {
			return metadata.Join(metadata.Pairs(principal.MetadataKey, auth.Token(ctx)), requestMetadata(ctx))
		}),
	)
	regs := []struct {
		name string
		reg  func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error
	}{
		{"servicedesk", servicedeskv1.RegisterServicedeskServiceHandler},
		{"trading", tradingv1.RegisterTradingServiceHandler},
		{"interchange", interchangev1.RegisterInterchangeServiceHandler},
		{"custody", custodyv1.RegisterCustodyServiceHandler},
		{"compliance", compliancev1.RegisterComplianceServiceHandler},
		{"events", eventsv1.RegisterEventsServiceHandler},
		{"events", eventsv1.RegisterWebhookServiceHandler},
	}
	for _, r := range regs {
		if err := r.reg(ctx, mux, g.backend[r.name]); err != nil {
			return nil, fmt.Errorf("register %s: %w", r.name, err)
		}
	}
	return mux, nil
}

// Close releases the backend connections and the database client.
func (g *Gateway) Close() {
	for _, c := range g.conns {
		_ = c.Close()
	}
	if g.mongo != nil {
		_ = g.mongo.Disconnect(context.Background())
	}
}

func withTimeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
