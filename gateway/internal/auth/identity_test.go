package auth_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/zcustody/suite/gateway/internal/auth"
	"github.com/zcustody/suite/platform/principal"
	servicedeskv1 "github.com/zcustody/suite/proto/servicedesk/v1"
)

// newCache returns a cache over the fixture's records, signing as the gateway.
func newCache(t *testing.T, ttl time.Duration) (*auth.IdentityCache, *identityClient) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	client := &identityClient{
		verifier: principal.NewVerifier(map[string]ed25519.PublicKey{"gateway": pub}),
		companies: map[string]*servicedeskv1.Company{
			"ZED": {Id: "ZED", Name: "Ed Ltd", Active: true, PublicKeys: []string{"pem"}},
		},
		users: map[string]*servicedeskv1.User{
			"maker@zed.example": {Email: "maker@zed.example", CompanyId: "ZED", Active: true, Roles: []string{principal.RoleMaker}},
		},
	}
	return auth.NewIdentityCache(client, principal.NewSigner("gateway", priv, time.Minute), ttl), client
}

func TestIdentityCacheCaller(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		giveEmail string
		want      *servicedeskv1.GetCallerResponse
	}{
		{name: "company", want: &servicedeskv1.GetCallerResponse{
			Company: &servicedeskv1.Company{Id: "ZED", Name: "Ed Ltd", Active: true, PublicKeys: []string{"pem"}}}},
		{name: "company and user", giveEmail: "maker@zed.example", want: &servicedeskv1.GetCallerResponse{
			Company: &servicedeskv1.Company{Id: "ZED", Name: "Ed Ltd", Active: true, PublicKeys: []string{"pem"}},
			User:    &servicedeskv1.User{Email: "maker@zed.example", CompanyId: "ZED", Active: true, Roles: []string{principal.RoleMaker}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The client answers only a verifiable gateway principal, so a record here also
			// proves the lookup carries one.
			cache, _ := newCache(t, time.Minute)
			got, err := cache.Caller(t.Context(), "ZED", tt.giveEmail)
			if err != nil {
				t.Fatalf("Caller: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("Caller mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentityCacheTTL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		giveTTL   time.Duration
		giveWait  time.Duration
		giveEmail string // of the second call; the first asks for the company alone
		wantCalls int
	}{
		{name: "second call within the TTL is served from the cache", giveTTL: time.Hour, wantCalls: 1},
		{name: "second call after the TTL asks again", giveTTL: time.Minute, giveWait: time.Minute + time.Millisecond, wantCalls: 2},
		{name: "second call just within the TTL is served from the cache", giveTTL: time.Minute, giveWait: time.Minute - time.Millisecond, wantCalls: 1},
		{name: "another user is another entry", giveTTL: time.Hour, giveEmail: "maker@zed.example", wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cache, client := newCache(t, tt.giveTTL)
			now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
			auth.SetClock(cache, func() time.Time { return now })
			if _, err := cache.Caller(t.Context(), "ZED", ""); err != nil {
				t.Fatalf("first Caller: %v", err)
			}
			now = now.Add(tt.giveWait)
			if _, err := cache.Caller(t.Context(), "ZED", tt.giveEmail); err != nil {
				t.Fatalf("second Caller: %v", err)
			}
			if got := client.Calls(); got != tt.wantCalls {
				t.Errorf("identity service called %d times, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestIdentityCacheDoesNotCacheErrors(t *testing.T) {
	t.Parallel()
	cache, client := newCache(t, time.Hour)
	client.fail(status.Error(codes.Unavailable, "down"))
	if _, err := cache.Caller(t.Context(), "ZED", ""); status.Code(err) != codes.Unavailable {
		t.Fatalf("Caller while the service is down = %v, want Unavailable", err)
	}
	client.fail(nil)
	if _, err := cache.Caller(t.Context(), "ZED", ""); err != nil {
		t.Errorf("Caller after the service recovered = %v, want the record", err)
	}
	if _, err := cache.Caller(t.Context(), "ZNONE", ""); status.Code(err) != codes.NotFound {
		t.Errorf("Caller of an unknown company = %v, want NotFound", err)
	}
}

// TestIdentityCacheRemembersUnknownCompanies: a flood of requests naming a company that does
// not exist reaches the service desk once per TTL, not once per request.
func TestIdentityCacheRemembersUnknownCompanies(t *testing.T) {
	t.Parallel()
	cache, client := newCache(t, time.Hour)
	for range 5 {
		if _, err := cache.Caller(t.Context(), "ZNONE", ""); status.Code(err) != codes.NotFound {
			t.Fatalf("Caller of an unknown company = %v, want NotFound", err)
		}
	}
	if n := client.Calls(); n != 1 {
		t.Errorf("the service desk was asked %d times about an unknown company, want 1", n)
	}
}

// TestIdentityCacheEvictsLeastRecentlyUsed: a full cache drops the entry used least recently,
// not everything: a company in constant use stays cached however many others come and go.
func TestIdentityCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	cache, client := newCache(t, time.Hour)
	if _, err := cache.Caller(t.Context(), "ZED", ""); err != nil {
		t.Fatal(err)
	}
	for i := range auth.MaxCacheEntries + 10 {
		_, _ = cache.Caller(t.Context(), fmt.Sprintf("ZNONE%d", i), "") // unknown companies are cached too
		if i%1000 == 500 {
			if _, err := cache.Caller(t.Context(), "ZED", ""); err != nil { // in constant use
				t.Fatal(err)
			}
		}
	}
	before := client.Calls()
	if _, err := cache.Caller(t.Context(), "ZED", ""); err != nil {
		t.Fatal(err)
	}
	if client.Calls() != before {
		t.Error("a company in constant use was evicted from a full cache")
	}
	if _, err := cache.Caller(t.Context(), "ZNONE0", ""); status.Code(err) != codes.NotFound || client.Calls() != before+1 {
		t.Errorf("the entry used least recently was kept (%v, %d calls after %d)", err, client.Calls(), before)
	}
}
