package objects

import (
	"errors"
	"time"

	"github.com/weftlabs/weft"
)

// DefaultMaxFileBytes is the file size limit when Config.MaxFileBytes is zero:
// 32 MiB.
const DefaultMaxFileBytes = 32 << 20

// DefaultSortedTableRows is the least number of rows of a table whose sorted
// orders are kept when Config.SortedTableRows is zero: 10,000.
const DefaultSortedTableRows = 10_000

// Config configures [New].
type Config struct {
	// DB is a migrated weft database (PostgreSQL or SQLite). Required.
	DB *weft.DB
	// MaxFileBytes bounds one file. Defaults to [DefaultMaxFileBytes].
	MaxFileBytes int64
	// SortedTableRows is the least number of rows of a table whose sorted
	// orders the store keeps: the first query of such a table by a sort
	// stores the order the database sorted, so that every page of it after
	// that is read straight from its rank. Smaller tables are sorted on
	// every query. Defaults to [DefaultSortedTableRows]; negative keeps none.
	SortedTableRows int64
	// Hook, when set, is told of the publishes and deletes of the objects
	// of the classes it watches, and may refuse a publish (see
	// [ChangeHook]). None by default.
	Hook ChangeHook
	// Now is the clock that stamps rows. Defaults to time.Now; times are
	// stored in UTC.
	Now func() time.Time
}

func (cfg *Config) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("objects: Config.DB is required")
	}
	if cfg.MaxFileBytes < 0 {
		return errors.New("objects: Config.MaxFileBytes must not be negative")
	}
	if cfg.MaxFileBytes == 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.SortedTableRows == 0 {
		cfg.SortedTableRows = DefaultSortedTableRows
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}
