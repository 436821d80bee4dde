package webui

import (
	"strconv"
	"time"
)

// timelineSpan is the stretch of time the trace view's bars are drawn in:
// from the first root's start to the last root's end (now while a root
// runs). Each tree row carries its call's start and end in milliseconds
// since the epoch; traceview.js places its bar inside this span, for rows
// drawn with the page and rows of subtrees loaded later alike.
type timelineSpan struct {
	Start, End time.Time
	// Ticks label the axis at 0, ¼, ½, ¾ and the whole of the span.
	Ticks []string
}

func timelineOf(roots []*callView, now time.Time) timelineSpan {
	var span timelineSpan
	for i, r := range roots {
		end := now
		if r.Ended != nil {
			end = *r.Ended
		}
		if i == 0 || r.Started.Before(span.Start) {
			span.Start = r.Started
		}
		if i == 0 || end.After(span.End) {
			span.End = end
		}
	}
	if !span.End.After(span.Start) {
		span.End = span.Start.Add(time.Millisecond)
	}
	total := span.End.Sub(span.Start)
	for i := range 5 {
		ms := (total * time.Duration(i) / 4).Milliseconds()
		span.Ticks = append(span.Ticks, formatLatency(&ms))
	}
	return span
}

// epochMS is t in milliseconds since the epoch, for the timeline's data
// attributes.
func epochMS(t time.Time) int64 { return t.UnixMilli() }

// endMS is a call's end for the timeline, "" while it runs.
func endMS(t *time.Time) string {
	if t == nil {
		return ""
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}
