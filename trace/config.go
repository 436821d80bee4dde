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
