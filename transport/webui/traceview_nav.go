package webui

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// maxErrorsScanned bounds the failed calls of one trace that "next error"
// orders; a trace with more fails in more places than anyone steps through.
const maxErrorsScanned = 1000

// nextErrorAnswer is the JSON answer of "next error": the call to select and
// the ids of its ancestors from the root down, which the page opens one by
// one (loading each subtree, and further pages of children, as needed).
type nextErrorAnswer struct {
	// Call is "" when the trace has no failed call.
	Call string   `json:"call"`
	Path []string `json:"path"`
	// Wrapped says the search went past the last failed call and started
	// again from the top.
	Wrapped bool `json:"wrapped"`
}

// treePos is where a call sits in the tree: the (start, id) of each of its
// ancestors from the root down and its own last, which orders calls as the
// tree lists them (children in start order, ties by id) depth first.
type treePos struct {
	id   string
	path []string // ancestor ids, root first
	keys []posKey
}

type posKey struct {
	at time.Time
	id string
}

func comparePos(a, b treePos) int {
	for i := 0; i < len(a.keys) && i < len(b.keys); i++ {
		if c := a.keys[i].at.Compare(b.keys[i].at); c != 0 {
			return c
		}
		if c := strings.Compare(a.keys[i].id, b.keys[i].id); c != 0 {
			return c
		}
	}
	return len(a.keys) - len(b.keys) // an ancestor comes before its subtree
}

// sortPositions orders positions as the tree lists them.
func sortPositions(positions []treePos) { slices.SortFunc(positions, comparePos) }

// nextError answers GET …/traces/{traceID}/next-error?after={callID}: the
// first failed call (one with an exception) after the given call in the
// tree's depth-first order, wrapping to the first one.
func (h *Handler) nextError(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	ctx := r.Context()
	traceID, after := r.PathValue("traceID"), r.URL.Query().Get("after")
	if len(traceID) > maxIDLength || len(after) > maxIDLength {
		h.refuse(w, r, weft.Errorf(errBadView, "ids: at most %d characters", maxIDLength))
		return
	}
	calls := map[string]*trace.Call{}
	var failed []string
	err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
		ProjectID: projectID, Filter: trace.CallsFilter{TraceIDs: []string{traceID}, Statuses: []string{trace.StatusError}},
		Limit: maxErrorsScanned,
	}, func(c *trace.Call) error {
		calls[c.ID] = c
		failed = append(failed, c.ID)
		return nil
	})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	answer := nextErrorAnswer{Path: []string{}}
	if len(failed) == 0 {
		writeJSON(w, answer)
		return
	}
	wanted := failed
	if after != "" {
		wanted = append(slices.Clone(failed), after)
	}
	if err := h.loadAncestors(ctx, projectID, traceID, calls, wanted); err != nil {
		h.refuse(w, r, err)
		return
	}
	var positions []treePos
	for _, id := range failed {
		if p, ok := positionOf(calls, id); ok {
			positions = append(positions, p)
		}
	}
	sortPositions(positions)
	next := -1
	if from, ok := positionOf(calls, after); ok && after != "" {
		for i, p := range positions {
			if comparePos(p, from) > 0 {
				next = i
				break
			}
		}
	}
	if next < 0 {
		next, answer.Wrapped = 0, after != ""
	}
	if len(positions) > 0 {
		answer.Call, answer.Path = positions[next].id, positions[next].path
	}
	writeJSON(w, answer)
}

// loadAncestors reads the ancestors of ids that calls lacks, a generation per
// query, until every chain reaches a root of the trace.
func (h *Handler) loadAncestors(ctx context.Context, projectID, traceID string, calls map[string]*trace.Call, ids []string) error {
	pending := ids
	for depth := 0; len(pending) > 0 && depth < maxTreeDepth; depth++ {
		var missing []string
		for _, id := range pending {
			c, ok := calls[id]
			if !ok {
				missing = append(missing, id)
				continue
			}
			if c.ParentID != nil {
				if _, ok := calls[*c.ParentID]; !ok && !slices.Contains(missing, *c.ParentID) {
					missing = append(missing, *c.ParentID)
				}
			}
		}
		if len(missing) == 0 {
			return nil
		}
		var found []string
		err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
			ProjectID: projectID, Filter: trace.CallsFilter{TraceIDs: []string{traceID}, CallIDs: missing},
		}, func(c *trace.Call) error {
			calls[c.ID] = c
			found = append(found, c.ID)
			return nil
		})
		if err != nil {
			return err
		}
		pending = found
	}
	return nil
}

// maxTreeDepth bounds the ancestor chains followed (and so a parent cycle
// in hostile data).
const maxTreeDepth = 256

// positionOf places id in the tree from the calls read; false when its chain
// does not reach a root (a parent outside the trace, or a cycle).
func positionOf(calls map[string]*trace.Call, id string) (treePos, bool) {
	pos := treePos{id: id}
	seen := map[string]bool{}
	for cur := id; ; {
		c, ok := calls[cur]
		if !ok || seen[cur] || len(seen) > maxTreeDepth {
			return treePos{}, false
		}
		seen[cur] = true
		pos.keys = append(pos.keys, posKey{at: c.StartedAt, id: c.ID})
		if cur != id {
			pos.path = append(pos.path, cur)
		}
		if c.ParentID == nil {
			break
		}
		cur = *c.ParentID
	}
	slices.Reverse(pos.keys)
	slices.Reverse(pos.path)
	if pos.path == nil {
		pos.path = []string{}
	}
	return pos, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
