package webui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestTraceListSelection: calls chosen in the trace list go to an annotation
// queue or become a dataset version (one row per call, its inputs and
// output); another entity's user, a form without its token, an empty or oversized selection, an unknown queue
// and another project's calls are refused or passed over.
func TestTraceListSelection(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		at := time.Now().UTC().Add(-time.Minute)
		for i, q := range []string{"refund?", "hello"} {
			callID, traceID := "0000000a-0000-7000-8000-00000000000"+string(rune('1'+i)), "0000000f-0000-7000-8000-00000000000"+string(rune('1'+i))
			s.callStart(t, s.aliceKey, "alice/p", callID, traceID, "", "answer", at.Add(time.Duration(i)*time.Second), map[string]any{"question": q})
			s.api(t, s.aliceKey, "/call/end", map[string]any{"end": map[string]any{"project_id": "alice/p", "id": callID,
				"ended_at": at.Add(time.Duration(i)*time.Second + time.Millisecond).Format(time.RFC3339Nano), "output": "answer " + q, "summary": map[string]any{}}})
		}
		s.callStart(t, s.bobKey, "bob/q", "0000000b-0000-7000-8000-000000000001", "0000000f-0000-7000-8000-000000000009", "", "secret", at, map[string]any{"secret": 1})
		one, two, bobs := "0000000a-0000-7000-8000-000000000001", "0000000a-0000-7000-8000-000000000002", "0000000b-0000-7000-8000-000000000001"
		queue := s.api(t, s.aliceKey, "/annotation_queues", map[string]any{"project_id": "alice/p", "name": "to review"})["id"].(string)

		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		base := "/ui/p/alice/p/"
		list := b.get(base)
		list.mustContain(t, `id="selection"`, `name="call" value="`+one+`" form="selection"`, `<option value="`+queue+`">to review</option>`,
			`formaction="`+base+`selection/dataset"`)

		form := url.Values{"call": {one, two, bobs}, "queue": {queue}}
		if got := b.post(base+"selection/queue", form); got.status != http.StatusForbidden {
			t.Fatalf("without the CSRF token: %d", got.status)
		}
		form.Set("csrf", b.csrf())
		sent := b.post(base+"selection/queue", form)
		if sent.status != http.StatusSeeOther || sent.header.Get("Location") != base+"queues/"+queue {
			t.Fatalf("to the queue: %d %s %s", sent.status, sent.header.Get("Location"), sent.body)
		}
		items := s.api(t, s.aliceKey, "/annotation_queues/"+queue+"/items/query", map[string]any{"project_id": "alice/p"})["items"].([]any)
		if len(items) != 2 {
			t.Fatalf("the queue holds %d items, not alice's two calls: %v", len(items), items)
		}
		if again := b.post(base+"selection/queue", form); again.status != http.StatusSeeOther {
			t.Fatalf("the same calls again: %d %s", again.status, again.body)
		}

		form.Set("dataset", "reviewed")
		made := b.post(base+"selection/dataset", form)
		if made.status != http.StatusSeeOther || !strings.HasPrefix(made.header.Get("Location"), base+"objects/reviewed/versions/") {
			t.Fatalf("to a dataset: %d %s %s", made.status, made.header.Get("Location"), made.body)
		}
		version := b.get(made.header.Get("Location"))
		version.mustContain(t, "reviewed", "Dataset")
		rows := s.api(t, s.aliceKey, "/obj/read", map[string]any{"project_id": "alice/p", "object_id": "reviewed", "digest": "latest"})["obj"].(map[string]any)["val"].(map[string]any)["rows"].(string)
		digest := rows[strings.LastIndex(rows, "/")+1:]
		got := s.api(t, s.aliceKey, "/table/query", map[string]any{"project_id": "alice/p", "digest": digest})["rows"].([]any)
		if len(got) != 2 {
			t.Fatalf("the dataset's rows: %v", got)
		}
		first := got[0].(map[string]any)["val"].(map[string]any)
		if first["question"] != "refund?" || first["output"] != "answer refund?" {
			t.Fatalf("the first row: %v", first)
		}

		for name, bad := range map[string]url.Values{
			"no call":        {"csrf": form["csrf"], "queue": {queue}},
			"no queue":       {"csrf": form["csrf"], "call": {one}},
			"unknown queue":  {"csrf": form["csrf"], "call": {one}, "queue": {"0000000e-0000-7000-8000-000000000001"}},
			"a NUL id":       {"csrf": form["csrf"], "call": {"a\x00b"}, "queue": {queue}},
			"too many calls": {"csrf": form["csrf"], "call": manyIDs(51), "queue": {queue}},
		} {
			if got := b.post(base+"selection/queue", bad); got.status < 400 || got.status >= 500 {
				t.Errorf("%s: %d", name, got.status)
			}
		}
		for name, bad := range map[string]url.Values{
			"no name":        {"csrf": form["csrf"], "call": {one}},
			"another's call": {"csrf": form["csrf"], "call": {bobs}, "dataset": {"stolen"}},
		} {
			if got := b.post(base+"selection/dataset", bad); got.status != http.StatusBadRequest {
				t.Errorf("%s: %d %s", name, got.status, got.body)
			}
		}

		bob := s.browser(t)
		bob.signIn("bob", s.bobKey)
		bobForm := url.Values{"csrf": {bob.csrf()}, "call": {one}, "queue": {queue}, "dataset": {"stolen"}}
		for _, action := range []string{"queue", "dataset"} {
			if got := bob.post(base+"selection/"+action, bobForm); got.status != http.StatusForbidden {
				t.Errorf("bob to alice's %s: %d", action, got.status)
			}
		}
	})
}

func manyIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strings.Repeat("x", i+1)
	}
	return ids
}
