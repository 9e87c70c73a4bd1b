// Package chaintest serves a service as its binary does — its Register on app.Deps, behind
// the real interceptor chain (principal verification, the authorization policy, validation)
// — over bufconn, and checks through that chain who may call each registered method: without
// credentials a call is 401, a caller the method's rule does not admit is 403 ER-403 from the
// policy, and an admitted caller gets past authorization. The methods come from the server
// itself, so a new method is checked as soon as it is registered. For tests only.
package chaintest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/testdb"
	"github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/internal/authz"
)

// Companies of the callers: a client, and the operator of venue BYBIT.
const (
	ClientCompany   = "ZTEST"
	OperatorCompany = "ZBYBIT"
	OperatedVenue   = "BYBIT"
)

// Systems the chain trusts (each signs its own token); Intruder is a trusted system that no
// policy names.
const Intruder = "intruder"

var systems = []string{"servicedesk", "trading", "interchange", "custody", "compliance", "settlement-engine", "gateway", Intruder}

// UnlistedMethod is served next to the service's methods and listed in no policy: every
// caller is refused it.
const UnlistedMethod = "/chaintest.v1.Unlisted/Call"

// Caller is one representative caller.
type Caller struct {
	Name string
	principal.Principal
}

// Company is a company-level caller of id, operating venues.
func Company(id string, venues ...string) principal.Principal {
	return principal.Principal{Kind: principal.KindCompany, CompanyID: id, VenueIDs: venues}
}

// User is an API user of company holding roles; a user of OperatorCompany carries its venue.
func User(company string, roles ...string) principal.Principal {
	p := principal.Principal{Kind: principal.KindUser, CompanyID: company, UserEmail: "user@" + strings.ToLower(company) + ".example", Roles: roles}
	if company == OperatorCompany {
		p.VenueIDs = []string{OperatedVenue}
	}
	return p
}

// System is the internal system name, signing for itself.
func System(name string) principal.Principal {
	return principal.Principal{Kind: principal.KindSystem, System: name}
}

// Callers are the representative callers every method is tried with: company-level callers
// and users of every role of a client and of a venue's operator, and every internal system
// (interchange also acting for the operator, as it reads trading wallets for it).
func Callers() []Caller {
	out := []Caller{
		{"client company", Company(ClientCompany)},
		{"client viewer", User(ClientCompany, principal.RoleViewer)},
		{"client maker", User(ClientCompany, principal.RoleMaker)},
		{"client checker", User(ClientCompany, principal.RoleChecker)},
		{"client user without a role", User(ClientCompany)},
		{"operator company", Company(OperatorCompany, OperatedVenue)},
		{"operator viewer", User(OperatorCompany, principal.RoleViewer)},
		{"operator maker", User(OperatorCompany, principal.RoleMaker)},
		{"operator checker", User(OperatorCompany, principal.RoleChecker)},
	}
	for _, s := range systems {
		out = append(out, Caller{"system " + s, System(s)})
	}
	forOperator := System("interchange")
	forOperator.CompanyID, forOperator.VenueIDs = OperatorCompany, []string{OperatedVenue}
	return append(out, Caller{"interchange acting for the operator", forOperator})
}

// Chain is a service served through the real interceptor chain.
type Chain struct {
	policy  authz.Policy
	conn    *grpc.ClientConn
	signers map[string]*principal.Signer
	// untrusted signs as the gateway with a key the chain does not trust.
	untrusted *principal.Signer
	methods   map[string]protoreflect.MethodDescriptor
}

// Start builds app.Deps with policy on a fresh test database (testdb), lets register (a
// service's Register) put the service on it with cfg, and serves it over bufconn until the
// test ends.
func Start[C any](t *testing.T, policy authz.Policy, register func(context.Context, *app.Deps, C) error, cfg C) *Chain {
	t.Helper()
	db := testdb.New(t)
	c := &Chain{policy: policy, signers: map[string]*principal.Signer{}, methods: map[string]protoreflect.MethodDescriptor{}}
	keys := map[string]ed25519.PublicKey{}
	for _, issuer := range systems {
		pub, priv := newKey(t)
		keys[issuer] = pub
		c.signers[issuer] = principal.NewSigner(issuer, priv, time.Minute)
	}
	_, other := newKey(t)
	c.untrusted = principal.NewSigner(principal.GatewayIssuer, other, time.Minute)

	deps := app.NewDeps(slog.New(slog.DiscardHandler), db, principal.NewVerifier(keys), policy)
	t.Cleanup(deps.Close)
	deps.Server.GRPC.RegisterService(&unlisted, nil)
	if err := register(context.Background(), deps, cfg); err != nil {
		t.Fatalf("register: %v", err)
	}
	for name, info := range deps.Server.GRPC.GetServiceInfo() {
		if name == "grpc.health.v1.Health" || "/"+name+"/Call" == UnlistedMethod {
			continue
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			t.Fatalf("service %s: %v", name, err)
		}
		for _, m := range info.Methods {
			c.methods["/"+name+"/"+m.Name] = d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(m.Name))
		}
	}

	lis := bufconn.Listen(1 << 20)
	go func() { _ = deps.Server.GRPC.Serve(lis) }()
	t.Cleanup(deps.Server.GRPC.Stop)
	conn, err := grpc.NewClient("passthrough:///chain", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c.conn = conn
	return c
}

// Methods returns the full names of the service's registered methods, sorted.
func (c *Chain) Methods() []string {
	out := make([]string, 0, len(c.methods))
	for m := range c.methods {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Token returns p's token as its issuer signs it: the gateway for companies and users, the
// system itself for a system.
func (c *Chain) Token(t *testing.T, p principal.Principal) string {
	t.Helper()
	issuer := principal.GatewayIssuer
	if p.Kind == principal.KindSystem {
		issuer = p.System
	}
	return c.TokenOf(t, issuer, p)
}

// TokenOf returns p's token signed by issuer, one the chain trusts (the gateway or a system),
// whether or not issuer may vouch for p.
func (c *Chain) TokenOf(t *testing.T, issuer string, p principal.Principal) string {
	t.Helper()
	return c.sign(t, c.signers[issuer], p)
}

func (c *Chain) sign(t *testing.T, s *principal.Signer, p principal.Principal) string {
	t.Helper()
	if s == nil {
		t.Fatalf("no signer for %+v", p)
	}
	token, err := s.Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// Invoke calls method with an empty request, sending token ("" sends no credentials).
func (c *Chain) Invoke(t *testing.T, method, token string) error {
	t.Helper()
	in, out := proto.Message(&emptypb.Empty{}), proto.Message(&emptypb.Empty{})
	if md, ok := c.methods[method]; ok {
		in, out = newMessage(t, md.Input()), newMessage(t, md.Output())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, token)
	}
	return c.conn.Invoke(ctx, method, in, out)
}

// Call calls method as p, with an empty request.
func (c *Chain) Call(t *testing.T, method string, p principal.Principal) error {
	t.Helper()
	return c.Invoke(t, method, c.Token(t, p))
}

// Admitted fails the test unless p's call of method gets past authentication and
// authorization and the handler refuses no role either: any answer but 401 and 403 (an empty
// request is usually 400).
func (c *Chain) Admitted(t *testing.T, method, who string, p principal.Principal) {
	t.Helper()
	err := c.Call(t, method, p)
	if code := status.Code(err); code == codes.Unauthenticated || code == codes.PermissionDenied || code == codes.Unimplemented {
		t.Errorf("%s as %s = %v, want past authorization", short(method), who, err)
	}
}

// Unscoped is a representative caller (Callers, by name) that the rule of Method admits but
// that lacks the identity the handler needs to scope the call — an internal system acting for
// no company where the data is a company's (principal.Company) — so the handler answers 403
// for want of that identity, not of a role.
type Unscoped struct{ Method, Caller string }

// unscoped fails the test unless p's call of method passed the policy and the handler
// refused it for want of the identity it scopes the call by.
func (c *Chain) unscoped(t *testing.T, method, who string, p principal.Principal) {
	t.Helper()
	st := status.Convert(c.Call(t, method, p))
	if st.Code() != codes.PermissionDenied || strings.HasPrefix(st.Message(), policyMessage(method)) {
		t.Errorf("%s as %s = %v, want the handler's 403 for want of a company (listed Unscoped)", short(method), who, st.Err())
	}
}

// Refused fails the test unless p's call of method is refused by the policy: 403 ER-403
// with the policy's message, before the handler ran.
func (c *Chain) Refused(t *testing.T, method, who string, p principal.Principal) {
	t.Helper()
	checkForbidden(t, method, who, c.Call(t, method, p))
}

// Unauthenticated fails the test unless the call of method with token is 401.
func (c *Chain) Unauthenticated(t *testing.T, method, who, token string) {
	t.Helper()
	if err := c.Invoke(t, method, token); status.Code(err) != codes.Unauthenticated {
		t.Errorf("%s with %s = %v, want Unauthenticated", short(method), who, err)
	}
}

// CheckPolicy checks the policy through the chain: every registered method has a rule and
// every rule a registered method; for every method, calls without credentials or with
// credentials the verifier does not accept are 401, each representative caller the rule
// does not admit is 403 from the policy and each it admits gets past authorization, but for
// the unscoped (every rule both admits and refuses some of them); the unlisted method is
// refused to all.
func (c *Chain) CheckPolicy(t *testing.T, unscoped ...Unscoped) {
	t.Helper()
	for method := range c.policy {
		if _, ok := c.methods[method]; !ok {
			t.Errorf("the policy names %s, which the service does not serve", method)
		}
	}
	callers := Callers()
	for _, u := range unscoped {
		i := slices.IndexFunc(callers, func(c Caller) bool { return c.Name == u.Caller })
		if i < 0 || !c.policy[u.Method].Allows(callers[i].Principal) {
			t.Errorf("Unscoped %+v: not a representative caller the method's rule admits", u)
		}
	}
	for _, method := range append(c.Methods(), UnlistedMethod) {
		t.Run(short(method), func(t *testing.T) {
			t.Parallel()
			rule, listed := c.policy[method]
			if !listed && method != UnlistedMethod {
				t.Errorf("%s is served but has no rule in the policy: every caller is refused it", method)
			}
			for who, token := range c.forged(t) {
				c.Unauthenticated(t, method, who, token)
			}
			var admitted, refused int
			for _, caller := range callers {
				switch {
				case !listed || !rule.Allows(caller.Principal):
					refused++
					c.Refused(t, method, caller.Name, caller.Principal)
				case slices.Contains(unscoped, Unscoped{method, caller.Name}):
					admitted++
					c.unscoped(t, method, caller.Name, caller.Principal)
				default:
					admitted++
					c.Admitted(t, method, caller.Name, caller.Principal)
				}
			}
			if listed && (admitted == 0 || refused == 0) {
				t.Errorf("%s: the rule admits %d and refuses %d of the representative callers; want some of each", short(method), admitted, refused)
			}
		})
	}
}

// forged are credentials the verifier refuses, by name: none, garbage, a company whose
// token the gateway did not sign, a system's token signed by another issuer, a token of an
// untrusted key.
func (c *Chain) forged(t *testing.T) map[string]string {
	t.Helper()
	client := Company(ClientCompany)
	return map[string]string{
		"no credentials":                    "",
		"a garbage token":                   "garbage",
		"a company vouched for by a system": c.sign(t, c.signers["interchange"], client),
		"the settlement engine's name, signed by interchange": c.sign(t, c.signers["interchange"], System("settlement-engine")),
		"interchange's name, signed by the gateway":           c.sign(t, c.signers[principal.GatewayIssuer], System("interchange")),
		"a gateway token of an untrusted key":                 c.sign(t, c.untrusted, client),
	}
}

// checkForbidden fails the test unless err is the policy's refusal of method: 403 with
// ErrorInfo ER-403 of the suite's domain and the policy's message.
func checkForbidden(t *testing.T, method, who string, err error) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.PermissionDenied {
		t.Errorf("%s as %s = %v, want PermissionDenied", short(method), who, err)
		return
	}
	if want := policyMessage(method); !strings.HasPrefix(st.Message(), want) {
		t.Errorf("%s as %s: refused with %q, want the policy's %q", short(method), who, st.Message(), want)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() == apperr.CodeForbidden && info.GetDomain() == apperr.Domain {
			return
		}
	}
	t.Errorf("%s as %s: refused without ErrorInfo %s: %v", short(method), who, apperr.CodeForbidden, st.Details())
}

// policyMessage is how the policy's refusal of method begins (authz; a company refused for
// operating no venue is told so after it).
func policyMessage(method string) string {
	return "the caller may not use " + method[strings.LastIndex(method, "/")+1:]
}

func newMessage(t *testing.T, d protoreflect.MessageDescriptor) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName())
	if err != nil {
		t.Fatalf("message %s: %v", d.FullName(), err)
	}
	return mt.New().Interface()
}

// short is a method's service and name without the package ("CustodyService/ListLegacyWallets").
func short(method string) string {
	svc, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	return svc[strings.LastIndex(svc, ".")+1:] + "/" + name
}

// Nowhere is a peer address no one listens at: a dial fails at once.
func Nowhere(t *testing.T) string {
	return "unix://" + filepath.Join(t.TempDir(), "nobody.sock")
}

// KeyFile writes a fresh Ed25519 private key (PKCS#8 PEM), for the key files a Config names.
func KeyFile(t *testing.T) string {
	t.Helper()
	_, priv := newKey(t)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// unlisted is a service no policy lists; its one method answers OK if ever reached.
var unlisted = grpc.ServiceDesc{
	ServiceName: "chaintest.v1.Unlisted",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Call", Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := &emptypb.Empty{}
		if err := dec(in); err != nil {
			return nil, err
		}
		reached := func(context.Context, any) (any, error) { return nil, errors.New("the unlisted method was reached") }
		if interceptor == nil {
			return reached(ctx, in)
		}
		return interceptor(ctx, in, &grpc.UnaryServerInfo{FullMethod: UnlistedMethod}, reached)
	}}},
}

// Conn is the client connection to the service through the chain, for tests that make real
// calls (with AsCaller's context).
func (c *Chain) Conn() *grpc.ClientConn { return c.conn }

// AsCaller returns a context that calls as p (its token in the outgoing metadata).
func (c *Chain) AsCaller(t *testing.T, ctx context.Context, p principal.Principal) context.Context {
	t.Helper()
	return metadata.AppendToOutgoingContext(ctx, principal.MetadataKey, c.Token(t, p))
}
