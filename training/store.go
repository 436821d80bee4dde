package training

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/jobs"
)

// Store is the bun-backed [Service]; with Workers it also runs jobs.
type Store struct {
	cfg   Config
	db    *weft.DB
	queue *jobs.Queue
	// ownsQueue: the queue is the Store's own (Config.Jobs was nil), which
	// Start and Stop run.
	ownsQueue bool

	hosts      *hostPolicy  // where SFT data may be downloaded from
	dataClient *http.Client // downloads it under hosts

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

var _ Service = (*Store)(nil)

// now is the configured clock's time in UTC.
func (s *Store) now() time.Time { return s.cfg.Now().UTC() }

// New returns a Store over cfg.DB. Call Start to run workers and the
// watchdog, Stop to end them.
func New(cfg Config) (*Store, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	hosts, err := parseHostPolicy(cfg.DataHosts)
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, db: cfg.DB, hosts: hosts, dataClient: hosts.client(cfg.DataTimeout)}
	if err := s.useQueue(); err != nil {
		return nil, fmt.Errorf("training: %w", err)
	}
	return s, nil
}

// Start starts this process's workers (Config.Workers) and the watchdog. They
// run until Stop or until ctx ends.
func (s *Store) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return errors.New("training: already started")
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if s.ownsQueue {
		if err := s.queue.Start(ctx); err != nil {
			cancel()
			return fmt.Errorf("training: start queue: %w", err)
		}
	}
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.watch(ctx)
	}()
	return nil
}

// Stop stops the workers, waiting until ctx ends for running jobs (which are
// then cancelled, given a few seconds to return, and retried later or
// elsewhere), and the watchdog.
func (s *Store) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return nil
	}
	var err error
	if s.ownsQueue {
		err = s.queue.Stop(ctx)
	}
	s.cancel()
	<-s.done
	s.cancel = nil
	return err
}
