package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/transport/httpapi"
	"github.com/weftlabs/weft/transport/webui"
)

// server is the UI in front of the API, over one database, with two users
// in two entities: alice (entity alice, project alice/p) and bob.
type server struct {
	*httptest.Server
	identity *weft.Identity
	clock    *clock
	aliceKey string
	bobKey   string
}

// clock is a settable time source for session expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// serverOption changes the Configs of a test server's API and UI.
type serverOption func(api *httpapi.Config, ui *webui.Config)

// newServer starts the UI and API on db, the UI held to the API's rate
// limit as weft serve does.
func newServer(t *testing.T, db *weft.DB, options ...serverOption) *server {
	t.Helper()
	ctx := context.Background()
	identity, err := weft.NewIdentity(weft.IdentityConfig{DB: db, CacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{identity: identity, clock: &clock{now: time.Now()}}
	for _, name := range []string{"alice", "bob"} {
		if _, err := identity.CreateUser(ctx, name, false); err != nil {
			t.Fatal(err)
		}
	}
	if s.aliceKey, err = identity.CreateAPIKey(ctx, "alice", "test"); err != nil {
		t.Fatal(err)
	}
	if s.bobKey, err = identity.CreateAPIKey(ctx, "bob", "test"); err != nil {
		t.Fatal(err)
	}
	feed := trace.NewFeed()
	traces, err := trace.New(trace.Config{DB: db, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := objects.New(objects.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	specs := feedback.ObjectSpecs(objs)
	fb, err := feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(traces), AnnotationSpecs: specs})
	if err != nil {
		t.Fatal(err)
	}
	apiCfg := httpapi.Config{Identity: identity, Trace: traces, Feedback: fb, Objects: objs}
	uiCfg := webui.Config{Identity: identity, Trace: traces, Feedback: fb, Objects: objs, AnnotationSpecs: specs, Feed: feed, Now: s.clock.Now}
	for _, o := range options {
		o(&apiCfg, &uiCfg)
	}
	api, err := httpapi.New(apiCfg)
	if err != nil {
		t.Fatal(err)
	}
	uiCfg.Fallback, uiCfg.RateLimiter = api, api
	ui, err := webui.New(uiCfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(ui)
	t.Cleanup(s.Close)
	return s
}

// api sends a JSON request to the API with key and decodes the answer.
func (s *server) api(t *testing.T, key, path string, body any) map[string]any {
	t.Helper()
	status, raw := s.apiSend(t, key, path, body)
	if status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, status, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// apiStatus sends a JSON request to the API with key and returns the
// answer's status.
func (s *server) apiStatus(t *testing.T, key, path string, body any) int {
	t.Helper()
	status, _ := s.apiSend(t, key, path, body)
	return status
}

func (s *server) apiSend(t *testing.T, key, path string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(b))
	req.SetBasicAuth("api", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// browser is an HTTP client with a cookie jar that does not follow redirects.
type browser struct {
	t      *testing.T
	s      *server
	client *http.Client
}

func (s *server) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, s: s, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// page is one answer: status, headers and body.
type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.s.URL+path, nil)
	return b.do(req)
}

// post submits a form the way a browser on this site does.
func (b *browser) post(path string, form url.Values, header ...string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.s.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// signIn signs in with key and fails the test unless it worked.
func (b *browser) signIn(user, key string) {
	b.t.Helper()
	p := b.post("/ui/signin", url.Values{"user": {user}, "key": {key}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
		b.t.Fatalf("sign-in: %d %v %s", p.status, p.header, p.body)
	}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token of the signed-in session from a page.
func (b *browser) csrf() string {
	b.t.Helper()
	p := b.get("/")
	m := csrfInput.FindStringSubmatch(p.body)
	if m == nil {
		b.t.Fatalf("no CSRF token on the home page: %d %s", p.status, p.body)
	}
	return m[1]
}

// mustContain fails unless every piece is in the page body.
func (p page) mustContain(t *testing.T, pieces ...string) {
	t.Helper()
	for _, piece := range pieces {
		if !strings.Contains(p.body, piece) {
			t.Fatalf("page (%d) lacks %q:\n%s", p.status, piece, p.body)
		}
	}
}

func (p page) mustNotContain(t *testing.T, pieces ...string) {
	t.Helper()
	for _, piece := range pieces {
		if strings.Contains(p.body, piece) {
			t.Fatalf("page (%d) has %q:\n%s", p.status, piece, p.body)
		}
	}
}

// callStart starts a call through the API.
func (s *server) callStart(t *testing.T, key, project, id, traceID, parent, op string, at time.Time, inputs any) {
	t.Helper()
	start := map[string]any{"project_id": project, "id": id, "trace_id": traceID, "op_name": op, "started_at": at.Format(time.RFC3339Nano), "inputs": inputs}
	if parent != "" {
		start["parent_id"] = parent
	}
	s.api(t, key, "/call/start", map[string]any{"start": start})
}

// callEnd ends a call through the API; exception "" means success.
func (s *server) callEnd(t *testing.T, key, project, id string, at time.Time, output any, summary map[string]any, exception string) {
	t.Helper()
	end := map[string]any{"project_id": project, "id": id, "ended_at": at.Format(time.RFC3339Nano), "output": output, "summary": summary}
	if exception != "" {
		end["exception"] = exception
	}
	s.api(t, key, "/call/end", map[string]any{"end": end})
}

func uuidN(prefix byte, n int) string {
	return fmt.Sprintf("0000000%c-0000-7000-8000-%012d", prefix, n)
}
