package webui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

var (
	newKeyShown = regexp.MustCompile(`<code id="new-key" class="mono">(wf_[0-9a-f]+_[0-9a-f]+)</code>`)
	keyRowOf    = regexp.MustCompile(`<tr data-key="([0-9a-f]+)">`)
	priceAction = regexp.MustCompile(`action="(/ui/p/alice/p/settings/prices/[^"]+/delete)"`)
)

// TestSettings: the settings page lists the signed-in user's keys (this
// sign-in's marked), creates one shown once that then works on the API,
// revokes it (and only the user's own), lists the entity's members, and
// adds a project price, per million tokens, that prices a local model's
// usage in the trace list, and removes it; bad fields are 400s and another
// entity's project a 403.
func TestSettings(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		b := s.browser(t)
		b.signIn("alice", s.aliceKey)
		csrf := b.csrf()
		settings := b.get("/ui/p/alice/p/settings")
		settings.mustContain(t, "test <span class=\"muted\">(this sign-in)</span>", "<td>alice</td><td>owner</td>", "No prices of this project's own")
		if settings.header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", settings.header.Get("Cache-Control"))
		}

		created := b.post("/ui/p/alice/p/settings/keys", url.Values{"csrf": {csrf}, "name": {"ci"}})
		m := newKeyShown.FindStringSubmatch(created.body)
		if created.status != http.StatusOK || m == nil || created.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("create key: %d %s", created.status, created.body)
		}
		key := m[1]
		s.api(t, key, "/calls/query_stats", map[string]any{"project_id": "alice/p"})
		if b.get("/ui/p/alice/p/settings").body == created.body || strings.Contains(b.get("/ui/p/alice/p/settings").body, key) {
			t.Fatal("the new key is shown again")
		}
		keyID := weft.APIKeyID(key)
		if p := b.post("/ui/p/alice/p/settings/keys/"+keyID+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/p/alice/p/settings?revoked="+keyID {
			t.Fatalf("revoke: %d %v %s", p.status, p.header, p.body)
		}
		b.get("/ui/p/alice/p/settings?revoked="+keyID).mustContain(t, `The key “ci” is revoked`)
		if status := s.apiStatus(t, key, "/calls/query_stats", map[string]any{"project_id": "alice/p"}); status != http.StatusUnauthorized {
			t.Fatalf("a revoked key: %d", status)
		}
		b.get("/ui/p/alice/p/settings").mustContain(t, `<tr data-key="`+keyID+`">`, "revoked")
		// Bob's key is not alice's to revoke.
		bob := s.browser(t)
		bob.signIn("bob", s.bobKey)
		bobPage := bob.get("/ui/p/bob/p/settings")
		bobKeyID := keyRowOf.FindStringSubmatch(bobPage.body)
		if bobKeyID == nil {
			t.Fatalf("bob's settings: %d %s", bobPage.status, bobPage.body)
		}
		if p := b.post("/ui/p/alice/p/settings/keys/"+bobKeyID[1]+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusNotFound {
			t.Fatalf("alice revoking bob's key: %d", p.status)
		}
		s.api(t, s.bobKey, "/calls/query_stats", map[string]any{"project_id": "bob/p"})

		// A price of a local model prices its calls.
		if p := b.post("/ui/p/alice/p/settings/prices", url.Values{"csrf": {csrf}, "model": {"my-local"}, "prompt": {"2"}, "completion": {"8"}}); p.status != http.StatusSeeOther {
			t.Fatalf("add price: %d %s", p.status, p.body)
		}
		at := time.Now().UTC()
		s.callStart(t, s.aliceKey, "alice/p", uuidN('a', 0), uuidN('f', 0), "", "local.chat", at, map[string]any{"q": "hi"})
		s.callEnd(t, s.aliceKey, "alice/p", uuidN('a', 0), at.Add(time.Second), "hello",
			map[string]any{"usage": map[string]any{"my-local": map[string]any{"prompt_tokens": 1000, "completion_tokens": 100}}}, "")
		b.get("/ui/p/alice/p/").mustContain(t, "$0.002800")
		settings = b.get("/ui/p/alice/p/settings")
		settings.mustContain(t, `<tr data-price="my-local">`, `<td class="num">2</td>`, `<td class="num">8</td>`)
		for _, form := range []url.Values{
			{"model": {"m"}, "prompt": {"-1"}, "completion": {"1"}},
			{"model": {"m"}, "prompt": {"abc"}, "completion": {"1"}},
			{"model": {""}, "prompt": {"1"}, "completion": {"1"}},
			{"model": {"m"}, "prompt": {"1"}, "completion": {"1"}, "effective": {"yesterday"}},
		} {
			form.Set("csrf", csrf)
			if p := b.post("/ui/p/alice/p/settings/prices", form); p.status != http.StatusBadRequest {
				t.Errorf("price %v: %d", form, p.status)
			}
		}
		del := priceAction.FindStringSubmatch(settings.body)
		if del == nil {
			t.Fatal("no remove form for the price")
		}
		if p := bob.post(del[1], url.Values{"csrf": {bob.csrf()}}); p.status != http.StatusForbidden {
			t.Errorf("bob removing alice's price: %d", p.status)
		}
		if p := b.post(del[1], url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther {
			t.Fatalf("remove price: %d %s", p.status, p.body)
		}
		b.get("/ui/p/alice/p/settings").mustNotContain(t, `data-price="my-local"`)

		for _, p := range []page{
			bob.get("/ui/p/alice/p/settings"),
			bob.post("/ui/p/alice/p/settings/prices", url.Values{"csrf": {bob.csrf()}, "model": {"m"}, "prompt": {"1"}, "completion": {"1"}}),
		} {
			if p.status != http.StatusForbidden || strings.Contains(p.body, "owner") {
				t.Errorf("bob on alice's settings: %d", p.status)
			}
		}
	})
}
