package webui_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// monitorsOf serves fixed monitors of alice/p, as the monitor service
// answers them; every other project has none.
type monitorsOf struct{ monitor.Service }

func (monitorsOf) List(_ context.Context, projectID string) ([]monitor.Listed, error) {
	if projectID != "alice/p" {
		return nil, nil
	}
	since := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	return []monitor.Listed{
		{Monitor: monitor.Monitor{ProjectID: projectID, ObjectID: "graded", Digest: "d1gest", SamplingRate: 0.25, Active: true,
			OpNames: []string{"weave:///alice/p/op/answer:*"}, Scorers: []string{"weave:///alice/p/object/judge:abc"}}, ActiveSince: &since, UpdatedAt: since},
		{Monitor: monitor.Monitor{ProjectID: projectID, ObjectID: "quiet", Digest: "d2", SamplingRate: 1}, UpdatedAt: since},
	}, nil
}

// Stats answers every verdict as queued in the first interval of a range.
func (monitorsOf) Stats(_ context.Context, req monitor.StatsReq) (*monitor.Stats, error) {
	totals := monitor.Totals{Verdicts: monitor.VerdictCounts{Done: 7, Pending: 2, Error: 1}, PromptTokens: 1200, CompletionTokens: 300, Cost: 0.0042, PricedVerdicts: 7}
	s := &monitor.Stats{MonitorID: req.MonitorID, Totals: totals}
	if req.Granularity > 0 {
		width := time.Duration(req.Granularity) * time.Second
		for at := *req.From; at.Before(*req.Before); at = at.Add(width) {
			s.Intervals = append(s.Intervals, monitor.Interval{Start: at, Seconds: req.Granularity})
		}
		s.Intervals[0].Totals = totals
	}
	return s, nil
}

func (monitorsOf) Backfills(_ context.Context, projectID, monitorID string) ([]monitor.Backfill, error) {
	return []monitor.Backfill{{ID: "bf1", ProjectID: projectID, MonitorID: monitorID, State: monitor.BackfillRunning,
		StartedBefore: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), CallsMatched: 40, CallsSampled: 10, CallsDispatched: 6,
		Verdicts: monitor.VerdictCounts{Done: 5, Pending: 1}, CreatedAt: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}}, nil
}

func (monitorsOf) Verdicts(context.Context, string, string, int) ([]monitor.Verdict, error) {
	reason, judgeCall, cost := "the judge's answer is off-schema", "019a0000-0000-7000-8000-0000000000aa", 0.0006
	at := time.Date(2026, 11, 2, 1, 0, 0, 0, time.UTC)
	return []monitor.Verdict{
		{CallID: "019a0000-0000-7000-8000-000000000001", ScorerID: "judge", State: monitor.StateDone, Output: json.RawMessage(`{"verdict":"good"}`),
			JudgeCallID: &judgeCall, Cost: &cost, CreatedAt: at},
		{CallID: "019a0000-0000-7000-8000-000000000002", ScorerID: "judge", State: monitor.StateError, Error: &reason, CreatedAt: at},
	}, nil
}

// TestMonitorPages: the monitors page lists a project's monitors with
// their state, filter and sampling; a monitor's page shows what its
// verdicts came to (counts, the judges' tokens and cost), its backfills'
// progress and its newest verdicts linked to their calls and judge calls.
// An unknown monitor is not found, and another entity's project is
// refused, as every page of it is, showing none of its monitors.
func TestMonitorPages(t *testing.T) {
	s := newServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) { ui.Monitors = monitorsOf{} })
	b := s.browser(t)
	b.signIn("", s.aliceKey)

	list := b.get("/ui/p/alice/p/monitors")
	if list.status != http.StatusOK {
		t.Fatalf("monitors: %d %s", list.status, list.body)
	}
	list.mustContain(t, `href="/ui/p/alice/p/monitors/graded">graded</a>`, `<span class="status success">active</span>`, "25%",
		"weave:///alice/p/op/answer:*", `href="/ui/p/alice/p/monitors/quiet">quiet</a>`, "paused", "every op", `data-nav="monitors"`)

	one := b.get("/ui/p/alice/p/monitors/graded")
	if one.status != http.StatusOK {
		t.Fatalf("monitor: %d %s", one.status, one.body)
	}
	one.mustContain(t, "<dt>Done</dt><dd>7</dd>", "<dt>Errors</dt><dd>1</dd>", "1200 prompt, 300 completion", "0.004200 over 7 priced verdicts",
		`data-backfill="bf1"`, "<td>running</td>", `<td class="num">40…</td>`, "5 done, 1 pending, 0 errors",
		`href="/ui/p/alice/p/calls/019a0000-0000-7000-8000-000000000001"`, `{&#34;verdict&#34;:&#34;good&#34;}`,
		`href="/ui/p/alice/p/calls/019a0000-0000-7000-8000-0000000000aa">judge call</a>`, "the judge&#39;s answer is off-schema", "0.000600",
		`href="/ui/p/alice/p/objects/graded/versions/d1gest"`)

	// The charts: the last day by the hour, each bar linked to its hour's
	// traces by the verdict of the monitor's first scorer.
	to := s.clock.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	from := to.Add(-24 * time.Hour)
	hour := url.Values{"verdict": {"judge"}, "sort": {"verdict"}, "dir": {"asc"}, "from": {from.Format("2006-01-02T15:04")},
		"to": {from.Add(time.Hour).Format("2006-01-02T15:04")}}
	one.mustContain(t, `id="chart-verdicts"`, `viewBox="0 0 576 120"`, `aria-label="done, `+from.Format("Jan 2 15:04")+`: 7 verdicts"`,
		`aria-label="errors, `+from.Format("Jan 2 15:04")+`: 1 verdict"`, `id="chart-judge-tokens"`, `aria-label="prompt, `+from.Format("Jan 2 15:04")+`: 1200 tokens"`,
		`id="chart-cost"`, `aria-label="`+from.Format("Jan 2 15:04")+`: $0.004200"`, `href="/ui/p/alice/p/?`+html.EscapeString(hour.Encode())+`"`,
		`<option value="24h" selected>`)
	if week := b.get("/ui/p/alice/p/monitors/graded?range=7d"); week.status != http.StatusOK {
		t.Fatalf("a week of the monitor: %d %s", week.status, week.body)
	} else {
		week.mustContain(t, `viewBox="0 0 672 120"`, `<option value="7d" selected>`)
	}
	if p := b.get("/ui/p/alice/p/monitors/graded?range=1y"); p.status != http.StatusBadRequest {
		t.Fatalf("a range the page does not offer: %d", p.status)
	}
	if p := b.get("/ui/p/alice/p/monitors/nothing"); p.status != http.StatusNotFound {
		t.Fatalf("an unknown monitor: %d", p.status)
	}
	one.mustContain(t, `href="/ui/p/alice/p/edit-monitor?id=graded"`, `action="/ui/p/alice/p/monitors/graded/active"`,
		`name="active" value="0"><button type="submit">Pause</button>`, `href="/ui/p/alice/p/edit-scorer?name=judge"`,
		`href="/ui/p/alice/p/?verdict=judge&amp;sort=verdict&amp;dir=asc"`)

	bob := s.browser(t)
	bob.signIn("", s.bobKey)
	for _, path := range []string{"/ui/p/alice/p/monitors", "/ui/p/alice/p/monitors/graded", "/ui/p/alice/p/edit-monitor?id=graded",
		"/ui/p/alice/p/edit-scorer"} {
		p := bob.get(path)
		if p.status != http.StatusForbidden {
			t.Errorf("bob on %s: %d", path, p.status)
		}
		p.mustContain(t, "not a member of entity")
		p.mustNotContain(t, "weave:///alice/p/op/answer", "d1gest")
	}
	csrf := bob.csrf()
	for path, form := range map[string]url.Values{
		"/ui/p/alice/p/monitors":               {"id": {"graded"}, "sampling": {"100"}, "scorer": {"weave:///alice/p/object/judge:abc"}},
		"/ui/p/alice/p/monitors/graded/active": {"active": {"0"}},
		"/ui/p/alice/p/scorers":                {"name": {"j"}, "class": {monitor.ClassContains}, "substring": {"x"}},
	} {
		form.Set("csrf", csrf)
		if p := bob.post(path, form); p.status != http.StatusForbidden {
			t.Errorf("bob posting to %s: %d", path, p.status)
		}
	}
}
