package auth

import (
	"container/list"
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

// MaxCacheEntries bounds the identity cache; when full, the entry used least recently goes.
const MaxCacheEntries = 10000

// IdentityCache serves company and user records from the service desk, cached for a bounded
// time so the gateway does not ask on every request.
type IdentityCache struct {
	client servicedeskv1.IdentityServiceClient
	signer *principal.Signer
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element // of *cacheEntry
	order   *list.List               // most recently used first
}

type cacheEntry struct {
	key     string
	resp    *servicedeskv1.GetCallerResponse
	err     error // an unknown company is remembered too, so floods of it stay at the gateway
	expires time.Time
}

// NewIdentityCache returns a cache over client with entries valid for ttl; its lookups carry
// the gateway's own system principal, signed by signer.
func NewIdentityCache(client servicedeskv1.IdentityServiceClient, signer *principal.Signer, ttl time.Duration) *IdentityCache {
	return &IdentityCache{client: client, signer: signer, ttl: ttl, now: time.Now, entries: map[string]*list.Element{}, order: list.New()}
}

// Caller returns the company and (if email is set and exists) the user.
func (c *IdentityCache) Caller(ctx context.Context, company, email string) (*servicedeskv1.GetCallerResponse, error) {
	key := company + "\x00" + email
	now := c.now()
	if e, ok := c.cached(key, now); ok {
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
	c.store(&cacheEntry{key: key, resp: resp, err: err, expires: now.Add(c.ttl)})
	return resp, err
}

// cached returns the live entry of key, marking it used.
func (c *IdentityCache) cached(key string, now time.Time) (*cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e, true
}

// store keeps e, evicting the entries used least recently beyond MaxCacheEntries.
func (c *IdentityCache) store(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.entries[e.key] = c.order.PushFront(e)
	for c.order.Len() > MaxCacheEntries {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
}
