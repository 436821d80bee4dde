package trace

import (
	"errors"
	"time"

	"github.com/weftlabs/weft"
)

// Config configures [New].
type Config struct {
	// DB is a migrated weft database (PostgreSQL or SQLite). Required.
	DB *weft.DB
	// Now is the clock that stamps deletions and prices. Defaults to
	// time.Now; times are stored in UTC.
	Now func() time.Time
	// Feed, when set, is told of every call this store writes, after the
	// write commits (live views subscribe to it). None by default.
	Feed *Feed
	// Hook, when set, is told of the calls each write starts or ends, inside
	// the write's transaction (see [WriteHook]). None by default.
	Hook WriteHook
	// StatsMaxRange bounds the window one /calls/stats request may span
	// (its buckets are capped apart, at 10,000); a longer one is
	// ErrInvalidQuery. Defaults to DefaultStatsMaxRange.
	StatsMaxRange time.Duration
}

// DefaultStatsMaxRange is the default of Config.StatsMaxRange, and of
// feedback.Config.StatsMaxRange: a year and a day, so that "the last year"
// fits whatever the time zone.
const DefaultStatsMaxRange = 366 * 24 * time.Hour

func (cfg *Config) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("trace: Config.DB is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StatsMaxRange < 0 {
		return errors.New("trace: Config.StatsMaxRange must not be negative")
	}
	if cfg.StatsMaxRange == 0 {
		cfg.StatsMaxRange = DefaultStatsMaxRange
	}
	return nil
}
