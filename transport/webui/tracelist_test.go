package webui_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// seedList writes the traces the list tests read: text in several scripts,
// a reaction, usage with a price, and a call by a second member (bob).
//
//	a0 chat  "你好世界"           rank 3   alice  👍 👍 🎉
//	a1 chat  "مرحبا بالعالم"      rank 1   alice
//	a2 tool  "ship it 🚀"         rank 2   bob
//	a3 tool  "growth 100% done"   (none)   alice  running
func seedList(t *testing.T, s *server) time.Time {
	t.Helper()
	if err := s.identity.AddMember(context.Background(), "alice", "bob", "member"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	texts := []string{"你好世界", "مرحبا بالعالم", "ship it 🚀", "growth 100% done"}
	for i, text := range texts {
		key, op := s.aliceKey, "chat"
		if i == 2 {
			key = s.bobKey
		}
		if i >= 2 {
			op = "tool"
		}
		inputs := map[string]any{"question": text}
		if i < 3 {
			inputs["rank"] = []int{3, 1, 2}[i]
		}
		at := t0.Add(time.Duration(i) * time.Minute)
		s.callStart(t, key, "alice/p", uuidN('a', i), uuidN('f', i), "", op, at, inputs)
		if i == 3 {
			continue
		}
		s.callEnd(t, key, "alice/p", uuidN('a', i), at.Add(time.Duration(i+1)*time.Second), map[string]any{"answer": "re: " + text},
			map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 1000 * (i + 1), "completion_tokens": 10}}}, "")
	}
	for _, emoji := range []string{"👍", "👍", "🎉"} {
		s.api(t, s.aliceKey, "/feedback/create", map[string]any{"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/" + uuidN('a', 0),
			"feedback_type": "wandb.reaction.1", "payload": map[string]any{"emoji": emoji}})
	}
	return t0
}

func TestTraceListColumnsFiltersSearch(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		seedList(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)

		all := b.get("/ui/p/alice/p/")
		all.mustContain(t, "4 traces",
			`👍<span class="reaction-count">2</span>`, `🎉</span>`, // reactions counted by emoji
			"$0.002600", // gpt-4o: 1000 prompt tokens at $2.5/M + 10 completion at $10/M
			">bob<", ">alice<",
			`data-add-column="inputs.question"`, `data-add-column="output.answer"`,
			`sse-connect="/ui/p/alice/p/live"`)

		for _, tc := range []struct {
			query string
			want  []int
		}{
			{"?q=" + url.QueryEscape("你好"), []int{0}},
			{"?q=" + url.QueryEscape("بالعالم"), []int{1}},
			{"?q=" + url.QueryEscape("🚀"), []int{2}},
			{"?q=" + url.QueryEscape("100%"), []int{3}},
			{"?q=" + url.QueryEscape("re: ship"), []int{2}}, // in the output
			{"?q=_", nil},
			{"?feedback=1", []int{0}},
			{"?user=bob", []int{2}},
			{"?user=alice&op=chat", []int{1, 0}},
			{"?status=running", []int{3}},
			{"?model=gpt-4o", []int{2, 1, 0}},
			{"?model=gpt-4o&user=bob", []int{2}},
			{"?model=gpt", nil},
			{"?model=" + url.QueryEscape("gpt-4o' OR '1'='1"), nil},
			{"?sort=inputs.rank&dir=asc&cols=inputs.rank", []int{1, 2, 0, 3}},
			{"?sort=summary.weave.latency_ms&dir=desc", []int{2, 1, 0, 3}},
			{"?sort=summary.usage.total_tokens&dir=asc", []int{0, 1, 2, 3}},
			{"?sort=summary.weave.status&dir=asc", []int{3, 0, 1, 2}}, // running before success, then by id
			{"?sort=wb_user_id&dir=desc", []int{2, 0, 1, 3}},          // bob's id is the greater: made second
		} {
			p := b.get("/ui/p/alice/p/" + tc.query)
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d %s", tc.query, p.status, p.body)
			}
			var want []string
			for _, i := range tc.want {
				want = append(want, uuidN('a', i))
			}
			if got := rowsOf(p); !slices.Equal(got, want) {
				t.Errorf("%s:\n got %v\nwant %v", tc.query, got, want)
			}
		}

		// Chosen columns show their values, are in the URL and keep the
		// filters; a column's header sorts by it and removes it.
		cols := b.get("/ui/p/alice/p/?op=chat&cols=inputs.question,output.answer")
		cols.mustContain(t, `data-field="inputs.question"`, `<td class="field" data-label="inputs.question">你好世界</td>`, `<td class="field" data-label="output.answer">re: مرحبا بالعالم</td>`,
			`href="/ui/p/alice/p/?cols=inputs.question%2Coutput.answer&amp;dir=desc&amp;op=chat&amp;sort=inputs.question"`,
			`href="/ui/p/alice/p/?cols=output.answer&amp;op=chat" aria-label="Remove column inputs.question"`,
			`name="cols" value="inputs.question,output.answer"`)
		b.get("/ui/p/alice/p/?user=nobody").mustContain(t, "No user is named")

		for _, bad := range []string{"?cols=attributes.x", "?cols=inputs.a..b", "?sort=inputs.rank", "?sort=cost", "?feedback=yes",
			"?q=" + strings.Repeat("x", 300), "?model=" + strings.Repeat("m", 513), "?cols=inputs.a0,inputs.a1,inputs.a2,inputs.a3,inputs.a4,inputs.a5,inputs.a6,inputs.a7,inputs.a8,inputs.a9,inputs.a10,inputs.a11,inputs.a12"} {
			if p := b.get("/ui/p/alice/p/" + bad); p.status != http.StatusBadRequest {
				t.Errorf("%s: %d, want 400", bad, p.status)
			}
		}
	})
}

// sseReader reads server-sent events from a live list.
type sseReader struct {
	t      *testing.T
	events chan sseEvent
}

type sseEvent struct{ name, data string }

func openLive(t *testing.T, b *browser, path string) (*http.Response, *sseReader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.s.URL+path, nil)
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := &sseReader{t: t, events: make(chan sseEvent, 16)}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return res, r
	}
	t.Cleanup(func() { res.Body.Close() })
	go func() {
		defer close(r.events)
		scanner := bufio.NewScanner(res.Body)
		scanner.Buffer(make([]byte, 1<<20), 1<<24)
		var ev sseEvent
		var data []string
		for scanner.Scan() {
			line := scanner.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ev.data = strings.Join(data, "\n")
					r.events <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return res, r
}

// next waits for the next event; the bound only keeps a broken stream from
// hanging the test.
func (r *sseReader) next() sseEvent {
	r.t.Helper()
	select {
	case ev, ok := <-r.events:
		if !ok {
			r.t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		r.t.Fatal("no event")
	}
	return sseEvent{}
}

func TestTraceListLive(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := seedList(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)

		res, live := openLive(t, b, "/ui/p/alice/p/live?op=chat")
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("live: %d %v", res.StatusCode, res.Header)
		}
		// A call the filter drops sends nothing; the next call the filter
		// keeps sends the page with it, marked fresh, first.
		s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 1), uuidN('e', 1), "", "tool", t0.Add(time.Hour), map[string]any{})
		s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 2), uuidN('e', 2), "", "chat", t0.Add(2*time.Hour), map[string]any{"question": "live"})
		ev := live.next()
		if ev.name != "results" {
			t.Fatalf("event %q", ev.name)
		}
		rows := rowsOf(page{body: ev.data})
		if want := []string{uuidN('b', 2), uuidN('a', 1), uuidN('a', 0)}; !slices.Equal(rows, want) {
			t.Fatalf("live page: %v, want %v\n%s", rows, want, ev.data)
		}
		if !strings.Contains(ev.data, `id="row-`+uuidN('b', 2)+`" class="fresh"`) || !strings.Contains(ev.data, ">running<") || !strings.Contains(ev.data, "3 traces") {
			t.Fatalf("the new row:\n%s", ev.data)
		}
		// Its end updates the row in place.
		s.callEnd(t, s.aliceKey, "alice/p", uuidN('b', 2), t0.Add(2*time.Hour+time.Second), "done", map[string]any{}, "boom")
		ev = live.next()
		if !strings.Contains(ev.data, ">error<") || strings.Contains(ev.data, ">running<") {
			t.Fatalf("after the end:\n%s", ev.data)
		}

		// The stream is the project's: a user of another entity is refused,
		// and so is a bad view.
		carol := s.browser(t)
		if _, err := s.identity.CreateUser(context.Background(), "carol", false); err != nil {
			t.Fatal(err)
		}
		key, err := s.identity.CreateAPIKey(context.Background(), "carol", "test")
		if err != nil {
			t.Fatal(err)
		}
		carol.signIn("", key)
		if res, _ := openLive(t, carol, "/ui/p/alice/p/live"); res.StatusCode != http.StatusForbidden {
			t.Errorf("another entity's stream: %d", res.StatusCode)
		}
		if res, _ := openLive(t, b, "/ui/p/alice/p/live?status=nope"); res.StatusCode != http.StatusBadRequest {
			t.Errorf("a bad view's stream: %d", res.StatusCode)
		}
		// Signing out ends the stream at its next update.
		form := url.Values{"csrf": {b.csrf()}}
		b.post("/ui/signout", form)
		s.callStart(t, s.aliceKey, "alice/p", uuidN('b', 3), uuidN('e', 3), "", "chat", t0.Add(3*time.Hour), map[string]any{})
		select {
		case ev, ok := <-live.events:
			if ok {
				t.Errorf("an event after sign-out: %s", ev.name)
			}
		case <-time.After(30 * time.Second):
			t.Error("the stream outlived its session")
		}
	})
}
