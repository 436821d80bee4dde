package webui_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestThreads: the thread list counts each thread's turns and prices them
// with their subtrees, newest activity first; a thread's page shows its turns
// in order as the user's last message and the reply; a call's detail links
// to its thread; another tenant sees neither page.
func TestThreads(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		turn := func(n int, thread, question, answer string, at time.Time) string {
			callID := uuidN('a', n)
			s.api(t, s.aliceKey, "/call/start", map[string]any{"start": map[string]any{"project_id": "alice/p", "id": callID,
				"trace_id": uuidN('f', n), "op_name": "chat", "started_at": at.Format(time.RFC3339Nano), "thread_id": thread, "turn_id": callID,
				"inputs": map[string]any{"model": "gpt-4o", "messages": []any{
					map[string]any{"role": "system", "content": "Be brief."},
					map[string]any{"role": "user", "content": question}}}}})
			s.callEnd(t, s.aliceKey, "alice/p", callID, at.Add(time.Second),
				map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}},
				map[string]any{"usage": map[string]any{"gpt-4o": map[string]any{"prompt_tokens": 1000, "completion_tokens": 100}}}, "")
			return callID
		}
		first := turn(0, "support-42", "My order is late.", "Sorry to hear that; which order?", t0)
		turn(1, "support-42", "Order 7.", "It ships tomorrow.", t0.Add(time.Minute))
		turn(2, "sales-1", "Do you ship abroad?", "Yes, to 30 countries.", t0.Add(30*time.Second))

		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		list := b.get("/ui/p/alice/p/threads")
		if list.status != http.StatusOK {
			t.Fatalf("threads: %d %s", list.status, list.body)
		}
		support := rowOfThread(t, list.body, "support-42")
		for _, want := range []string{`<td class="num">2</td>`, `<td class="num wide-only">1.00 s</td>`, "$0.0"} {
			if !strings.Contains(support, want) {
				t.Errorf("the support thread's row lacks %q:\n%s", want, support)
			}
		}
		if i, j := strings.Index(list.body, `data-thread="support-42"`), strings.Index(list.body, `data-thread="sales-1"`); i < 0 || j < 0 || i > j {
			t.Errorf("the thread active last is not first (%d, %d)", i, j)
		}

		thread := b.get("/ui/p/alice/p/threads/support-42")
		if thread.status != http.StatusOK {
			t.Fatalf("thread: %d %s", thread.status, thread.body)
		}
		var order []int
		for _, text := range []string{"My order is late.", "Sorry to hear that; which order?", "Order 7.", "It ships tomorrow."} {
			order = append(order, strings.Index(thread.body, text))
		}
		if slices.Contains(order, -1) || !slices.IsSorted(order) {
			t.Errorf("the turns' messages are not all there in order: %v", order)
		}
		if strings.Contains(thread.body, "Be brief.") || strings.Contains(thread.body, "Do you ship abroad?") {
			t.Error("the thread page shows the system prompt or another thread's turn")
		}
		if p := b.get("/ui/p/alice/p/threads/nope"); p.status != http.StatusNotFound {
			t.Errorf("an unknown thread: %d", p.status)
		}
		if p := b.get("/ui/p/alice/p/threads?offset=-1"); p.status != http.StatusBadRequest {
			t.Errorf("a negative offset: %d", p.status)
		}

		// From a call, its thread.
		detail := b.get("/ui/p/alice/p/traces/" + uuidN('f', 0) + "?call=" + first)
		if !strings.Contains(detail.body, `href="/ui/p/alice/p/threads/support-42"`) {
			t.Errorf("the call's detail does not link its thread:\n%s", detail.body)
		}

		other := s.browser(t)
		other.signIn("bob", s.bobKey)
		for _, path := range []string{"/ui/p/alice/p/threads", "/ui/p/alice/p/threads/support-42"} {
			if p := other.get(path); p.status != http.StatusForbidden || strings.Contains(p.body, "My order is late.") {
				t.Errorf("bob's %s: %d", path, p.status)
			}
		}
	})
}

// rowOfThread is the markup of one thread list row.
func rowOfThread(t *testing.T, body, threadID string) string {
	t.Helper()
	i := strings.Index(body, `<tr data-thread="`+threadID+`"`)
	if i < 0 {
		t.Fatalf("no row of thread %s in %s", threadID, body)
	}
	j := strings.Index(body[i:], "</tr>")
	return body[i : i+j]
}
