package auth_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/gateway/internal/auth"
	"github.com/zcustody/suite/gateway/internal/edge"
	"github.com/zcustody/suite/gateway/internal/routes"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

// identityClient is a servicedeskv1.IdentityServiceClient over fixed records. Like the real
// service it answers only the gateway's system principal. Users are found by e-mail alone,
// so a test can hand the gateway a user of another company.
type identityClient struct {
	servicedeskv1.IdentityServiceClient // GetUser: not used by the gateway
	verifier                            *principal.Verifier
	companies                           map[string]*servicedeskv1.Company
	users                               map[string]*servicedeskv1.User

	mu     sync.Mutex
	calls  int
	emails []string // the user e-mails asked for ("" not recorded)
	err    error    // returned instead of a record when set
}

func (c *identityClient) GetCaller(ctx context.Context, in *servicedeskv1.GetCallerRequest, _ ...grpc.CallOption) (*servicedeskv1.GetCallerResponse, error) {
	c.mu.Lock()
	c.calls++
	if in.GetUserEmail() != "" {
		c.emails = append(c.emails, in.GetUserEmail())
	}
	err := c.err
	c.mu.Unlock()
	md, _ := metadata.FromOutgoingContext(ctx)
	tokens := md.Get(principal.MetadataKey)
	if len(tokens) != 1 {
		return nil, status.Error(codes.Unauthenticated, "missing caller credentials")
	}
	if p, verr := c.verifier.Verify(tokens[0]); verr != nil || p.Kind != principal.KindSystem || p.System != "gateway" {
		return nil, status.Error(codes.PermissionDenied, "identity lookups are reserved to the gateway")
	}
	if err != nil {
		return nil, err
	}
	co, ok := c.companies[in.GetCompanyId()]
	if !ok {
		return nil, status.Error(codes.NotFound, "company does not exist")
	}
	resp := &servicedeskv1.GetCallerResponse{Company: proto.CloneOf(co)}
	if u, ok := c.users[in.GetUserEmail()]; ok {
		resp.User = proto.CloneOf(u)
	}
	return resp, nil
}

// Emails returns the user e-mails the service desk was asked about.
func (c *identityClient) Emails() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.emails...)
}

func (c *identityClient) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func (c *identityClient) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

// replayStore is an in-memory auth.Authenticator Replay.
type replayStore struct {
	mu      sync.Mutex
	claimed map[string]time.Time
}

func (s *replayStore) Claim(_ context.Context, company, requestID string, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := company + ":" + requestID
	if _, ok := s.claimed[key]; ok {
		return auth.ErrReplay
	}
	s.claimed[key] = expires
	return nil
}

func (s *replayStore) expiry(company, requestID string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.claimed[company+":"+requestID]
	return e, ok
}

const (
	window = 5 * time.Minute
	base   = "http://gw.example"
)

// now is the gateway's clock in these tests.
var now = time.UnixMilli(1_700_000_000_000)

type fixture struct {
	handler  http.Handler
	authn    *auth.Authenticator
	identity *identityClient
	replay   *replayStore
	verifier *principal.Verifier // accepts the gateway's principal tokens

	rsaKey, edKey, oldKey, newKey, strangerKey crypto.PrivateKey

	mu     sync.Mutex
	tokens map[string]string // request-identifier → token next saw
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	gwPub, gwPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		replay:      &replayStore{claimed: map[string]time.Time{}},
		verifier:    principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": gwPub}),
		rsaKey:      newRSA(t),
		edKey:       newEd(t),
		oldKey:      newRSA(t),
		newKey:      newEd(t),
		strangerKey: newEd(t),
		tokens:      map[string]string{},
	}
	f.identity = &identityClient{
		verifier: f.verifier,
		companies: map[string]*servicedeskv1.Company{
			"ZRSA": {Id: "ZRSA", Name: "RSA Ltd", Active: true, PublicKeys: []string{pubPEM(t, f.rsaKey)}},
			"ZED":  {Id: "ZED", Name: "Ed Ltd", Active: true, PublicKeys: []string{pubPEM(t, f.edKey)}},
			"ZROT": {Id: "ZROT", Name: "Rotating Ltd", Active: true, PublicKeys: []string{pubPEM(t, f.oldKey), pubPEM(t, f.newKey)}},
			"ZOFF": {Id: "ZOFF", Name: "Suspended Ltd", Active: false, PublicKeys: []string{pubPEM(t, f.edKey)}},
			"ZBAD": {Id: "ZBAD", Name: "Broken Key Ltd", Active: true, PublicKeys: []string{"not a key", pubPEM(t, f.edKey)}},
		},
		users: map[string]*servicedeskv1.User{
			"maker@zed.example": {Email: "maker@zed.example", CompanyId: "ZED", Active: true,
				Roles: []string{principal.RoleMaker, principal.RoleViewer}, Entitlements: []string{"0x0013-001", "0x0007-004"}},
			"gone@zed.example":   {Email: "gone@zed.example", CompanyId: "ZED", Active: false, Roles: []string{principal.RoleMaker}},
			"maker@zrsa.example": {Email: "maker@zrsa.example", CompanyId: "ZRSA", Active: true, Roles: []string{principal.RoleChecker}},
		},
	}
	table, err := routes.Load()
	if err != nil {
		t.Fatal(err)
	}
	signer := principal.NewSigner("gateway", gwPriv, time.Minute)
	a := &auth.Authenticator{
		Identity: auth.NewIdentityCache(f.identity, signer, time.Minute),
		Replay:   f.replay,
		Routes:   table,
		Signer:   signer,
		Window:   window,
		Logger:   slog.New(slog.DiscardHandler),
		Now:      func() time.Time { return now },
		// httptest requests come from 192.0.2.1: the proxy tests move them elsewhere.
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")},
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.tokens[r.Header.Get(signing.HeaderRequestID)] = auth.Token(r.Context())
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	f.authn = a
	f.handler = edge.Guard(1<<20, a.Middleware(next))
	return f
}

func (f *fixture) token(requestID string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tokens[requestID]
	return t, ok
}

// call is one signed request as a client sends it.
type call struct {
	company   string
	submitter string
	key       crypto.PrivateKey
	method    string
	path      string
	body      []byte
	at        time.Time // the client's clock; now when zero
}

// request signs c with the suite's client and returns it as the gateway receives it.
func request(t *testing.T, c call) *http.Request {
	t.Helper()
	at := c.at
	if at.IsZero() {
		at = now
	}
	cl := &signing.Client{BaseURL: base, Company: c.company, Submitter: c.submitter, Key: c.key, Now: func() time.Time { return at }}
	sent, err := cl.NewRequest(c.method, c.path, c.body)
	if err != nil {
		t.Fatalf("sign request: %v", err)
	}
	r := httptest.NewRequest(c.method, base+c.path, bytes.NewReader(c.body))
	r.Header = sent.Header.Clone()
	return r
}

func newRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newEd(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pubPEM(t *testing.T, key crypto.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key.(crypto.Signer).Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
