package webui

import (
	"context"
	"sync"
	"time"

	"github.com/weftlabs/weft"
)

// errTooManyStreams: a session asked for one live stream more than
// Config.MaxLiveStreams (HTTP 429).
var errTooManyStreams = weft.DefineError(weft.ErrRateLimited, "TooManyLiveStreams", "too many live streams")

// liveHub is what the live streams of a Handler share: the count of each
// session's open streams (Config.MaxLiveStreams), the trace lists being
// followed — one refresh loop per project and view, however many streams
// follow it — and the slots that bound how many refreshes run at once
// (Config.LiveRefreshes).
type liveHub struct {
	maxPerSession int
	refreshSlots  chan struct{}

	mu       sync.Mutex
	sessions map[string]int       // open streams by session token hash
	lists    map[string]*liveList // by liveList.key
}

func newLiveHub(maxPerSession, refreshes int) *liveHub {
	return &liveHub{maxPerSession: maxPerSession, refreshSlots: make(chan struct{}, refreshes),
		sessions: map[string]int{}, lists: map[string]*liveList{}}
}

// openStream counts one more open stream of s, or refuses it past the
// session's bound. Call release when the stream ends.
func (hub *liveHub) openStream(s session) (release func(), err error) {
	key := hashToken(s.token)
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.sessions[key] >= hub.maxPerSession {
		return nil, weft.Errorf(errTooManyStreams,
			"This sign-in already follows %d live pages, the most it may at once. Close one (in another tab) to follow this one live", hub.maxPerSession)
	}
	hub.sessions[key]++
	return sync.OnceFunc(func() {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		if hub.sessions[key]--; hub.sessions[key] <= 0 {
			delete(hub.sessions, key)
		}
	}), nil
}

// refresh runs read in a refresh slot, waiting for one, and reports how
// long read took.
func (hub *liveHub) refresh(ctx context.Context, read func() error) (took time.Duration, err error) {
	select {
	case hub.refreshSlots <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-hub.refreshSlots }()
	started := time.Now()
	err = read()
	return time.Since(started), err
}

// liveList is a list view of a project that live streams follow: one feed
// subscription and one refresh loop (run) serve every stream of it, from the
// first stream's arrival until the last one leaves.
type liveList struct {
	key       string
	projectID string
	view      listView
	// ready is closed once the list was first read; err is why it could not
	// be, and then no stream may follow it.
	ready chan struct{}
	err   error
	stop  context.CancelFunc
	// followers are the streams' channels, each holding the latest results
	// not yet sent. Guarded by liveHub.mu.
	followers map[chan string]struct{}
}

// follow adds a follower to the list of projectID's view, starting the
// list's loop, run, when it is the first. The channel receives the list's
// results as they change, the latest replacing any not yet taken; call
// unfollow when done.
func (hub *liveHub) follow(projectID string, view listView, run func(context.Context, *liveList)) (*liveList, chan string) {
	key := projectID + "?" + view.values().Encode()
	updates := make(chan string, 1)
	hub.mu.Lock()
	defer hub.mu.Unlock()
	l := hub.lists[key]
	if l == nil {
		ctx, stop := context.WithCancel(context.Background())
		l = &liveList{key: key, projectID: projectID, view: view, ready: make(chan struct{}), stop: stop, followers: map[chan string]struct{}{}}
		hub.lists[key] = l
		go run(ctx, l)
	}
	l.followers[updates] = struct{}{}
	return l, updates
}

// unfollow removes a follower; the last one stops the list's loop.
func (hub *liveHub) unfollow(l *liveList, updates chan string) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	delete(l.followers, updates)
	if len(l.followers) == 0 {
		hub.forgetLocked(l)
		l.stop()
	}
}

// forget drops a list whose first read failed, so that the next stream of
// its view starts afresh.
func (hub *liveHub) forget(l *liveList) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	hub.forgetLocked(l)
}

func (hub *liveHub) forgetLocked(l *liveList) {
	if hub.lists[l.key] == l {
		delete(hub.lists, l.key)
	}
}

// publish hands results to every follower of l.
func (hub *liveHub) publish(l *liveList, results string) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	for updates := range l.followers {
		select {
		case <-updates: // superseded
		default:
		}
		updates <- results // only publish sends, under mu: there is room
	}
}
