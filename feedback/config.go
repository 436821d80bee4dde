package feedback

import (
	"errors"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// Config configures [New].
type Config struct {
	// DB is a migrated weft database (PostgreSQL or SQLite). Required.
	DB *weft.DB
	// Calls looks up calls added to annotation queues. Without it adding items
	// answers ErrCallLookupUnavailable.
	Calls CallLookup
	// AnnotationSpecs reads the spec an annotation names, to check the
	// annotated value against its schema. Without it annotation values are
	// not checked against their spec (only the ref and payload shape are).
	AnnotationSpecs AnnotationSpecs
	// Now is the clock that stamps rows. Defaults to time.Now; times are
	// stored in UTC at microsecond precision.
	Now func() time.Time
	// StatsMaxRange bounds the window one /feedback/stats request may span;
	// a longer one is ErrInvalidQuery. Defaults to
	// trace.DefaultStatsMaxRange, the same as /calls/stats.
	StatsMaxRange time.Duration
}

func (cfg *Config) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("feedback: Config.DB is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StatsMaxRange < 0 {
		return errors.New("feedback: Config.StatsMaxRange must not be negative")
	}
	if cfg.StatsMaxRange == 0 {
		cfg.StatsMaxRange = trace.DefaultStatsMaxRange
	}
	return nil
}
