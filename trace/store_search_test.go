package trace_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// searchCalls are calls whose inputs and outputs hold text in several
// scripts, escaped and not, and LIKE's metacharacters.
var searchCalls = []struct {
	name, inputs, output string
}{
	{"cjk", `{"messages":[{"role":"user","content":"请用中文回答：今天天气怎么样？"}]}`, `"北京今天晴"`},
	{"cjk escaped", `{"q":"\u4f60\u597d\u4e16\u754c"}`, `null`},
	{"arabic", `{"prompt":"ما هو الطقس اليوم في القاهرة؟"}`, `{"answer":"مشمس"}`},
	{"emoji", `{"text":"ship it 🚀🔥 now"}`, `"👍"`},
	{"percent", `{"text":"growth was 100% this year"}`, `null`},
	{"underscore", `{"text":"call get_weather please"}`, `null`},
	{"backslash", `{"path":"C:\\temp\\new"}`, `null`},
	{"plain", `{"text":"getXweather and 100 percent","Messages":"key names are not searched"}`, `{"Output":"Mixed CASE words"}`},
	{"number", `{"n":31415926}`, `null`},
}

func TestStoreSearch(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		byName := map[string]string{}
		var items []trace.BatchItem
		for i, c := range searchCalls {
			callID := id()
			byName[c.name] = callID
			items = append(items, start(callID, id(), nil, t0.Add(time.Duration(i)*time.Second), c.inputs),
				trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: callID,
					EndedAt: t0.Add(time.Hour), Summary: json.RawMessage(`{}`), Output: json.RawMessage(c.output)}})
		}
		// The same text in another project is never found.
		other := start(id(), id(), nil, t0, `{"q":"今天天气 🚀 100%"}`)
		other.Start.ProjectID = "bob/other"
		upsert(t, ctx, s, append(items, other)...)

		for _, tc := range []struct {
			term string
			want []string
		}{
			{"今天天气", []string{"cjk"}},
			{"天气", []string{"cjk"}},           // shorter than a trigram
			{"北京", []string{"cjk"}},           // in the output
			{"你好世界", []string{"cjk escaped"}}, // stored as \u escapes
			{"الطقس", []string{"arabic"}},
			{"مشمس", []string{"arabic"}},
			{"🚀🔥", []string{"emoji"}},
			{"🚀", []string{"emoji"}},
			{"👍", []string{"emoji"}},
			{"100%", []string{"percent"}},           // % is no wildcard: "100 percent" does not match
			{"get_weather", []string{"underscore"}}, // _ is no wildcard: "getXweather" does not match
			{`C:\temp`, []string{"backslash"}},
			{`\`, []string{"backslash"}},
			{"mixed case", []string{"plain"}},
			{"GETXWEATHER", []string{"plain"}},
			{"key names", []string{"plain"}},
			{"Messages", nil}, // a member name
			{"role", nil},
			{"1415", []string{"number"}},
			{`"`, nil},
			{"nowhere to be found", nil},
			{"a\x00b", nil},
		} {
			got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{Search: tc.term}})
			var want []string
			for _, name := range tc.want {
				want = append(want, byName[name])
			}
			if !slices.Equal(ids(got), want) {
				var names []string
				for _, c := range got {
					for n, id := range byName {
						if id == c.ID {
							names = append(names, n)
						}
					}
				}
				t.Errorf("search %q: found %v, want %v", tc.term, names, tc.want)
			}
			stats, err := s.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: project, Filter: trace.CallsFilter{Search: tc.term}})
			if err != nil || stats.Count != int64(len(want)) {
				t.Errorf("count of search %q: %+v %v", tc.term, stats, err)
			}
		}
		// A search combines with the other filters.
		got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{Search: "e", StartedFrom: ptr(t0.Add(5 * time.Second))}})
		if len(got) == 0 || slices.ContainsFunc(got, func(c *trace.Call) bool { return c.StartedAt.Before(t0.Add(5 * time.Second)) }) {
			t.Errorf("search with a time filter: %v", ids(got))
		}
		// A rewritten output is searched as rewritten.
		upsert(t, ctx, s, trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: byName["number"],
			EndedAt: t0.Add(time.Hour), Summary: json.RawMessage(`{}`), Output: json.RawMessage(`"rewritten ünïcode"`)}})
		if got := ids(query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{Search: "ünïcode"}})); !slices.Equal(got, []string{byName["number"]}) {
			t.Errorf("after a second end: %v", got)
		}
		err := s.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: project, Filter: trace.CallsFilter{Search: strings.Repeat("x", trace.MaxSearchLength+1)}},
			func(*trace.Call) error { return nil })
		if !errors.Is(err, trace.ErrInvalidQuery) {
			t.Errorf("a long term: %v", err)
		}
	})
}

func TestStoreSearchTextBound(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	s, ctx := newStore(t, db)
	callID := id()
	long := strings.Repeat("あ", trace.MaxSearchTextBytes) // three bytes each: past the bound
	inputs, _ := json.Marshal(map[string]string{"a": "early", "b": long, "c": "late"})
	upsert(t, ctx, s, start(callID, id(), nil, t0, string(inputs)))
	if got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{Search: "early"}}); len(got) != 1 {
		t.Errorf("text before the bound: %v", ids(got))
	}
	if got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{Search: "late"}}); len(got) != 0 {
		t.Errorf("text past the bound was found: %v", ids(got))
	}
	if got := query(t, ctx, s, trace.CallsQueryReq{Filter: trace.CallsFilter{Search: "ああ"}}); len(got) != 1 {
		t.Errorf("text cut on a character boundary: %v", ids(got))
	}
}

func TestStoreQueryUserAndFeedback(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, alice := newStore(t, db)
		bob := weft.WithPrincipal(context.Background(), weft.Principal{UserID: "u-bob", Username: "bob"})
		a1, a2, b1 := id(), id(), id()
		upsert(t, alice, s, start(a1, id(), nil, t0, `{}`), start(a2, id(), nil, t0.Add(time.Second), `{}`))
		upsert(t, bob, s, start(b1, id(), nil, t0.Add(2*time.Second), `{}`))
		if got := ids(query(t, alice, s, trace.CallsQueryReq{Filter: trace.CallsFilter{UserIDs: []string{"u-bob"}}})); !slices.Equal(got, []string{b1}) {
			t.Errorf("bob's calls: %v", got)
		}
		if got := ids(query(t, alice, s, trace.CallsQueryReq{Filter: trace.CallsFilter{UserIDs: []string{"u-alice", "nobody"}}})); !slices.Equal(got, []string{a1, a2}) {
			t.Errorf("alice's calls: %v", got)
		}

		fb, err := feedback.New(feedback.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		// One reaction by the weave:/// spelling, one note by trace:///, one
		// on another project's call of the same id.
		for _, f := range []feedback.CreateReq{
			{ProjectID: project, WeaveRef: "weave:///" + project + "/call/" + a2, FeedbackType: "wandb.reaction.1", Payload: json.RawMessage(`{"emoji":"👍"}`)},
			{ProjectID: project, TraceRef: "trace:///" + project + "/call/" + b1, FeedbackType: "wandb.note.1", Payload: json.RawMessage(`{"note":"n"}`)},
			{ProjectID: "bob/other", TraceRef: "trace:///bob/other/call/" + a1, FeedbackType: "wandb.note.1", Payload: json.RawMessage(`{"note":"n"}`)},
		} {
			if _, err := fb.Create(alice, f); err != nil {
				t.Fatal(err)
			}
		}
		if got := ids(query(t, alice, s, trace.CallsQueryReq{Filter: trace.CallsFilter{HasFeedback: true}})); !slices.Equal(got, []string{a2, b1}) {
			t.Errorf("calls with feedback: %v, want %v", got, []string{a2, b1})
		}
	})
}

func TestStoreSortByFields(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		// c1: rank 2, 3 s, 30 tokens, success; c2: rank 10, 1 s, 5+7
		// tokens, raised; c3: no rank, running; c4: rank "b" (a string).
		c1, c2, c3, c4 := id(), id(), id(), id()
		upsert(t, ctx, s,
			start(c1, id(), nil, t0, `{"rank":2,"cfg":{"temp":0.5}}`),
			start(c2, id(), nil, t0.Add(time.Second), `{"rank":10,"cfg":{"temp":0.1}}`),
			start(c3, id(), nil, t0.Add(2*time.Second), `{}`),
			start(c4, id(), nil, t0.Add(3*time.Second), `{"rank":"b"}`),
			trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: c1, EndedAt: t0.Add(3 * time.Second),
				Summary: json.RawMessage(`{"usage":{"m":{"total_tokens":30}}}`), Output: json.RawMessage(`{"score":0.9}`)}},
			trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: c2, EndedAt: t0.Add(2 * time.Second),
				Summary: json.RawMessage(`{"usage":{"m":{"total_tokens":5},"n":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}}`),
				Output:  json.RawMessage(`{"score":0.2}`), Exception: ptr("boom")}},
			trace.BatchItem{Mode: trace.ModeEnd, End: &trace.EndedCall{ProjectID: project, ID: c4, EndedAt: t0.Add(3*time.Second + 500*time.Millisecond),
				Summary: json.RawMessage(`{}`), Output: json.RawMessage(`{"score":0.5}`)}},
		)
		for _, tc := range []struct {
			field, dir string
			want       []string
		}{
			{"inputs.cfg.temp", "asc", []string{c2, c1, c3, c4}}, // missing values last in either direction
			{"inputs.cfg.temp", "desc", []string{c1, c2, c3, c4}},
			{"output.score", "desc", []string{c1, c4, c2, c3}},
			{trace.SortLatency, "asc", []string{c4, c2, c1, c3}},
			{trace.SortLatency, "desc", []string{c1, c2, c4, c3}},
			{trace.SortTotalTokens, "desc", []string{c1, c2, c3, c4}},
			{trace.SortTotalTokens, "asc", []string{c2, c1, c3, c4}},
			{trace.SortStatus, "asc", []string{c2, c3, c1, c4}}, // error, running, success
			{"wb_user_id", "asc", []string{c1, c2, c3, c4}},
		} {
			got := ids(query(t, ctx, s, trace.CallsQueryReq{SortBy: []trace.SortBy{{Field: tc.field, Direction: tc.dir}}}))
			if !slices.Equal(got, tc.want) {
				t.Errorf("sort by %s %s: %v, want %v", tc.field, tc.dir, got, tc.want)
			}
		}
		// Numbers sort as numbers (10 after 2), not as text.
		got := ids(query(t, ctx, s, trace.CallsQueryReq{SortBy: []trace.SortBy{{Field: "inputs.rank"}}, Filter: trace.CallsFilter{CallIDs: []string{c1, c2}}}))
		if !slices.Equal(got, []string{c1, c2}) {
			t.Errorf("inputs.rank: %v", got)
		}
		for _, bad := range []string{"nope", "inputs.", "inputs.a..b", `inputs.a"b`, `output.x\y`, "summary.weave.other", "feedback.x", "inputs." + strings.Repeat("a.", 20) + "a"} {
			err := s.CallsQuery(ctx, &trace.CallsQueryReq{ProjectID: project, SortBy: []trace.SortBy{{Field: bad}}}, func(*trace.Call) error { return nil })
			if !errors.Is(err, trace.ErrInvalidQuery) {
				t.Errorf("sort by %q: %v", bad, err)
			}
		}
	})
}
