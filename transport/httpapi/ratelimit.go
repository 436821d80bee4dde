package httpapi

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/weftlabs/weft"
)

// RateLimit bounds the requests one API key may make: a token bucket that
// refills at PerSecond tokens a second and holds at most Burst.
type RateLimit struct {
	// PerSecond is the sustained rate. Zero disables rate limiting.
	PerSecond float64
	// Burst is how many requests may arrive at once. Defaults to PerSecond
	// rounded up (at least 1).
	Burst int
}

// limitKey names the API key of a request in the server's per-key limits:
// the key's id, so that every spelling of the key (Basic, Bearer, a web UI
// session of it) counts as one, else the key itself (an embedder's
// Authenticator may leave KeyID empty).
func limitKey(p weft.Principal, key string) string {
	if p.KeyID != "" {
		return "id:" + p.KeyID
	}
	return "key:" + key
}

// keyLimiter holds one bucket per API key. Full buckets are dropped, so memory
// follows the number of active keys.
type keyLimiter struct {
	limit RateLimit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

func newKeyLimiter(limit RateLimit, now func() time.Time) *keyLimiter {
	if limit.Burst <= 0 {
		limit.Burst = max(1, int(math.Ceil(limit.PerSecond)))
	}
	return &keyLimiter{limit: limit, now: now, buckets: map[string]*rate.Limiter{}}
}

// allow takes a token for key. When none is left it returns false and how long
// until one will be.
func (l *keyLimiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(rate.Limit(l.limit.PerSecond), l.limit.Burst)
		l.buckets[key] = b
	}
	if b.AllowN(now, 1) {
		return true, 0
	}
	return false, time.Duration((1 - b.TokensAt(now)) / l.limit.PerSecond * float64(time.Second))
}

// sweep drops full buckets once a minute: a new bucket starts full anyway.
func (l *keyLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for key, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.limit.Burst) {
			delete(l.buckets, key)
		}
	}
}
