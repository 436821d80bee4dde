package webui

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/weftlabs/weft/trace"
)

// Timing of a live list stream.
const (
	// liveSettle is how long a list waits after a write for more writes
	// before it re-reads the page, so that a burst costs one read.
	liveSettle = 250 * time.Millisecond
	// liveCostFactor spaces a list's refreshes by their cost: the next one
	// starts no sooner than this many times as long as the last one took
	// after it ended, so that an expensive view (a big project sorted by
	// cost) keeps the database busy at most a fifth of the time however
	// often its project is written.
	liveCostFactor = 4
	// liveHeartbeat is how often an idle stream sends a comment, so that
	// proxies keep the connection open and a closed one is noticed.
	liveHeartbeat = 20 * time.Second
)

// traceListLive streams a trace list view as server-sent events: whenever a
// call that is on the page, or that the view's filters keep, is written, the
// page is read again and sent as one "results" event (the inner HTML of the
// list's results, which htmx's sse extension swaps in). Every stream of the
// same project and view shares one reading of it (liveHub.follow,
// refreshLive). The caller's session and project rights are checked again
// before each event: a revoked session or membership ends the stream. A
// session has at most Config.MaxLiveStreams streams open.
func (h *Handler) traceListLive(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Feed == nil {
		h.renderError(w, r, http.StatusNotFound, "This server has no live updates.")
		return
	}
	view, err := parseListView(r.URL.Query())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	release, err := h.live.openStream(v.session)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	defer release()
	ctx := r.Context()
	list, updates := h.live.follow(projectID, view, h.refreshLive)
	defer h.live.unfollow(list, updates)
	select {
	case <-list.ready:
	case <-ctx.Done():
		return
	}
	if list.err != nil {
		h.refuse(w, r, list.err)
		return
	}

	rc, ok := openEventStream(w)
	if !ok {
		return
	}
	heartbeat := time.NewTicker(liveHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.closing:
			return
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case results := <-updates:
			if !h.stillAllowed(r, projectID) {
				return
			}
			if err := writeEvent(w, "results", results); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// refreshLive is the loop of a followed list (liveHub.follow): it reads
// the page once, then, whenever a write touches what the view shows, reads
// it again and publishes its results to every follower. Each reading takes
// one of the hub's refresh slots and starts no sooner than liveSettle after
// the write that woke it, nor than liveCostFactor times the last reading's
// time after that one ended.
func (h *Handler) refreshLive(ctx context.Context, l *liveList) {
	sub := h.cfg.Feed.Subscribe(l.projectID)
	defer sub.Close()
	// What the page shows now: a write to one of these calls changes it even
	// when the call no longer matches the filters.
	var shown map[string]bool
	took, err := h.live.refresh(ctx, func() error {
		data, err := h.listData(ctx, l.projectID, l.view, nil)
		shown = shownCalls(data)
		return err
	})
	l.err = err
	close(l.ready)
	if err != nil {
		h.live.forget(l)
		return
	}
	for {
		next := time.Now().Add(liveCostFactor * took)
		select {
		case <-ctx.Done():
			return
		case <-sub.Ready():
		}
		select {
		case <-time.After(max(liveSettle, time.Until(next))):
		case <-ctx.Done():
			return
		}
		ids, overflow := sub.Take()
		results := ""
		took, err = h.live.refresh(ctx, func() error {
			changed, err := h.touchesView(ctx, l.projectID, l.view, ids, overflow, shown)
			if err != nil || !changed {
				return err
			}
			fresh := make(map[string]bool, len(ids))
			for _, id := range ids {
				fresh[id] = true
			}
			data, err := h.listData(ctx, l.projectID, l.view, fresh)
			if err != nil {
				return err
			}
			shown = shownCalls(data)
			var body bytes.Buffer
			if err := h.pages.byName["traces"].ExecuteTemplate(&body, "results_body", data); err != nil {
				return err
			}
			results = body.String()
			return nil
		})
		if err != nil {
			if ctx.Err() == nil {
				h.cfg.Logger.WarnContext(ctx, "webui: live list", "project", l.projectID, "error", err)
			}
			continue
		}
		if results != "" {
			h.live.publish(l, results)
		}
	}
}

// touchesView reports whether writes to ids can change the view's page: one
// of them is on the page, or the view's filters keep one of them (read by
// id, through the primary key). Past a subscription's bound (overflow) the
// page is read again anyway.
func (h *Handler) touchesView(ctx context.Context, projectID string, view listView, ids []string, overflow bool, shown map[string]bool) (bool, error) {
	if overflow {
		return true, nil
	}
	for _, id := range ids {
		if shown[id] {
			return true, nil
		}
	}
	if len(ids) == 0 {
		return false, nil
	}
	userID := ""
	if view.User != "" {
		found, err := h.cfg.Identity.UserIDs(ctx, []string{view.User})
		if err != nil || found[view.User] == "" {
			return false, err
		}
		userID = found[view.User]
	}
	filter := view.filter(userID)
	filter.CallIDs = ids
	stats, err := h.cfg.Trace.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: projectID, Filter: filter, Limit: 1})
	if err != nil {
		return false, err
	}
	return stats.Count > 0, nil
}

// stillAllowed checks the stream's session and project rights afresh.
func (h *Handler) stillAllowed(r *http.Request, projectID string) bool {
	v, err := h.viewerOf(r)
	if err != nil {
		return false
	}
	return h.cfg.Authorizer.Authorize(r.Context(), v.principal, projectID, false) == nil
}

// shownCalls is the set of calls on a page.
func shownCalls(data tracesView) map[string]bool {
	shown := make(map[string]bool, len(data.Rows))
	for _, row := range data.Rows {
		shown[row.ID] = true
	}
	return shown
}

// writeEvent writes one server-sent event; each line of data is one data
// field (the browser joins them with newlines).
func writeEvent(w http.ResponseWriter, event, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	data = strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n") // a lone CR also ends a line
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := fmt.Fprint(w, b.String())
	return err
}

// CloseStreams ends every live stream, now and from now on: call it when the
// server shuts down (http.Server.RegisterOnShutdown), which otherwise waits
// for the streams, open until the browser leaves.
func (h *Handler) CloseStreams() {
	h.closeOnce.Do(func() { close(h.closing) })
}

// openEventStream starts a server-sent event stream: its headers (no
// caching, no proxy buffering) and a first comment flushed at once, so the
// browser sees the stream open. ok is false when the client has gone.
func openEventStream(w http.ResponseWriter) (rc *http.ResponseController, ok bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc = http.NewResponseController(w)
	if _, err := fmt.Fprint(w, ": live\n\n"); err != nil || rc.Flush() != nil {
		return nil, false
	}
	return rc, true
}
