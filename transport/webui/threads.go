package webui

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// threadsPageSize is how many threads the thread list shows per page.
const threadsPageSize = 50

// maxThreadCalls bounds the calls read for one page of threads or one
// thread (turns and the calls inside them): a thread longer than that shows
// its first turns and says it stops there.
const maxThreadCalls = 2000

// errBadOffset: the page's offset is no number of rows (HTTP 400).
var errBadOffset = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "offset must be a whole number from 0")

// threadsView is the data of the thread list.
type threadsView struct {
	Project    string
	Rows       []threadRow
	Prev, Next string
}

// threadRow is one thread of the list: Weave's thread numbers and the cost
// of its turns (their whole subtrees).
type threadRow struct {
	*trace.Thread
	Cost         string // "" when nothing is priced
	LastActivity time.Time
	P50          *int64 // the median turn's milliseconds
}

// threadsPage serves the thread list, newest activity first.
func (h *Handler) threadsPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	offset, err := offsetOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	limit := threadsPageSize + 1
	data := threadsView{Project: projectID}
	err = h.cfg.Trace.ThreadsQuery(r.Context(), &trace.ThreadsQueryReq{ProjectID: projectID, Limit: &limit, Offset: &offset},
		func(t *trace.Thread) error {
			row := threadRow{Thread: t, LastActivity: t.StartTime}
			if t.P50TurnDurationMS != nil {
				ms := int64(*t.P50TurnDurationMS)
				row.P50 = &ms
			}
			if t.LastUpdated != nil {
				row.LastActivity = *t.LastUpdated
			}
			data.Rows = append(data.Rows, row)
			return nil
		})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if len(data.Rows) > threadsPageSize {
		data.Rows = data.Rows[:threadsPageSize]
		data.Next = projectPath(projectID, "threads?offset="+strconv.Itoa(offset+threadsPageSize))
	}
	if offset > 0 {
		data.Prev = projectPath(projectID, "threads?offset="+strconv.Itoa(max(0, offset-threadsPageSize)))
	}
	if err := h.fillThreadCosts(r.Context(), projectID, data.Rows); err != nil {
		h.internalError(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "threads", page{Title: "Threads · " + projectID, Viewer: v, Project: projectID, Body: data})
}

// offsetOf reads the offset parameter of a paged list (0 when absent).
func offsetOf(r *http.Request) (int, error) {
	s := r.URL.Query().Get("offset")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1_000_000_000 {
		return 0, errBadOffset
	}
	return n, nil
}

// fillThreadCosts adds up the cost of each thread's turns, over their
// subtrees (trace.Service.CallsUsage).
func (h *Handler) fillThreadCosts(ctx context.Context, projectID string, rows []threadRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.ThreadID
	}
	turnsOf := map[string][]string{}
	var turns []string
	err := h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ThreadIDs: ids},
		Columns: []string{"id", "thread_id", "turn_id"}, Limit: maxThreadCalls}, func(c *trace.Call) error {
		if c.TurnID != nil && *c.TurnID == c.ID && c.ThreadID != nil {
			turnsOf[*c.ThreadID] = append(turnsOf[*c.ThreadID], c.ID)
			turns = append(turns, c.ID)
		}
		return nil
	})
	if err != nil || len(turns) == 0 {
		return err
	}
	usage, err := h.cfg.Trace.CallsUsage(ctx, &trace.CallsUsageReq{ProjectID: projectID, CallIDs: turns, IncludeCosts: true})
	if errors.Is(err, trace.ErrTraceTooLarge) {
		return nil
	}
	if err != nil {
		return err
	}
	for i, row := range rows {
		var total float64
		priced := false
		for _, id := range turnsOf[row.ThreadID] {
			if cost, ok := usageCost(usage.CallUsage[id]); ok {
				total += cost
				priced = true
			}
		}
		if priced {
			rows[i].Cost = formatCost(total)
		}
	}
	return nil
}

// usageCost totals the priced parts of a call's usage (trace.Service.CallsUsage
// with costs); ok is false when no model of it has a price.
func usageCost(models map[string]*trace.Usage) (total float64, ok bool) {
	for _, u := range models {
		for _, part := range []*float64{u.PromptTokensTotalCost, u.CompletionTokensTotalCost,
			u.CacheReadInputTokensTotalCost, u.CacheCreationInputTokensTotalCost} {
			if part != nil {
				total += *part
				ok = true
			}
		}
	}
	return total, ok
}

// threadView is the data of one thread's page: its turns as a
// conversation, oldest first.
type threadView struct {
	Project  string
	ThreadID string
	Turns    []threadTurn
	// Cut says the thread has more calls than were read (maxThreadCalls).
	Cut bool
}

// threadTurn is one turn: what the user said and what came back, as chat
// messages when the turn is a chat call, else as text.
type threadTurn struct {
	*callView
	Asked, Answered     []chatMessage
	AskedText, Answer   string
	TraceLink, CallLink string
}

// threadPage serves one thread as a conversation.
func (h *Handler) threadPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	threadID := r.PathValue("threadID")
	data := threadView{Project: projectID, ThreadID: threadID}
	read := 0
	err := h.cfg.Trace.CallsQuery(r.Context(), &trace.CallsQueryReq{ProjectID: projectID, Filter: trace.CallsFilter{ThreadIDs: []string{threadID}},
		SortBy: []trace.SortBy{{Field: "started_at", Direction: "asc"}}, Limit: maxThreadCalls + 1, IncludeCosts: true}, func(c *trace.Call) error {
		if read++; read > maxThreadCalls {
			data.Cut = true
			return nil
		}
		if c.TurnID == nil || *c.TurnID != c.ID {
			return nil
		}
		data.Turns = append(data.Turns, turnOf(projectID, c))
		return nil
	})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if len(data.Turns) == 0 {
		h.renderError(w, r, http.StatusNotFound, "This project has no thread "+strconv.Quote(threadID)+".")
		return
	}
	views := make([]*callView, len(data.Turns))
	for i, turn := range data.Turns {
		views[i] = turn.callView
	}
	if err := h.fillUsernames(r.Context(), views); err != nil {
		h.internalError(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "thread", page{Title: "Thread " + threadID + " · " + projectID, Viewer: v, Project: projectID, Body: data})
}

// turnOf reads one turn: the last user message it was given (earlier ones
// are the turns before) and the reply.
func turnOf(projectID string, c *trace.Call) threadTurn {
	t := threadTurn{callView: viewOf(c),
		TraceLink: projectPath(projectID, "traces/", pathSegment(c.TraceID)) + "?call=" + c.ID}
	if msgs := chatInputs(c.Inputs); len(msgs) > 0 {
		t.Asked = []chatMessage{lastUserMessage(msgs)}
	} else {
		t.AskedText = inputText(c.Inputs)
	}
	if msgs := chatOutput(c.Output); len(msgs) > 0 {
		t.Answered = msgs
	} else {
		t.Answer = valueText(c.Output)
	}
	decorateMessages(t.Asked, projectID)
	decorateMessages(t.Answered, projectID)
	return t
}
