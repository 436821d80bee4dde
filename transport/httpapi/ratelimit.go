package httpapi

import (
	"math"
	"sync"
	"time"
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

// keyLimiter holds one bucket per API key. Buckets idle long enough to have
// refilled are dropped, so memory follows the number of active keys.
type keyLimiter struct {
	limit RateLimit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newKeyLimiter(limit RateLimit, now func() time.Time) *keyLimiter {
	if limit.Burst <= 0 {
		limit.Burst = max(1, int(math.Ceil(limit.PerSecond)))
	}
	return &keyLimiter{limit: limit, now: now, buckets: map[string]*bucket{}}
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
		b = &bucket{tokens: float64(l.limit.Burst), last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(float64(l.limit.Burst), b.tokens+now.Sub(b.last).Seconds()*l.limit.PerSecond)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.limit.PerSecond * float64(time.Second))
	return false, wait
}

// sweep drops full buckets once a minute.
func (l *keyLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	refill := time.Duration(float64(l.limit.Burst) / l.limit.PerSecond * float64(time.Second))
	for key, b := range l.buckets {
		if now.Sub(b.last) > refill {
			delete(l.buckets, key)
		}
	}
}
