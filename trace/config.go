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
}

func (cfg *Config) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("trace: Config.DB is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}
