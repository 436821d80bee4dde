package webui_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/slowclient"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		b := s.browser(t)

		p := b.get("/ui/p/alice/p/?status=error")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/signin?next="+url.QueryEscape("/ui/p/alice/p/?status=error") {
			t.Fatalf("signed out: %d %v", p.status, p.header)
		}
		p = b.get("/ui/signin")
		if p.status != http.StatusOK || !strings.Contains(p.header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("sign-in page: %d %v", p.status, p.header)
		}
		if p.header.Get("X-Frame-Options") != "DENY" || p.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("security headers: %v", p.header)
		}

		for _, bad := range []url.Values{
			{"key": {"wf_0123456789abcdef_wrong"}},
			{"key": {s.aliceKey}, "user": {"bob"}}, // a live key of another user
			{"key": {"'; DROP TABLE users; --"}},
		} {
			if p := b.post("/ui/signin", bad); p.status != http.StatusUnauthorized {
				t.Fatalf("bad sign-in %v: %d", bad, p.status)
			} else {
				p.mustContain(t, "do not match a live key")
			}
		}
		if p := b.post("/ui/signin", url.Values{"key": {""}}); p.status != http.StatusBadRequest {
			t.Fatalf("empty key: %d", p.status)
		}
		if p := b.post("/ui/signin", url.Values{"key": {s.aliceKey}}, "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
			t.Fatalf("sign-in from another site: %d", p.status)
		}

		p = b.post("/ui/signin", url.Values{"user": {"alice"}, "key": {s.aliceKey}, "next": {"/ui/p/alice/p/?status=error"}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/p/alice/p/?status=error" {
			t.Fatalf("sign-in: %d %v", p.status, p.header)
		}
		cookie := p.header.Get("Set-Cookie")
		for _, attr := range []string{"weft_session=", "HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="} {
			if !strings.Contains(cookie, attr) {
				t.Fatalf("cookie %q lacks %s", cookie, attr)
			}
		}
		if strings.Contains(cookie, "Secure") {
			t.Fatalf("cookie over plain HTTP is Secure: %q", cookie)
		}
		if p := b.post("/ui/signin", url.Values{"key": {s.aliceKey}, "next": {"//evil.example/x"}}); p.header.Get("Location") != "/" {
			t.Fatalf("open redirect: %v", p.header.Get("Location"))
		}
		b.get("/").mustContain(t, "alice", "Sign out")

		// Sign-out needs the session's CSRF token.
		token := b.csrf()
		if p := b.post("/ui/signout", url.Values{"csrf": {otherToken(token)}}); p.status != http.StatusForbidden {
			t.Fatalf("sign-out with a wrong token: %d", p.status)
		}
		if p := b.post("/ui/signout", url.Values{}); p.status != http.StatusForbidden {
			t.Fatalf("sign-out without a token: %d", p.status)
		}
		if p := b.post("/ui/signout", url.Values{"csrf": {token}}, "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
			t.Fatalf("sign-out from another site: %d", p.status)
		}
		if p := b.get("/"); p.status != http.StatusOK {
			t.Fatalf("refused sign-outs must leave the session: %d", p.status)
		}
		sessionURL, _ := url.Parse(s.URL)
		stolen := b.client.Jar.Cookies(sessionURL)
		if p := b.post("/ui/signout", url.Values{"csrf": {token}}); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/signin" {
			t.Fatalf("sign-out: %d %v", p.status, p.header)
		}
		if p := b.get("/"); p.status != http.StatusSeeOther {
			t.Fatalf("after sign-out: %d", p.status)
		}
		// The server revoked the session: a copy of the cookie opens nothing.
		replay := s.browser(t)
		replay.client.Jar.SetCookies(sessionURL, stolen)
		if p := replay.get("/"); p.status != http.StatusSeeOther {
			t.Fatalf("revoked cookie still works: %d", p.status)
		}
		// htmx requests are told where to go instead of getting a page.
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/ui/p/alice/p/calls/x", nil)
		req.Header.Set("HX-Request", "true")
		if p := replay.do(req); p.status != http.StatusUnauthorized || !strings.HasPrefix(p.header.Get("HX-Redirect"), "/ui/signin") {
			t.Fatalf("htmx without a session: %d %v", p.status, p.header)
		}
	})
}

func TestSessionEnds(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)

		expiring := s.browser(t)
		expiring.signIn("", s.aliceKey)
		s.clock.advance(webui.DefaultSessionTTL - time.Minute)
		if p := expiring.get("/"); p.status != http.StatusOK {
			t.Fatalf("before expiry: %d", p.status)
		}
		s.clock.advance(2 * time.Minute)
		if p := expiring.get("/"); p.status != http.StatusSeeOther {
			t.Fatalf("after expiry: %d", p.status)
		}

		// Revoking the API key ends the sessions opened with it.
		revoked := s.browser(t)
		revoked.signIn("", s.bobKey)
		if p := revoked.get("/"); p.status != http.StatusOK {
			t.Fatalf("bob: %d", p.status)
		}
		keyID := strings.SplitN(strings.TrimPrefix(s.bobKey, "wf_"), "_", 2)[0]
		if err := s.identity.RevokeAPIKey(context.Background(), keyID); err != nil {
			t.Fatal(err)
		}
		if p := revoked.get("/"); p.status != http.StatusSeeOther {
			t.Fatalf("after the key was revoked: %d", p.status)
		}
	})
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		now := time.Now().UTC()
		s.callStart(t, s.aliceKey, "alice/p", uuidN('a', 1), uuidN('a', 100), "", "alice_op", now, map[string]any{"secret": "alice-only"})
		s.callStart(t, s.bobKey, "bob/q", uuidN('b', 1), uuidN('b', 100), "", "bob_op", now, map[string]any{"secret": "bob-only"})

		alice := s.browser(t)
		alice.signIn("alice", s.aliceKey)
		home := alice.get("/")
		home.mustContain(t, "alice/p")
		home.mustNotContain(t, "bob/q")
		for _, path := range []string{
			"/ui/p/bob/q/",
			"/ui/p/bob/q/traces/" + uuidN('b', 100),
			"/ui/p/bob/q/calls/" + uuidN('b', 1),
			"/ui/p/bob/q/calls/" + uuidN('b', 1) + "/children",
			"/ui/p/bob/nothing-yet/",
		} {
			p := alice.get(path)
			if p.status != http.StatusForbidden {
				t.Fatalf("%s: %d", path, p.status)
			}
			p.mustContain(t, "403", "not a member of entity")
			p.mustNotContain(t, "bob-only", "bob_op")
		}
		// Once bob adds alice to his entity, his projects are hers to see.
		if err := s.identity.AddMember(context.Background(), "bob", "alice", "member"); err != nil {
			t.Fatal(err)
		}
		alice.get("/").mustContain(t, "bob/q")
		alice.get("/ui/p/bob/q/traces/"+uuidN('b', 100)).mustContain(t, "bob-only")

		for path, want := range map[string]int{
			"/ui/p/alice/p/traces/" + uuidN('a', 999): http.StatusNotFound,
			"/ui/nowhere":                                      http.StatusNotFound,
			"/ui/p/alice/p/?status=bogus":                      http.StatusBadRequest,
			"/ui/p/alice/p/?sort=inputs":                       http.StatusBadRequest,
			"/ui/p/alice/p/?from=yesterday":                    http.StatusBadRequest,
			"/ui/p/alice/p/?offset=-1":                         http.StatusBadRequest,
			"/ui/p/alice/p/traces/" + strings.Repeat("x", 200): http.StatusBadRequest,
		} {
			if p := alice.get(path); p.status != want {
				t.Errorf("%s: %d, want %d", path, p.status, want)
			}
		}
	})
}

// otherToken is token with its first character changed: a wrong token of the
// right shape.
func otherToken(token string) string {
	if token[0] == '0' {
		return "1" + token[1:]
	}
	return "0" + token[1:]
}

// TestSlowSignInGets408: a sign-in form that trickles in is refused with 408
// once Config.BodyReadTimeout has passed, before the client is done, and
// the connection is closed.
func TestSlowSignInGets408(t *testing.T) {
	t.Parallel()
	s := newServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) { ui.BodyReadTimeout = 300 * time.Millisecond })
	c, err := slowclient.Dial(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	form := []byte(url.Values{"key": {s.aliceKey}, "next": {"/ui/p/alice/p/"}}.Encode())
	res, err := c.Send(http.MethodPost, "/ui/signin", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, form, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusRequestTimeout || res.Sent == len(form) {
		t.Fatalf("%d after %d of %d bytes; want 408 before the form ends", res.Status, res.Sent, len(form))
	}
	if err := c.WaitClosed(); err != nil {
		t.Fatal(err)
	}
}

// TestUIRateLimit: a signed-in user's pages, the playground's runs included,
// take from the rate limit of the API key they signed in with, the same
// budget as the key's API calls: over it pages and API calls alike get 429
// with Retry-After (the playground's run as the JSON error its module shows),
// and another key is not held back.
func TestUIRateLimit(t *testing.T) {
	t.Parallel()
	s := newServer(t, testdb.SQLite(t), func(api *httpapi.Config, _ *webui.Config) {
		api.RateLimit = httpapi.RateLimit{PerSecond: 0.001, Burst: 4}
	})
	alice := s.browser(t)
	alice.signIn("alice", s.aliceKey) // signing in takes no token: no key is known yet
	csrf := alice.csrf()              // 1
	run := func() page {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/ui/p/alice/p/playground/run", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return alice.do(req)
	}
	for i, path := range []string{"/", "/ui/p/alice/p/"} { // 2, 3
		if p := alice.get(path); p.status != http.StatusOK {
			t.Fatalf("page %d within the burst: %d", i+2, p.status)
		}
	}
	// 4: within the budget the run reaches the playground, which has no
	// chat gateway here.
	if p := run(); p.status != http.StatusServiceUnavailable {
		t.Fatalf("a playground run within the burst: %d %s", p.status, p.body)
	}
	p := run()
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || !strings.HasPrefix(p.header.Get("Content-Type"), "application/json") {
		t.Fatalf("a playground run past the key's rate: %d, Retry-After %q, %s", p.status, p.header.Get("Retry-After"), p.body)
	}
	p.mustContain(t, `"message":"rate limit exceeded: retry in`)
	p = alice.get("/ui/p/alice/p/playground")
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("a page past the key's rate: %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	p.mustContain(t, "Too many requests")
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/calls/query_stats", strings.NewReader(`{"project_id":"alice/p"}`))
	req.SetBasicAuth("api", s.aliceKey)
	req.Header.Set("Content-Type", "application/json")
	if p := alice.do(req); p.status != http.StatusTooManyRequests {
		t.Fatalf("the key's API call after its pages spent the budget: %d", p.status)
	}
	bob := s.browser(t)
	bob.signIn("bob", s.bobKey)
	if p := bob.get("/"); p.status != http.StatusOK {
		t.Fatalf("another key's page: %d", p.status)
	}
}

// TestSecureSessionCookie: behind HTTPS the session cookie is a Secure
// "__Host-" cookie — when the operator says every request is
// (SecureCookies), or when a trusted proxy says this one is — and the
// plain-HTTP cookie name opens nothing there. X-Forwarded-Proto from an
// address that is not a trusted proxy is ignored.
func TestSecureSessionCookie(t *testing.T) {
	t.Parallel()
	signIn := func(s *server, header ...string) (cookie string) {
		t.Helper()
		p := s.browser(t).post("/ui/signin", url.Values{"key": {s.aliceKey}}, header...)
		if p.status != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", p.status)
		}
		return p.header.Get("Set-Cookie")
	}
	// home loads "/" with a Cookie header and reports whether it was signed in.
	home := func(s *server, cookie string, header ...string) bool {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/", nil)
		req.Header.Set("Cookie", cookie)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return s.browser(t).do(req).status == http.StatusOK
	}
	isSecure := func(cookie string) bool {
		return strings.HasPrefix(cookie, "__Host-weft_session=") && strings.Contains(cookie, "; Secure") && strings.Contains(cookie, "Path=/") && !strings.Contains(cookie, "Domain=")
	}
	pair := func(cookie string) string { v, _, _ := strings.Cut(cookie, ";"); return v }

	secure := newServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) { ui.SecureCookies = true })
	cookie := signIn(secure)
	if !isSecure(cookie) {
		t.Fatalf("SecureCookies: %q", cookie)
	}
	if !home(secure, pair(cookie)) {
		t.Fatal("SecureCookies: the __Host- cookie does not sign in")
	}
	if token := strings.TrimPrefix(pair(cookie), "__Host-"); home(secure, token) {
		t.Fatal("SecureCookies: the plain-HTTP cookie name signs in")
	}

	proxied := newServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) {
		ui.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	cookie = signIn(proxied, "X-Forwarded-Proto", "https")
	if !isSecure(cookie) {
		t.Fatalf("a trusted proxy's https: %q", cookie)
	}
	if !home(proxied, pair(cookie), "X-Forwarded-Proto", "https") {
		t.Fatal("a trusted proxy's https: the __Host- cookie does not sign in")
	}
	if cookie := signIn(proxied); isSecure(cookie) || strings.Contains(cookie, "Secure") {
		t.Fatalf("a trusted proxy's plain HTTP request: %q", cookie)
	}

	untrusted := newServer(t, testdb.SQLite(t), func(_ *httpapi.Config, ui *webui.Config) {
		ui.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	})
	if cookie := signIn(untrusted, "X-Forwarded-Proto", "https"); isSecure(cookie) || strings.Contains(cookie, "Secure") {
		t.Fatalf("X-Forwarded-Proto from an untrusted peer: %q", cookie)
	}
}
