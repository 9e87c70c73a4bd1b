// Package scenario defines what the bench measures: a read (trading wallet search, endpoint 2)
// and a write (service request create, endpoint 5), each issued three ways: through the
// gateway (signed REST), as a direct gRPC call to the owning service, and as the driver
// operations the service itself issues on its store.
package scenario

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/mongodb"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
	servicedeskstore "github.com/zcustody/suite/services/servicedesk/store"
	tradingstore "github.com/zcustody/suite/services/trading/store"
)

// Layer names.
const (
	LayerGateway = "gateway"
	LayerDirect  = "direct gRPC"
	LayerRaw     = "raw driver"
)

// Layer is one way of issuing a scenario's operation.
type Layer struct {
	Name string
	// Targets returns the targeter of one attack that keeps up to inFlight requests busy;
	// what it starts stops with ctx.
	Targets func(ctx context.Context, inFlight int) vegeta.Targeter
	// Client is the attack's HTTP client: nil for real HTTP (the gateway), an in-process
	// transport for the others.
	Client  *http.Client
	starved *atomic.Int64
}

// Starved is how many targets the attacks so far had to wait for (signing fell behind).
func (l Layer) Starved() int64 {
	if l.starved == nil {
		return 0
	}
	return l.starved.Load()
}

// Scenario is one operation and its layers, in the order gateway, direct, raw.
type Scenario struct {
	Name   string // "read" or "write"
	Title  string
	Layers []Layer
	// Reset, if set, undoes what the steps since a time wrote, so every step runs against the
	// same data (the write's look-up scans the requests on the embedded database).
	Reset func(ctx context.Context, since time.Time) error
}

// Env holds the connections the layers use: one reused gRPC connection per service (as the
// gateway holds), one MongoDB client with the services' options.
type Env struct {
	gatewayURL  string
	companyKey  crypto.PrivateKey
	trading     tradingv1.TradingServiceClient
	servicedesk servicedeskv1.ServicedeskServiceClient
	wallets     *tradingstore.Store
	requests    *servicedeskstore.Store
	tokens      map[string]*tokenSource
	conns       []*grpc.ClientConn
	mongo       *mongo.Client
}

// Connect opens the connections. gatewayKeyFile is the gateway's principal key: the direct
// layer forwards the same user principal the gateway would, signed with it.
func Connect(ctx context.Context, gatewayURL string, addrs map[string]string, mongoURI, gatewayKeyFile string) (*Env, error) {
	pemKey, err := demo.Key("ztest-company.pem")
	if err != nil {
		return nil, err
	}
	e := &Env{gatewayURL: gatewayURL, tokens: map[string]*tokenSource{}}
	if e.companyKey, err = signing.ParsePrivateKey(pemKey); err != nil {
		return nil, err
	}
	if e.mongo, err = mongodb.Connect(ctx, mongoURI); err != nil {
		return nil, err
	}
	e.wallets = tradingstore.New(e.mongo.Database("trading"))
	e.requests = servicedeskstore.New(e.mongo.Database("servicedesk"))
	tradingConn, err := e.dial(addrs["trading"])
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	sdConn, err := e.dial(addrs["servicedesk"])
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	e.trading, e.servicedesk = tradingv1.NewTradingServiceClient(tradingConn), servicedeskv1.NewServicedeskServiceClient(sdConn)
	if err := e.loadTokens(ctx, sdConn, gatewayKeyFile); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return e, nil
}

func (e *Env) dial(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	e.conns = append(e.conns, conn)
	return conn, nil
}

// Close releases the connections.
func (e *Env) Close() error {
	for _, c := range e.conns {
		_ = c.Close()
	}
	if e.mongo != nil {
		return e.mongo.Disconnect(context.Background())
	}
	return nil
}

// loadTokens asks the service desk's identity service, as the gateway does, who the bench's
// users are, and prepares the principal the gateway would forward for each.
func (e *Env) loadTokens(ctx context.Context, conn *grpc.ClientConn, keyFile string) error {
	key, err := principal.LoadPrivateKey(keyFile)
	if err != nil {
		return err
	}
	signer := principal.NewSigner(principal.GatewayIssuer, key, time.Minute)
	identity := servicedeskv1.NewIdentityServiceClient(conn)
	for _, email := range []string{data.Viewer, data.Maker, data.Checker} {
		sctx, err := signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: principal.GatewayIssuer})
		if err != nil {
			return err
		}
		caller, err := identity.GetCaller(sctx, &servicedeskv1.GetCallerRequest{CompanyId: data.Company, UserEmail: email})
		if err != nil {
			return fmt.Errorf("identity of %s: %w", email, err)
		}
		u, c := caller.GetUser(), caller.GetCompany()
		e.tokens[email] = &tokenSource{signer: signer, p: principal.Principal{Kind: principal.KindUser, CompanyID: c.GetId(),
			CompanyName: c.GetName(), UserEmail: u.GetEmail(), Roles: u.GetRoles(), Entitlements: u.GetEntitlements()}}
	}
	return nil
}

// tokenSource holds a user's principal token and signs a new one every 20 s (tokens live 60 s):
// a direct caller reuses its credentials, as the gateway's per-request token is the gateway's
// own cost.
type tokenSource struct {
	signer *principal.Signer
	p      principal.Principal

	mu     sync.Mutex
	token  string
	signed time.Time
}

func (t *tokenSource) outgoing(ctx context.Context) (context.Context, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.signed) > 20*time.Second {
		token, err := t.signer.Sign(t.p)
		if err != nil {
			return nil, err
		}
		t.token, t.signed = token, time.Now()
	}
	return metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, t.token), nil
}

// signingClient signs as the company for user.
func (e *Env) signingClient(user string) *signing.Client {
	return &signing.Client{BaseURL: e.gatewayURL, Company: data.Company, Submitter: user, Key: e.companyKey}
}
