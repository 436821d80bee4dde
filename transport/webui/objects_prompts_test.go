package webui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// withGateway gives the UI a chat gateway that routes no model: enough for
// the playground's form.
func withGateway(t *testing.T) serverOption {
	gw, err := chat.New(chat.Config{Routing: &chat.Routing{}})
	if err != nil {
		t.Fatal(err)
	}
	return func(_ *httpapi.Config, ui *webui.Config) { ui.Chat = gw }
}

// publishPrompt stores a Weave prompt object as the SDKs publish it (class
// StringPrompt or MessagesPrompt, derived from Prompt) and returns its digest.
func (s *server) publishPrompt(t *testing.T, key, project, name, class string, members map[string]any) string {
	t.Helper()
	val := map[string]any{"_type": class, "_class_name": class, "_bases": []string{"Prompt", "Object", "BaseModel"}, "name": name, "description": nil}
	for k, v := range members {
		val[k] = v
	}
	return s.api(t, key, "/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": name, "val": val}})["digest"].(string)
}

// TestPromptVersions: a prompt's version history labels a version with an
// alias that moves when set on another (read back through the API by the
// alias), compares versions, and opens any version in the playground with
// its messages as the form; bad labels are 400, and another entity's
// prompts are missing or refused.
func TestPromptVersions(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, withGateway(t))
		v0 := s.publishPrompt(t, s.aliceKey, "alice/p", "greeting", "StringPrompt", map[string]any{"content": "Hello {name} <b>"})
		v1 := s.publishPrompt(t, s.aliceKey, "alice/p", "greeting", "StringPrompt", map[string]any{"content": "Good morning {name}"})
		s.publishPrompt(t, s.aliceKey, "alice/p", "chatty", "MessagesPrompt", map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Tell me about {topic}"}}})
		s.publishSpec(t, s.aliceKey, "alice/p", "quality", `{"name":"Quality","field_schema":{"type":"boolean"}}`)
		s.publishPrompt(t, s.bobKey, "bob/q", "secret", "StringPrompt", map[string]any{"content": "bob-only"})
		b := s.browser(t)
		b.signIn("", s.aliceKey)
		csrf := b.csrf()

		history := "/ui/p/alice/p/objects/greeting/versions"
		b.get(history).mustContain(t, `id="alias-form"`, `action="/ui/p/alice/p/objects/greeting/aliases"`,
			`href="/ui/p/alice/p/playground?prompt=greeting&amp;version=`+v0+`"`, `href="/ui/p/alice/p/playground?prompt=greeting&amp;version=`+v1+`"`,
			`<option value="`+v0+`">v0</option>`)
		b.get("/ui/p/alice/p/objects/greeting/diff?a=v0&b=v1").mustContain(t, "Hello {name}", "Good morning {name}")

		// "production" names v0, then moves to v1.
		aliasOf := func() string {
			t.Helper()
			obj := s.api(t, s.aliceKey, "/obj/read", map[string]any{"project_id": "alice/p", "object_id": "greeting", "digest": "production"})["obj"].(map[string]any)
			return obj["digest"].(string)
		}
		for _, digest := range []string{v0, v1} {
			p := b.post("/ui/p/alice/p/objects/greeting/aliases", url.Values{"csrf": {csrf}, "alias": {"production"}, "digest": {digest}})
			if p.status != http.StatusSeeOther || p.header.Get("Location") != history {
				t.Fatalf("set the alias: %d %v %s", p.status, p.header, p.body)
			}
			if got := aliasOf(); got != digest {
				t.Fatalf("production names %s, want %s", got, digest)
			}
		}
		page := b.get(history)
		if n := strings.Count(page.body, `data-alias="production"`); n != 1 {
			t.Fatalf("production is shown %d times", n)
		}
		page.mustContain(t, `<tr data-version="1">`)
		if i, j := strings.Index(page.body, `<tr data-version="1">`), strings.Index(page.body, `data-alias="production"`); j < i || j > strings.Index(page.body, `<tr data-version="0">`) {
			t.Fatal("production is not on v1's row")
		}

		// Any version opens in the playground, its messages the form.
		b.get("/ui/p/alice/p/playground?prompt=greeting&version="+v0).mustContain(t, `id="pg-prompt"`, "the prompt", ">greeting</a> v0",
			"Hello {name} &lt;b&gt;</textarea>")
		b.get("/ui/p/alice/p/playground?prompt=greeting&version=production").mustContain(t, "Good morning {name}</textarea>", "v1")
		b.get("/ui/p/alice/p/playground?prompt=chatty").mustContain(t, "Be brief.</textarea>", "Tell me about {topic}</textarea>")

		// Bad labels and versions are 4xx; other entities' prompts are
		// missing, and bob cannot label alice's.
		for form, status := range map[string]int{
			"latest":       http.StatusBadRequest,
			"two words":    http.StatusBadRequest,
			"-x":           http.StatusBadRequest,
			"ok:" + "nope": http.StatusBadRequest,
		} {
			if p := b.post("/ui/p/alice/p/objects/greeting/aliases", url.Values{"csrf": {csrf}, "alias": {form}, "digest": {v0}}); p.status != status {
				t.Errorf("alias %q: %d, want %d", form, p.status, status)
			}
		}
		if p := b.post("/ui/p/alice/p/objects/greeting/aliases", url.Values{"csrf": {csrf}, "alias": {"staging"}, "digest": {"nope"}}); p.status != http.StatusNotFound {
			t.Errorf("alias on a version that is not there: %d", p.status)
		}
		if p := b.post("/ui/p/alice/p/objects/greeting/aliases", url.Values{"alias": {"staging"}, "digest": {v0}}); p.status != http.StatusForbidden {
			t.Errorf("without CSRF: %d", p.status)
		}
		for _, path := range []string{"/ui/p/alice/p/playground?prompt=secret", "/ui/p/alice/p/playground?prompt=quality",
			"/ui/p/alice/p/playground?prompt=greeting&version=nope"} {
			if p := b.get(path); p.status != http.StatusNotFound || strings.Contains(p.body, "bob-only") {
				t.Errorf("GET %s: %d", path, p.status)
			}
		}
		bob := s.browser(t)
		bob.signIn("", s.bobKey)
		if p := bob.post("/ui/p/alice/p/objects/greeting/aliases", url.Values{"csrf": {bob.csrf()}, "alias": {"production"}, "digest": {v0}}); p.status != http.StatusForbidden {
			t.Errorf("bob labels alice's prompt: %d", p.status)
		}
		if p := bob.get("/ui/p/alice/p/playground?prompt=greeting"); p.status != http.StatusForbidden || strings.Contains(p.body, "Good morning") {
			t.Errorf("bob opens alice's prompt: %d", p.status)
		}
		if got := aliasOf(); got != v1 {
			t.Fatalf("after the refusals production names %s", got)
		}
	})
}
