package webui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// TestQueueForms makes and changes a queue and its specs through the UI's
// forms on every database: the queue is the one the API reads back, a spec
// is an AnnotationSpec object whose schema checks the values annotated, a
// spec saved from a queue's form is listed by the queue at its new version,
// an autosave answers with the call's feedback pane, bad forms are 4xx, and
// another entity's queues and specs are missing or refused.
func TestQueueForms(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		f := seedQueue(t, s)
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		csrf := b.csrf()

		b.get("/ui/p/alice/p/queues").mustContain(t, `href="/ui/p/alice/p/edit-queue" id="new-queue"`,
			`href="/ui/p/alice/p/edit-queue?id=`+f.queueID+`"`)
		b.get("/ui/p/alice/p/edit-queue").mustContain(t, `id="queue-form"`, `value="`+f.quality+`"`, `value="`+f.score+`"`, "Quality (quality)")

		// A new queue of two of the specs.
		saved := b.post("/ui/p/alice/p/queues", url.Values{"csrf": {csrf}, "name": {"Second <pass>"}, "description": {"by hand"},
			"spec": {f.quality, f.comment}})
		if saved.status != http.StatusSeeOther || !strings.HasPrefix(saved.header.Get("Location"), "/ui/p/alice/p/queues?saved=") {
			t.Fatalf("save a new queue: %d %v %s", saved.status, saved.header, saved.body)
		}
		newID := strings.TrimPrefix(saved.header.Get("Location"), "/ui/p/alice/p/queues?saved=")
		if q := s.readQueue(t, newID); q["name"] != "Second <pass>" || q["description"] != "by hand" || len(q["scorer_refs"].([]any)) != 2 {
			t.Fatalf("the new queue: %v", q)
		}

		// A new spec from the queue's form joins the queue; its schema
		// checks what is annotated.
		b.get("/ui/p/alice/p/edit-spec?queue="+newID).mustContain(t, `id="spec-form"`, `name="queue" value="`+newID+`"`)
		spec := b.post("/ui/p/alice/p/specs", url.Values{"csrf": {csrf}, "queue": {newID}, "id": {"tone"}, "label": {"Tone"},
			"description": {"How it sounds"}, "kind": {"choice"}, "options": {"calm\nrude\n\ncalm"}})
		if spec.status != http.StatusSeeOther || spec.header.Get("Location") != "/ui/p/alice/p/edit-queue?id="+newID {
			t.Fatalf("save a spec: %d %v %s", spec.status, spec.header, spec.body)
		}
		obj := s.api(t, s.aliceKey, "/obj/read", map[string]any{"project_id": "alice/p", "object_id": "tone", "digest": "latest"})["obj"].(map[string]any)
		val, _ := json.Marshal(obj["val"])
		if obj["base_object_class"] != "AnnotationSpec" || !strings.Contains(string(val), `"field_schema":{"enum":["calm","rude"],"type":"string"}`) ||
			!strings.Contains(string(val), `"name":"Tone"`) || !strings.Contains(string(val), `"_bases":["Object","BaseModel"]`) {
			t.Fatalf("the spec object: %v %s", obj["base_object_class"], val)
		}
		toneV1 := "weave:///alice/p/object/tone:" + obj["digest"].(string)
		refs := func() []any {
			return s.readQueue(t, newID)["scorer_refs"].([]any)
		}
		if got := refs(); len(got) != 3 || got[2] != toneV1 {
			t.Fatalf("the queue's specs after the new one: %v", got)
		}
		if status, body := s.apiSend(t, s.aliceKey, "/feedback/create", map[string]any{"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/" + f.calls[0],
			"feedback_type": "wandb.annotation.tone", "annotation_ref": toneV1, "payload": map[string]any{"value": "loud"}}); status != http.StatusBadRequest {
			t.Fatalf("a value outside the new spec's labels: %d %s", status, body)
		}

		// Editing the spec from the queue moves the queue to its new version.
		b.get("/ui/p/alice/p/edit-spec?name=tone&queue="+newID).mustContain(t, `name="existing" value="1"`, "calm\nrude\n", `<option value="choice" selected>`)
		b.post("/ui/p/alice/p/specs", url.Values{"csrf": {csrf}, "queue": {newID}, "id": {"tone"}, "existing": {"1"}, "label": {"Tone"},
			"kind": {"number"}, "min": {"1"}, "max": {"3"}, "integer": {"1"}})
		got := refs()
		if len(got) != 3 || got[2] == toneV1 || !strings.HasPrefix(got[2].(string), "weave:///alice/p/object/tone:") {
			t.Fatalf("the queue's specs after the edit: %v", got)
		}
		b.get("/ui/p/alice/p/edit-spec?name=tone").mustContain(t, `<option value="number" selected>`, `name="min" type="number" step="any" value="1"`,
			`name="integer" value="1" checked`)

		// Changing the queue: a new name, one spec left.
		b.get("/ui/p/alice/p/edit-queue?id="+newID).mustContain(t, `value="Second &lt;pass&gt;"`, `name="id" value="`+newID+`"`)
		b.post("/ui/p/alice/p/queues", url.Values{"csrf": {csrf}, "id": {newID}, "name": {"Second pass"}, "spec": {f.quality}})
		q := s.readQueue(t, newID)
		if q["name"] != "Second pass" || len(q["scorer_refs"].([]any)) != 1 || q["scorer_refs"].([]any)[0] != f.quality {
			t.Fatalf("the changed queue: %v", q)
		}

		// An annotation saved answers with the call's feedback pane, showing it.
		item := b.get("/ui/p/alice/p/queues/" + f.queueID).header.Get("Location")
		answer := b.htmxPost(item+"/annotation", csrf, url.Values{"spec": {f.quality}, "choice": {"1"}})
		answer.mustContain(t, `data-saved="saved"`, `id="feedback-`+f.calls[0]+`" aria-label="Feedback" hx-swap-oob="true"`, `<span class="label">quality</span>`)

		// Bad forms are 4xx and store nothing.
		bobProject := s.api(t, s.bobKey, "/annotation_queues", map[string]any{"project_id": "bob/q", "name": "bob's"})["id"].(string)
		bobSpec := s.publishSpec(t, s.bobKey, "bob/q", "secret", `{"name":"Secret","field_schema":{"type":"string"}}`)
		for _, bad := range []url.Values{
			{"name": {""}},
			{"name": {strings.Repeat("x", 1025)}},
			{"name": {"x"}, "spec": {bobSpec}},
			{"name": {"x"}, "spec": {"weave:///alice/p/object/nothing:abc"}},
			{"name": {"x"}, "spec": {"not a ref"}},
		} {
			bad.Set("csrf", csrf)
			if p := b.post("/ui/p/alice/p/queues", bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="queue-error"`) {
				t.Errorf("queue form %v: %d", bad, p.status)
			}
		}
		for _, bad := range []url.Values{
			{"id": {""}, "kind": {"boolean"}},
			{"id": {"a/b"}, "kind": {"boolean"}},
			{"id": {"x"}, "kind": {"choice"}, "options": {"one"}},
			{"id": {"x"}, "kind": {"number"}, "min": {"5"}, "max": {"1"}},
			{"id": {"x"}, "kind": {"number"}, "min": {"NaN"}},
			{"id": {"x"}, "kind": {"text"}, "max_length": {"0"}},
			{"id": {"x"}, "kind": {"schema"}, "schema": {`{"type": 7}`}},
			{"id": {"x"}, "kind": {"schema"}, "schema": {`{"$ref": "https://example.com/s.json"}`}},
			{"id": {"x"}, "kind": {"other"}},
		} {
			bad.Set("csrf", csrf)
			if p := b.post("/ui/p/alice/p/specs", bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="spec-error"`) {
				t.Errorf("spec form %v: %d %s", bad, p.status, p.body)
			}
		}
		if p := b.post("/ui/p/alice/p/queues", url.Values{"name": {"x"}}); p.status != http.StatusForbidden {
			t.Errorf("without CSRF: %d", p.status)
		}

		// Another entity's queue and spec are missing from alice's project;
		// bob's own forms on alice's project are refused.
		for _, path := range []string{"/ui/p/alice/p/edit-queue?id=" + bobProject, "/ui/p/alice/p/edit-spec?name=secret",
			"/ui/p/alice/p/edit-spec?queue=" + bobProject} {
			if p := b.get(path); p.status != http.StatusNotFound {
				t.Errorf("alice GET %s: %d", path, p.status)
			}
		}
		if p := b.post("/ui/p/alice/p/queues", url.Values{"csrf": {csrf}, "id": {bobProject}, "name": {"taken"}}); p.status != http.StatusNotFound {
			t.Errorf("alice changes bob's queue: %d %s", p.status, p.body)
		}
		if p := b.post("/ui/p/alice/p/specs", url.Values{"csrf": {csrf}, "queue": {bobProject}, "id": {"y"}, "kind": {"boolean"}}); p.status != http.StatusNotFound {
			t.Errorf("alice adds a spec to bob's queue: %d", p.status)
		}
		bob := s.browser(t)
		bob.signIn("", s.bobKey)
		bobCSRF := bob.csrf()
		for _, path := range []string{"/ui/p/alice/p/edit-queue", "/ui/p/alice/p/edit-queue?id=" + f.queueID, "/ui/p/alice/p/edit-spec?name=quality"} {
			if p := bob.get(path); p.status != http.StatusForbidden || strings.Contains(p.body, "Quality") {
				t.Errorf("bob GET %s: %d", path, p.status)
			}
		}
		for path, form := range map[string]url.Values{
			"/ui/p/alice/p/queues": {"csrf": {bobCSRF}, "id": {f.queueID}, "name": {"bob was here"}},
			"/ui/p/alice/p/specs":  {"csrf": {bobCSRF}, "id": {"quality"}, "existing": {"1"}, "kind": {"boolean"}},
		} {
			if p := bob.post(path, form); p.status != http.StatusForbidden {
				t.Errorf("bob POST %s: %d", path, p.status)
			}
		}
		if q := s.readQueue(t, f.queueID); q["name"] != "Review <b>me</b>" {
			t.Fatalf("alice's queue after bob: %v", q)
		}
	})
}

// readQueue reads a queue of alice/p through the API.
func (s *server) readQueue(t *testing.T, queueID string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/annotation_queues/"+url.PathEscape(queueID)+"?project_id=alice/p", nil)
	req.SetBasicAuth("api", s.aliceKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Queue map[string]any `json:"queue"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("read queue %s: %d %v", queueID, res.StatusCode, err)
	}
	return out.Queue
}
