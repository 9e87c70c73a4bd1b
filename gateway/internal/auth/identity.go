package auth

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
	"github.com/zcustody/suite/services/principal"
)

// maxCacheEntries bounds the identity cache; it is emptied when full.
const maxCacheEntries = 10000

// IdentityCache serves company and user records from the service desk, cached for a bounded
// time so the gateway does not ask on every request.
type IdentityCache struct {
	client servicedeskv1.IdentityServiceClient
	signer *principal.Signer
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	resp    *servicedeskv1.GetCallerResponse
	err     error // an unknown company is remembered too, so floods of it stay at the gateway
	expires time.Time
}

// NewIdentityCache returns a cache over client with entries valid for ttl; its lookups carry
// the gateway's own system principal, signed by signer.
func NewIdentityCache(client servicedeskv1.IdentityServiceClient, signer *principal.Signer, ttl time.Duration) *IdentityCache {
	return &IdentityCache{client: client, signer: signer, ttl: ttl, now: time.Now, entries: map[string]cacheEntry{}}
}

// Caller returns the company and (if email is set and exists) the user.
func (c *IdentityCache) Caller(ctx context.Context, company, email string) (*servicedeskv1.GetCallerResponse, error) {
	key := company + "\x00" + email
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.resp, e.err
	}
	ctx, err := c.signer.OutgoingContext(ctx, principal.Principal{Kind: principal.KindSystem, System: "gateway"})
	if err != nil {
		return nil, err
	}
	resp, err := c.client.GetCaller(ctx, &servicedeskv1.GetCallerRequest{CompanyId: company, UserEmail: email})
	if err != nil && status.Code(err) != codes.NotFound {
		return nil, err // not cached: the service desk may be back at the next request
	}
	c.mu.Lock()
	if len(c.entries) >= maxCacheEntries {
		clear(c.entries)
	}
	c.entries[key] = cacheEntry{resp: resp, err: err, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return resp, err
}
