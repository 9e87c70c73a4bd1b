// Package auth authenticates REST requests (DESIGN.md §5): the company's request signature,
// the timestamp window, request-identifier replay, and submitter-id on the endpoints that
// carry it. It forwards the verified principal to the services as a signed token.
package auth

import (
	"context"
	"crypto"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/gateway/internal/edge"
	"github.com/zcustody/suite/gateway/internal/httperr"
	"github.com/zcustody/suite/gateway/internal/routes"
	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/platform/config"
	"github.com/zcustody/suite/platform/principal"
	"github.com/zcustody/suite/platform/signing"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

// Authenticator is the authentication middleware.
type Authenticator struct {
	Identity *IdentityCache
	Replay   interface {
		Claim(ctx context.Context, company, requestID string, expires time.Time) error
	}
	Routes *routes.Table
	Signer *principal.Signer
	// Limits throttles authenticated callers per company and per user.
	Limits *Limiter
	// PeerLimits throttles every caller per network address before any work is done for it.
	PeerLimits *Limiter
	// TrustedProxies are the addresses whose forwarded headers are believed.
	TrustedProxies []netip.Prefix
	// PublicBases are the scheme://host (lower case) clients call and sign; a request
	// signed for another is refused. Empty: any (set before serving).
	PublicBases []string
	// RefuseDemoKeys ignores the published demo company keys (production).
	RefuseDemoKeys bool

	keysMu sync.Mutex
	keys   map[string]parsedKey // PEM text → parsed key

	tokensMu sync.Mutex
	tokens   map[string]issuedToken // principal → the token forwarded for it
	Window   time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
}

type tokenKey struct{}

// Token returns the principal token the middleware attached to ctx.
func Token(ctx context.Context) string {
	t, _ := ctx.Value(tokenKey{}).(string)
	return t
}

// errUnknownOrBadSignature answers both an unknown company and a bad signature, so that a
// caller cannot learn which company identifiers exist.
const errUnknownOrBadSignature = "unknown company or signature does not verify"

// failure is an authentication refusal: always 401, with a message that says what to fix
// without revealing which companies or users exist, and ER-401 unless code says otherwise.
type failure struct{ msg, code string }

func (f failure) Error() string { return f.msg }

// Middleware authenticates every request before next sees it.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wait, ok := a.PeerLimits.Allow(a.peer(r), ""); !ok {
			tooMany(w, wait)
			return
		}
		p, err := a.authenticate(r)
		var f failure
		switch {
		case errors.As(err, &f):
			a.Logger.InfoContext(r.Context(), "request refused", "reason", f.msg, "path", r.URL.Path)
			code := apperr.CodeUnauthorized
			if f.code != "" {
				code = f.code
			}
			httperr.Write(w, http.StatusUnauthorized, code, f.msg)
			return
		case err != nil:
			st, d := httperr.Detailed(err)
			if st < 500 || status.Code(err) == codes.Unknown { // e.g. the replay store's database is unreachable
				st, d = http.StatusServiceUnavailable, httperr.Detail{Code: apperr.CodeUnavailable, Message: "authentication is unavailable, retry later"}
			}
			a.Logger.WarnContext(r.Context(), "authentication unavailable", "error", err.Error())
			httperr.Write(w, st, d.Code, d.Message)
			return
		}
		if wait, ok := a.Limits.Allow(p.CompanyID, p.UserEmail); !ok {
			tooMany(w, wait)
			return
		}
		token, err := a.token(p)
		if err != nil {
			httperr.Write(w, http.StatusInternalServerError, apperr.CodeInternal, "internal error")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenKey{}, token)))
	})
}

func (a *Authenticator) authenticate(r *http.Request) (principal.Principal, error) {
	h, err := readHeaders(r)
	if err != nil {
		return principal.Principal{}, err
	}
	if err := a.checkClock(h.timestampMs); err != nil {
		return principal.Principal{}, err
	}
	full := a.fullURL(r)
	if !a.publicURL(full) {
		return principal.Principal{}, failure{msg: "the request is not addressed to this gateway's public URL; sign the URL it publishes"}
	}
	// The company's keys first; the user only once the signature holds, so that an unsigned
	// request cannot make the gateway look up (and cache) arbitrary users.
	caller, err := a.lookup(r.Context(), h.company, "")
	if err != nil {
		return principal.Principal{}, err
	}
	msg := signing.StringToSign(h.company, h.requestID, h.timestamp, full, edge.Body(r.Context()))
	if !a.verifiesWithAny(caller.GetCompany().GetPublicKeys(), msg, h.signature) {
		return principal.Principal{}, failure{msg: errUnknownOrBadSignature}
	}
	if h.submitter != "" {
		if caller, err = a.lookup(r.Context(), h.company, h.submitter); err != nil {
			return principal.Principal{}, err
		}
	}
	if err := a.Replay.Claim(r.Context(), h.company, h.requestID, a.now().Add(2*a.Window)); err != nil {
		if errors.Is(err, ErrReplay) {
			return principal.Principal{}, failure{msg: "request-identifier was already used"}
		}
		return principal.Principal{}, err
	}
	return a.principalFor(r, caller, h.submitter)
}

func (a *Authenticator) principalFor(r *http.Request, caller *servicedeskv1.GetCallerResponse, submitter string) (principal.Principal, error) {
	c := caller.GetCompany()
	p := principal.Principal{Kind: principal.KindCompany, CompanyID: c.GetId(), CompanyName: c.GetName(), VenueIDs: c.GetVenueIds()}
	route, known := a.Routes.Match(r.Method, r.URL.Path)
	if submitter == "" {
		if known && route.SubmitterRequired {
			return p, failure{msg: "missing header: submitter-id"}
		}
		return p, nil
	}
	u := caller.GetUser()
	if u == nil || !u.GetActive() || u.GetCompanyId() != c.GetId() {
		return p, failure{msg: "submitter-id is not an active user of the signing company"}
	}
	p.Kind = principal.KindUser
	p.UserEmail = u.GetEmail()
	p.Roles = u.GetRoles()
	p.Entitlements = u.GetEntitlements()
	return p, nil
}

func (a *Authenticator) lookup(ctx context.Context, company, submitter string) (*servicedeskv1.GetCallerResponse, error) {
	caller, err := a.Identity.Caller(ctx, company, submitter)
	if status.Code(err) == codes.NotFound {
		return nil, failure{msg: errUnknownOrBadSignature}
	}
	if err != nil {
		return nil, err
	}
	if !caller.GetCompany().GetActive() {
		return nil, failure{msg: errUnknownOrBadSignature}
	}
	return caller, nil
}

func (a *Authenticator) checkClock(ts int64) error {
	skew := a.now().Sub(time.UnixMilli(ts))
	if skew > a.Window || skew < -a.Window {
		return failure{msg: "request-timestamp is outside the allowed window of " + a.Window.String() + "; check the client clock", code: apperr.CodeClockSkew}
	}
	return nil
}

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

type signedHeaders struct {
	company, submitter, requestID, timestamp, signature string
	timestampMs                                         int64
}

func readHeaders(r *http.Request) (signedHeaders, error) {
	h := signedHeaders{
		company:   r.Header.Get(signing.HeaderCompany),
		submitter: r.Header.Get(signing.HeaderSubmitter),
		requestID: r.Header.Get(signing.HeaderRequestID),
		timestamp: r.Header.Get(signing.HeaderTimestamp),
		signature: r.Header.Get(signing.HeaderSignature),
	}
	if h.signature == "" {
		h.signature = r.Header.Get(signing.HeaderXSignature)
	}
	for _, req := range []struct{ name, value string }{
		{signing.HeaderCompany, h.company}, {signing.HeaderRequestID, h.requestID},
		{signing.HeaderTimestamp, h.timestamp}, {signing.HeaderSignature, h.signature},
	} {
		if req.value == "" {
			return h, failure{msg: "missing header: " + req.name}
		}
	}
	if _, err := uuid.Parse(h.requestID); err != nil || len(h.requestID) != 36 {
		return h, failure{msg: "request-identifier must be a UUID"}
	}
	ms, err := strconv.ParseInt(h.timestamp, 10, 64)
	if err != nil {
		return h, failure{msg: "request-timestamp must be epoch milliseconds"}
	}
	h.timestampMs = ms
	return h, nil
}

func (a *Authenticator) verifiesWithAny(keys []string, msg []byte, sig string) bool {
	for _, k := range keys {
		pub, err := a.parsed(k)
		if err != nil || (a.RefuseDemoKeys && config.IsDemoKey(pub)) {
			continue
		}
		if signing.Verify(pub, msg, sig) == nil {
			return true
		}
	}
	return false
}

// publicURL reports whether the URL the client signed starts with one of the gateway's
// public base URLs (any, when none is set).
func (a *Authenticator) publicURL(full string) bool {
	if len(a.PublicBases) == 0 {
		return true
	}
	scheme, rest, _ := strings.Cut(full, "://")
	host, _, _ := strings.Cut(rest, "/")
	return slices.Contains(a.PublicBases, strings.ToLower(scheme+"://"+host))
}

// fullURL rebuilds the URL the client signed: scheme, host and the request URI as sent.
// Behind a proxy the client signed the proxy's URL: X-Forwarded-Proto and X-Forwarded-Host
// are honoured, but only from the configured proxy addresses.
func (a *Authenticator) fullURL(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if a.trustedPeer(r.RemoteAddr) {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	return scheme + "://" + host + r.URL.RequestURI()
}

// tooMany answers 429 with the whole seconds to wait, at least 1: "0" would invite an
// immediate retry that the limiter refuses again.
func tooMany(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	httperr.Write(w, http.StatusTooManyRequests, apperr.CodeRateLimited, "rate limit exceeded; retry after the time in Retry-After")
}

// peer is the client's network address: the TCP peer, or behind a trusted proxy the first
// address of X-Forwarded-For.
func (a *Authenticator) peer(r *http.Request) string {
	if a.trustedPeer(r.RemoteAddr) {
		if f := firstValue(r.Header.Get("X-Forwarded-For")); f != "" {
			return f
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().String()
	}
	return r.RemoteAddr
}

func (a *Authenticator) trustedPeer(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	for _, p := range a.TrustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// firstValue is the first entry of a comma-separated forwarded header (the client-facing hop).
func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// maxParsedKeys bounds the parsed-key memo; it is emptied when full.
const maxParsedKeys = 10000

// parsed returns the public key of a PEM text, parsing each distinct text once.
func (a *Authenticator) parsed(pemText string) (crypto.PublicKey, error) {
	a.keysMu.Lock()
	defer a.keysMu.Unlock()
	if k, ok := a.keys[pemText]; ok {
		return k.pub, k.err
	}
	pub, err := signing.ParsePublicKey(pemText)
	if a.keys == nil || len(a.keys) >= maxParsedKeys {
		a.keys = map[string]parsedKey{}
	}
	a.keys[pemText] = parsedKey{pub: pub, err: err}
	return pub, err
}

type parsedKey struct {
	pub crypto.PublicKey
	err error
}

// tokenReuse is how long a forwarded token is reused for the same principal: half its life,
// so a service always receives one with at least half its validity left.
const tokenReuse = 30 * time.Second

// maxTokens bounds the forwarded-token memo; it is emptied when full.
const maxTokens = 10000

type issuedToken struct {
	token string
	at    time.Time
}

// token returns the principal token forwarded to the services, signing a new one at most
// every tokenReuse per principal.
func (a *Authenticator) token(p principal.Principal) (string, error) {
	key := strings.Join([]string{p.Kind, p.CompanyID, p.CompanyName, p.UserEmail, strings.Join(p.Roles, ","), strings.Join(p.Entitlements, ","),
		strings.Join(p.VenueIDs, ",")}, "\x00")
	now := a.now()
	a.tokensMu.Lock()
	defer a.tokensMu.Unlock()
	if t, ok := a.tokens[key]; ok && now.Sub(t.at) < tokenReuse {
		return t.token, nil
	}
	tok, err := a.Signer.Sign(p)
	if err != nil {
		return "", err
	}
	if a.tokens == nil || len(a.tokens) >= maxTokens {
		a.tokens = map[string]issuedToken{}
	}
	a.tokens[key] = issuedToken{token: tok, at: now}
	return tok, nil
}
