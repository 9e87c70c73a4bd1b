package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimiters bounds the buckets kept; when full, idle buckets are dropped.
const maxLimiters = 50000

// Limiter is a token bucket per company and one per user. Each gateway replica keeps its own
// buckets: with N replicas behind a balancer a company gets up to N times the configured rate,
// so the configured rate is the cluster rate divided by the replica count (docs/security.md).
type Limiter struct {
	companyRate, userRate rate.Limit
	burst                 int
	now                   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// NewLimiter allows companyRPS requests per second per company and userRPS per user, each
// with burst; a rate of 0 turns that limit off.
func NewLimiter(companyRPS, userRPS float64, burst int) *Limiter {
	return &Limiter{companyRate: rate.Limit(companyRPS), userRate: rate.Limit(userRPS), burst: burst,
		now: time.Now, buckets: map[string]*bucket{}}
}

// Allow takes a token from the company's and the user's bucket; when either is empty it
// returns how long to wait and false, and takes nothing.
func (l *Limiter) Allow(company, user string) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var held []*rate.Reservation
	for _, k := range []struct {
		key string
		r   rate.Limit
	}{{"c:" + company, l.companyRate}, {"u:" + company + ":" + user, l.userRate}} {
		if k.r == 0 || (k.key[0] == 'u' && user == "") {
			continue
		}
		res := l.bucket(k.key, k.r, now).ReserveN(now, 1)
		if d := res.DelayFrom(now); d > 0 {
			res.CancelAt(now)
			for _, h := range held {
				h.CancelAt(now)
			}
			return d, false
		}
		held = append(held, res)
	}
	return 0, true
}

func (l *Limiter) bucket(key string, r rate.Limit, now time.Time) *rate.Limiter {
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxLimiters {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(r, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	return b.lim
}

// evict drops buckets idle for a minute (full again by then), or all if none is idle.
func (l *Limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.seen) > time.Minute {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxLimiters {
		clear(l.buckets)
	}
}
