package webui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// publishSpec stores an AnnotationSpec through the API and returns its ref.
func (s *server) publishSpec(t *testing.T, key, project, name, val string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(val), &v); err != nil {
		t.Fatal(err)
	}
	res := s.api(t, key, "/obj/create", map[string]any{"obj": map[string]any{
		"project_id": project, "object_id": name, "val": v, "builtin_object_class": "AnnotationSpec",
	}})
	return "weave:///" + project + "/object/" + name + ":" + res["digest"].(string)
}

// queueFixture is a queue of three calls of alice/p with three specs.
type queueFixture struct {
	queueID                 string
	calls                   []string
	quality, score, comment string
}

func seedQueue(t *testing.T, s *server) queueFixture {
	t.Helper()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f := queueFixture{}
	for i := range 3 {
		id := uuidN('a', i)
		s.callStart(t, s.aliceKey, "alice/p", id, uuidN('f', i), "", "chat", t0.Add(time.Duration(i)*time.Second), map[string]any{"question": "q" + string(rune('0'+i))})
		s.callEnd(t, s.aliceKey, "alice/p", id, t0.Add(time.Duration(i)*time.Second+time.Second), "answer", map[string]any{}, "")
		f.calls = append(f.calls, id)
	}
	f.quality = s.publishSpec(t, s.aliceKey, "alice/p", "quality", `{"name":"Quality","field_schema":{"type":"string","enum":["good","bad"]}}`)
	f.score = s.publishSpec(t, s.aliceKey, "alice/p", "score", `{"name":"Score","description":"1 is poor","field_schema":{"type":"integer","minimum":1,"maximum":5}}`)
	f.comment = s.publishSpec(t, s.aliceKey, "alice/p", "comment", `{"name":"Comment","field_schema":{"type":"string","maxLength":20}}`)
	res := s.api(t, s.aliceKey, "/annotation_queues", map[string]any{
		"project_id": "alice/p", "name": "Review <b>me</b>", "description": "weekly", "scorer_refs": []string{f.quality, f.score, f.comment},
	})
	f.queueID = res["id"].(string)
	s.api(t, s.aliceKey, "/annotation_queues/"+f.queueID+"/items", map[string]any{"project_id": "alice/p", "call_ids": f.calls})
	return f
}

var itemLocation = regexp.MustCompile(`^/ui/p/alice/p/queues/([^/]+)/items/([^/]+)$`)

// htmxPost posts a form as htmx does: the CSRF token in its header.
func (b *browser) htmxPost(path, csrf string, form url.Values) page {
	b.t.Helper()
	return b.post(path, form, "HX-Request", "true", "X-CSRF-Token", csrf)
}

// feedbackRows lists alice/p's feedback through the API.
func (s *server) feedbackRows(t *testing.T) []map[string]any {
	t.Helper()
	res := s.api(t, s.aliceKey, "/feedback/query", map[string]any{"project_id": "alice/p"})
	var rows []map[string]any
	for _, r := range res["result"].([]any) {
		rows = append(rows, r.(map[string]any))
	}
	return rows
}

func TestAnnotationQueue(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		f := seedQueue(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		csrf := b.csrf()

		list := b.get("/ui/p/alice/p/queues")
		list.mustContain(t, "Review &lt;b&gt;me&lt;/b&gt;", "weekly", `<progress max="3" value="0"`, "0 of 3 done",
			`href="/ui/p/alice/p/queues/`+f.queueID+`"`)

		// The queue opens at its first item.
		queue := "/ui/p/alice/p/queues/" + f.queueID
		resume := b.get(queue)
		m := itemLocation.FindStringSubmatch(resume.header.Get("Location"))
		if resume.status != http.StatusSeeOther || m == nil {
			t.Fatalf("resume: %d %v", resume.status, resume.header)
		}
		item1 := resume.header.Get("Location")
		first := b.get(item1)
		first.mustContain(t, "Item 1 of 3", `<legend class="field-label">Quality</legend>`, `type="number" name="value" value="" step="1" min="1" max="5"`,
			`maxlength="20"`, `class="call-detail" data-call="`+f.calls[0]+`"`, "q0", `data-action="next-item"`, `rel="next"`)
		first.mustNotContain(t, `rel="prev"`, " checked")

		// Autosave: a choice, then another one, replace the caller's value.
		save := item1 + "/annotation"
		p := b.htmxPost(save, csrf, url.Values{"spec": {f.quality}, "choice": {"0"}})
		if p.status != http.StatusOK || !strings.Contains(p.body, `data-saved="saved"`) {
			t.Fatalf("save quality: %d %s", p.status, p.body)
		}
		b.htmxPost(save, csrf, url.Values{"spec": {f.quality}, "choice": {"1"}}).mustContain(t, `data-saved="saved"`)
		b.htmxPost(save, csrf, url.Values{"spec": {f.score}, "value": {"4"}}).mustContain(t, `data-saved="saved"`)
		rows := s.feedbackRows(t)
		if len(rows) != 2 {
			t.Fatalf("one row per spec: %v", rows)
		}
		var quality map[string]any
		for _, r := range rows {
			if r["feedback_type"] == "wandb.annotation.quality" {
				quality = r
			}
		}
		payload, _ := json.Marshal(quality["payload"])
		aliceID := s.userID(t, s.aliceKey)
		if quality == nil || string(payload) != `{"value":"bad"}` || quality["annotation_ref"] != f.quality ||
			quality["weave_ref"] != "weave:///alice/p/call/"+f.calls[0] || quality["queue_id"] != f.queueID || quality["wb_user_id"] != aliceID {
			t.Fatalf("stored annotation: %v (alice is %s)", quality, aliceID)
		}

		// Values the spec refuses are not stored, and say why.
		for _, bad := range []url.Values{
			{"spec": {f.score}, "value": {"9"}},
			{"spec": {f.score}, "value": {"2.5"}},
			{"spec": {f.comment}, "value": {strings.Repeat("x", 21)}},
			{"spec": {f.quality}, "choice": {"7"}},
		} {
			p := b.htmxPost(save, csrf, bad)
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `data-saved="error"`) {
				t.Fatalf("%v: %d %s", bad, p.status, p.body)
			}
		}
		if p := b.htmxPost(save, csrf, url.Values{"spec": {"weave:///alice/p/object/other:x"}, "value": {"1"}}); p.status != http.StatusBadRequest {
			t.Fatalf("a spec not in the queue: %d %s", p.status, p.body)
		}
		// Clearing a field removes the caller's value.
		b.htmxPost(save, csrf, url.Values{"spec": {f.score}, "value": {""}}).mustContain(t, `data-saved="cleared"`)
		if rows := s.feedbackRows(t); len(rows) != 1 {
			t.Fatalf("after clearing the score: %v", rows)
		}
		b.htmxPost(save, csrf, url.Values{"spec": {f.comment}, "value": {"fine <i>"}}).mustContain(t, `data-saved="saved"`)

		// The page shows what was saved.
		again := b.get(item1)
		again.mustContain(t, `value="1" checked>`, `>fine &lt;i&gt;</textarea>`, `data-saved="saved"`)

		// Without the CSRF token, or from another site, nothing is saved.
		if p := b.post(save, url.Values{"spec": {f.quality}, "choice": {"0"}}, "HX-Request", "true"); p.status != http.StatusForbidden {
			t.Fatalf("without CSRF: %d", p.status)
		}
		if p := b.post(save, url.Values{"spec": {f.quality}, "choice": {"0"}, "csrf": {csrf}}, "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
			t.Fatalf("cross-site: %d", p.status)
		}

		// Without script the same form posts and comes back to the item.
		plain := b.post(save, url.Values{"spec": {f.score}, "value": {"3"}, "csrf": {csrf}})
		if plain.status != http.StatusSeeOther || plain.header.Get("Location") != item1 {
			t.Fatalf("plain form post: %d %v %s", plain.status, plain.header, plain.body)
		}
		b.get(item1).mustContain(t, `type="number" name="value" value="3"`)
		if p := b.post(save, url.Values{"spec": {f.score}, "value": {"x"}, "csrf": {csrf}}); p.status != http.StatusUnprocessableEntity ||
			!strings.Contains(p.body, "is not a number") {
			t.Fatalf("plain form post of a bad value: %d %s", p.status, p.body)
		}
		b.htmxPost(save, csrf, url.Values{"spec": {f.score}, "value": {""}}).mustContain(t, `data-saved="cleared"`)

		// Done: the queue goes on to its first unfinished item; so does a
		// fresh visit of the queue.
		done := b.post(item1+"/progress", url.Values{"csrf": {csrf}, "state": {"completed"}})
		if done.status != http.StatusSeeOther || done.header.Get("Location") != queue {
			t.Fatalf("done: %d %v", done.status, done.header)
		}
		item2 := b.get(queue).header.Get("Location")
		if item2 == item1 || itemLocation.FindStringSubmatch(item2) == nil {
			t.Fatalf("resume after done: %s", item2)
		}
		b.get(item2).mustContain(t, "Item 2 of 3", "1 of 3 done", `rel="prev"`, `class="call-detail" data-call="`+f.calls[1]+`"`)
		// Done twice is still just "go on".
		if p := b.post(item1+"/progress", url.Values{"csrf": {csrf}, "state": {"completed"}}); p.status != http.StatusSeeOther {
			t.Fatalf("done again: %d %s", p.status, p.body)
		}
		b.post(item2+"/progress", url.Values{"csrf": {csrf}, "state": {"skipped"}})
		item3 := b.get(queue).header.Get("Location")
		b.get(item3).mustContain(t, "Item 3 of 3", "2 of 3 done")
		b.post(item3+"/progress", url.Values{"csrf": {csrf}, "state": {"completed"}})
		b.get(queue).mustContain(t, "Every item of this queue is done.", "3 of 3 done")
		b.get("/ui/p/alice/p/queues").mustContain(t, "3 of 3 done")

		for path, status := range map[string]int{
			queue + "/items/nothing":                     http.StatusNotFound,
			"/ui/p/alice/p/queues/" + uuidN('9', 9):      http.StatusNotFound,
			queue + "/items/" + strings.Repeat("x", 200): http.StatusBadRequest,
			queue + "/items/x%00y":                       http.StatusBadRequest,
			"/ui/p/alice/p/queues/x%00y":                 http.StatusBadRequest,
			queue + "/items/%ff":                         http.StatusBadRequest,
		} {
			if p := b.get(path); p.status != status {
				t.Errorf("%s: %d, want %d", path, p.status, status)
			}
		}
		if p := b.post(item1+"/progress", url.Values{"csrf": {csrf}, "state": {"unstarted"}}); p.status != http.StatusBadRequest {
			t.Fatalf("a state the buttons do not send: %d", p.status)
		}

		// Another entity's member sees none of it and changes nothing.
		bob := s.browser(t)
		bob.signIn("", s.bobKey)
		bobCSRF := bob.csrf()
		for _, path := range []string{"/ui/p/alice/p/queues", queue, item1} {
			p := bob.get(path)
			if p.status != http.StatusForbidden || strings.Contains(p.body, "Review") {
				t.Fatalf("bob GET %s: %d", path, p.status)
			}
		}
		if p := bob.htmxPost(save, bobCSRF, url.Values{"spec": {f.quality}, "choice": {"0"}}); p.status != http.StatusForbidden {
			t.Fatalf("bob saves: %d", p.status)
		}
		if p := bob.post(item1+"/progress", url.Values{"csrf": {bobCSRF}, "state": {"completed"}}); p.status != http.StatusForbidden {
			t.Fatalf("bob progresses: %d", p.status)
		}
		if rows := s.feedbackRows(t); len(rows) != 2 {
			t.Fatalf("rows after bob: %v", rows)
		}
	})
}

// userID is the id of the user whose key is key.
func (s *server) userID(t *testing.T, key string) string {
	t.Helper()
	p, err := s.identity.Authenticate(t.Context(), "", key)
	if err != nil {
		t.Fatal(err)
	}
	return p.UserID
}
