package trace

import (
	"context"
	"sync"
)

// MaxFeedPending is how many written call ids a subscription of a [Feed]
// holds before it reports an overflow instead.
const MaxFeedPending = 1000

// Feed tells subscribers, in this process, which calls of a project were
// written (started, ended, renamed or deleted) once the write has committed:
// what a live view needs to know to re-read those calls. A Store given a Feed
// (Config.Feed) publishes to it; give every Store of the process the same
// Feed. Writes made by other processes on the same database are seen once
// the Feed listens for them ([Feed.ListenPostgres]). Publishing never blocks: a subscriber that falls
// behind has its ids merged, and past MaxFeedPending it is told that it
// missed some (Subscription.Take's overflow) rather than slowing the writer.
// The zero value is not usable; use [NewFeed]. A Feed is safe for concurrent
// use.
type Feed struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
	// origin names this feed in the notifications it sends on channel,
	// once it listens (ListenPostgres); "" before.
	origin, channel string
}

// NewFeed returns an empty feed.
func NewFeed() *Feed {
	return &Feed{subs: map[string]map[*Subscription]struct{}{}}
}

// Subscription receives the ids of one project's written calls.
type Subscription struct {
	feed      *Feed
	projectID string
	ready     chan struct{}

	mu       sync.Mutex
	pending  map[string]struct{}
	order    []string
	overflow bool
}

// Subscribe starts receiving the ids of projectID's calls written from now
// on. Close the subscription when done.
func (f *Feed) Subscribe(projectID string) *Subscription {
	s := &Subscription{feed: f, projectID: projectID, ready: make(chan struct{}, 1), pending: map[string]struct{}{}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs[projectID] == nil {
		f.subs[projectID] = map[*Subscription]struct{}{}
	}
	f.subs[projectID][s] = struct{}{}
	return s
}

// Ready receives a value when ids are waiting to be taken.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Take returns the ids written since the last Take, in first-written order
// without repeats; overflow reports that more were written than the
// subscription holds (ids then holds none: the reader should re-read its
// whole view).
func (s *Subscription) Take() (ids []string, overflow bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids, overflow = s.order, s.overflow
	if overflow {
		ids = nil
	}
	s.order, s.overflow = nil, false
	clear(s.pending)
	return ids, overflow
}

// Close stops the subscription.
func (s *Subscription) Close() {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	delete(s.feed.subs[s.projectID], s)
	if len(s.feed.subs[s.projectID]) == 0 {
		delete(s.feed.subs, s.projectID)
	}
}

// publish tells projectID's subscribers that ids were written.
func (f *Feed) publish(projectID string, ids []string) {
	if f == nil || len(ids) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs[projectID] {
		s.add(ids)
	}
}

// overflow tells projectID's subscribers that calls were written that no one
// named: they re-read their whole view.
func (f *Feed) overflow(projectID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs[projectID] {
		s.missed()
	}
}

// overflowAll is overflow for every project.
func (f *Feed) overflowAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, subs := range f.subs {
		for s := range subs {
			s.missed()
		}
	}
}

func (s *Subscription) missed() {
	s.mu.Lock()
	s.overflow = true
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *Subscription) add(ids []string) {
	s.mu.Lock()
	for _, id := range ids {
		if s.overflow {
			break
		}
		if _, ok := s.pending[id]; ok {
			continue
		}
		if len(s.order) == MaxFeedPending {
			s.overflow = true
			break
		}
		s.pending[id] = struct{}{}
		s.order = append(s.order, id)
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// published tells the store's feed, and through it the processes that
// listen (ListenPostgres), about calls whose write has committed.
func (s *Store) published(ctx context.Context, byProject map[string][]string) {
	if s.feed == nil {
		return
	}
	for projectID, ids := range byProject {
		if len(ids) == 0 {
			delete(byProject, projectID)
			continue
		}
		s.feed.publish(projectID, ids)
	}
	_ = s.feed.notify(ctx, s.db, byProject) // a lost notice costs other processes a live update, not the write
}

// writtenCalls groups the calls of a write set by project.
func writtenCalls(w *writeSet) map[string][]string {
	byProject := map[string][]string{}
	for _, p := range w.order {
		byProject[p.row.ProjectID] = append(byProject[p.row.ProjectID], p.row.ID)
	}
	return byProject
}
