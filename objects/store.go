package objects

import (
	"time"

	"github.com/weftlabs/weft"
)

// Store is the bun-backed [Service].
type Store struct {
	db  *weft.DB
	cfg Config
}

var _ Service = (*Store)(nil)

// New returns a Store over cfg.DB.
func New(cfg Config) (*Store, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	return &Store{db: cfg.DB, cfg: cfg}, nil
}

// now is the configured clock's time in UTC.
func (s *Store) now() time.Time { return s.cfg.Now().UTC() }
