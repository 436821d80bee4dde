package webui

import (
	"time"

	"github.com/weftlabs/weft/trace"
)

// threadFixtures are the thread pages with every part filled from xss.
func threadFixtures(v *viewer) map[string]page {
	c := fixtureCall()
	thread := xss
	c.ThreadID, c.TurnID = &thread, &c.ID
	turn := turnOf("team/p", c)
	plain := fixtureCall()
	plain.Inputs, plain.Output = []byte(`{"self":"x","text":"`+"\\u003cscript\\u003e"+`"}`), []byte(`"`+"\\u003cb\\u003ebold"+`"`)
	p50, ms := 1234.5, int64(1234)
	last := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return map[string]page{
		"threads": {Title: "Threads", Viewer: v, Project: "team/p", Body: threadsView{Project: "team/p",
			Rows: []threadRow{{Thread: &trace.Thread{ThreadID: xss, TurnCount: 3, P50TurnDurationMS: &p50}, Cost: "$0.1", LastActivity: last, P50: &ms}},
			Prev: projectPath("team/p", "threads?offset=0"), Next: projectPath("team/p", "threads?offset=100")}},
		"thread": {Title: xss, Viewer: v, Project: "team/p", Body: threadView{Project: "team/p", ThreadID: xss,
			Turns: []threadTurn{turn, turnOf("team/p", plain)}, Cut: true}},
	}
}
