package webui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weftlabs/weft/internal/testdb"
)

// TestWebUIThreads drives the threads pages in Chromium on every database,
// as a person reaches them: from the projects page to the project, its
// thread list, a thread read as a conversation, a turn's trace, and from
// that call back to its thread; both pages pass the accessibility checks at
// laptop and phone widths.
func TestWebUIThreads(t *testing.T) {
	testdb.EachURL(t, func(t *testing.T, dbURL string) {
		if noBrowser != "" {
			t.Skip(noBrowser)
		}
		e := startEnv(t, dbURL)
		t0 := time.Now().UTC().Add(-time.Hour)
		turns := []struct{ question, answer string }{
			{"My parcel has not arrived.", "Sorry about that. What is the order number?"},
			{"It is order 7.", "Order 7 ships tomorrow morning."},
		}
		for i, turn := range turns {
			callID := id('d', i)
			at := t0.Add(time.Duration(i) * time.Minute)
			e.api(t, e.aliceKey, "/call/start", map[string]any{"start": map[string]any{"project_id": "alice/support", "id": callID,
				"trace_id": id('8', i), "op_name": "support.reply", "started_at": at.Format(time.RFC3339Nano),
				"thread_id": "ticket-7", "turn_id": callID, "inputs": map[string]any{"model": "gpt-4o-mini", "messages": []any{
					map[string]any{"role": "user", "content": turn.question}}}}})
			e.endWith(t, e.aliceKey, "alice/support", callID, at.Add(1500*time.Millisecond),
				map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": turn.answer}}}},
				map[string]any{"usage": map[string]any{"gpt-4o-mini": map[string]any{"prompt_tokens": 200, "completion_tokens": 20}}}, "")
		}

		tb := newTab(t, e.srv.URL)
		tb.signIn("", e.aliceKey)
		tb.follow(`#projects a[href="/ui/p/alice/support/"]`, "#traces")
		tb.follow(`nav a[data-nav="threads"]`, "#threads")
		row := tb.text(`#threads tr[data-thread="ticket-7"]`)
		for _, want := range []string{"ticket-7", "2", "1.50 s", "$"} {
			if !strings.Contains(row, want) {
				t.Errorf("the thread's row lacks %q: %q", want, row)
			}
		}
		tb.follow(`#threads a.thread-link`, "#turns")
		tb.capture("thread")
		conversation := tb.text("#turns")
		last := -1
		for _, turn := range turns {
			for _, text := range []string{turn.question, turn.answer} {
				at := strings.Index(conversation, text)
				if at <= last {
					t.Fatalf("%q is not in its place in the conversation: %q", text, conversation)
				}
				last = at
			}
		}
		tb.follow(`#turns li.turn:last-child a.turn-link`, ".call-detail")
		tb.run(chromedp.WaitVisible(chromedp.CSS(`.call-detail[data-call="` + id('d', 1) + `"] a.thread-link`)))
		tb.follow(`.call-detail a.thread-link`, "#turns")
		if p := tb.path(); p != "/ui/p/alice/support/threads/ticket-7" {
			t.Fatalf("the call's thread link led to %s", p)
		}

		axe := axeSource(t)
		pages := []a11yPage{
			{"thread list", "/ui/p/alice/support/threads", "#threads"},
			{"thread", "/ui/p/alice/support/threads/ticket-7", "#turns"},
		}
		for _, size := range []viewport{laptop, phone} {
			tb.checkPagesAt(size, axe, pages)
		}

		// Another user's thread pages are refused.
		bob := newTab(t, e.srv.URL)
		bob.signIn("", e.bobKey)
		bob.expect("/ui/p/alice/support/threads/ticket-7", 403)
		bob.open("/ui/p/alice/support/threads/ticket-7")
		if got := bob.text(".error-page"); strings.Contains(got, "parcel") || !strings.Contains(got, "403") {
			t.Fatalf("bob's view of alice's thread: %q", got)
		}
	})
}
