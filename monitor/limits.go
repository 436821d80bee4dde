package monitor

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiters hold, per monitor, the judge requests in flight in this process
// and the rate they start at: judging takes at most its share of the models
// that also serve people.
type limiters struct {
	concurrency int
	perSecond   float64

	mu sync.Mutex
	m  map[string]*limiter
}

type limiter struct {
	running int
	rate    *rate.Limiter
}

func (l *limiters) init(concurrency int, perSecond float64) {
	l.concurrency, l.perSecond, l.m = concurrency, perSecond, map[string]*limiter{}
}

// acquire takes a slot of monitor key; when none is free, or the rate
// allows no start yet, it returns how long to wait before trying again.
// A successful acquire is undone by release.
func (l *limiters) acquire(key string, now time.Time) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.m[key]
	if lim == nil {
		lim = &limiter{rate: rate.NewLimiter(rate.Limit(l.perSecond), l.concurrency)}
		l.m[key] = lim
	}
	if lim.running >= l.concurrency {
		return time.Second / time.Duration(max(1, int(l.perSecond))), false
	}
	r := lim.rate.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	lim.running++
	return 0, true
}

func (l *limiters) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lim := l.m[key]; lim != nil && lim.running > 0 {
		lim.running--
	}
}
