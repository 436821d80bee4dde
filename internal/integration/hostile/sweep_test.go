package hostile

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/pgcontainer"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) {
	pgcontainer.Register()
	os.Exit(m.Run())
}

const maxBody = 1 << 20

// hostileTexts go into every free string field of otherwise well-formed requests.
var hostileTexts = []string{
	`'; DROP TABLE users; --`,
	`" OR ""="`,
	`%' OR 1=1 --`,
	`../../../../etc/passwd`,
	`..\..\windows\system32`,
	"nul\x00byte",
	`$where: {"$gt": ""}`,
	`payload.x; DELETE FROM calls`,
	"emoji 🧪 and ünïcödé and \u202e",
	strings.Repeat("long", 5000),
}

type client struct {
	t       *testing.T
	base    string
	auth    string
	retries int
}

type response struct {
	status int
	body   []byte
}

func (c client) do(method, path, contentType string, body []byte, header map[string]string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return response{status: res.StatusCode, body: b}
}

func basicAuth(key string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+key))
}

// admin runs a user/key/member command of the server binary.
func admin(t *testing.T, dbURL string, args ...string) string {
	t.Helper()
	cmd := exec.Command(serverproc.Binary(t), append(args, "-database-url", dbURL)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// snapshot reads every row of every table in the test's schema as text.
func snapshot(t *testing.T, db *weft.DB) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	var tables []string
	if err := db.NewSelect().Table("information_schema.tables").Column("table_name").
		Where("table_schema = current_schema()").Where("table_type = 'BASE TABLE'").Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	snap := map[string]map[string]bool{}
	for _, table := range tables {
		var rows []string
		if err := db.NewRaw(`SELECT row_to_json(t)::text FROM "`+strings.ReplaceAll(table, `"`, `""`)+`" AS t`).Scan(ctx, &rows); err != nil {
			t.Fatalf("snapshot %s: %v", table, err)
		}
		set := map[string]bool{}
		for _, r := range rows {
			set[r] = true
		}
		snap[table] = set
	}
	return snap
}

// TestHostileSweep drives every route of the real server with hostile requests:
// nothing answers 5xx, every error body is JSON, credentials and tenants are
// enforced, and no row stored before the sweep is changed or lost.
func TestHostileSweep(t *testing.T) {
	t.Parallel()
	dbURL := testdb.PostgresURL(t)
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: []string{"-max-body-bytes", fmt.Sprint(maxBody), "-log-level", "error"}})
	admin(t, dbURL, "user", "create", "alice")
	admin(t, dbURL, "user", "create", "bob")
	alice := client{t: t, base: srv.URL, auth: basicAuth(admin(t, dbURL, "key", "create", "alice"))}
	bob := client{t: t, base: srv.URL, auth: "Bearer " + admin(t, dbURL, "key", "create", "bob")}

	res := alice.do("GET", "/openapi.json", "", nil, nil)
	doc, routes, err := parseDocument(res.body)
	if err != nil || len(routes) == 0 {
		t.Fatalf("openapi: %v (%d routes)", err, len(routes))
	}

	check := func(r route, what string, got response, want func(int) bool) {
		t.Helper()
		if got.status >= 500 {
			t.Errorf("%s [%s]: %d %s", r, what, got.status, truncate(got.body))
			return
		}
		if got.status >= 400 && !json.Valid(got.body) {
			t.Errorf("%s [%s]: %d with a non-JSON body %q", r, what, got.status, truncate(got.body))
		}
		if want != nil && !want(got.status) {
			t.Errorf("%s [%s]: unexpected status %d %s", r, what, got.status, truncate(got.body))
		}
	}
	is := func(codes ...int) func(int) bool {
		return func(s int) bool {
			for _, c := range codes {
				if s == c {
					return true
				}
			}
			return false
		}
	}
	clientError := func(s int) bool { return s >= 400 && s < 500 }
	notSuccess := func(s int) bool { return s >= 400 }

	// Bob stores data first, in his own project: what must survive the sweep.
	bobIDs := map[string]bool{}
	for _, r := range routes {
		f := filler{doc: doc, project: "bob/p", text: "seed"}
		if got := send(bob, r, f, nil); got.status < 300 {
			collectIDs(got.body, bobIDs)
		}
	}
	// A second pass reaches what needs an id from the first (a model's log, a
	// queue's items).
	for _, r := range routes {
		if len(r.idParams()) == 0 || r.method == http.MethodDelete {
			continue
		}
		for id := range bobIDs {
			if got := send(bob, r, filler{doc: doc, project: "bob/p", text: "seed", id: id}, nil); got.status < 300 {
				collectIDs(got.body, bobIDs)
			}
		}
	}
	if len(bobIDs) == 0 {
		t.Fatal("seeding produced no resource ids")
	}
	db, err := weft.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := snapshot(t, db)

	for _, r := range routes {
		own := filler{doc: doc, project: "alice/p", text: "ok"}
		if r.secured() {
			check(r, "no credentials", send(client{t: t, base: srv.URL}, r, own, nil), is(401))
			check(r, "wrong key", send(client{t: t, base: srv.URL, auth: "Bearer wf_0123456789abcdef_00"}, r, own, nil), is(401))
			check(r, "garbage authorization", send(client{t: t, base: srv.URL, auth: "Basic %%%"}, r, own, nil), is(401))
		}
		if r.secured() && r.projectScoped(doc) {
			foreign := filler{doc: doc, project: "bob/p", text: "ok"}
			check(r, "another tenant's project", send(alice, r, foreign, map[string]string{"OpenAI-Project": "bob/p"}), notSuccess)
		}
		// Bob's resources, addressed by id: a route not scoped by a project must
		// refuse them; a project-scoped one looks them up in Alice's project.
		for id := range bobIDs {
			if len(r.idParams()) == 0 {
				break
			}
			var want func(int) bool
			if !r.projectScoped(doc) {
				want = notSuccess
			}
			check(r, "another tenant's resource "+id, send(alice, r, filler{doc: doc, project: "alice/p", text: "ok", id: id}, nil), want)
		}
		for _, text := range hostileTexts {
			check(r, "hostile string "+truncate([]byte(text)), send(alice, r, filler{doc: doc, project: "alice/p", text: text}, nil), nil)
		}
		if r.jsonBody == nil {
			continue
		}
		path := own.path(r)
		for name, body := range map[string]string{
			"malformed json": `{"project_id": "alice/p",`,
			"array body":     `[]`,
			"string body":    `"text"`,
			"number body":    `12`,
			"null body":      `null`,
			"empty body":     ``,
			"invalid utf-8":  "{\"project_id\": \"alice/p\", \"x\": \"\xff\xfe\"}",
			"nul in json":    "{\"project_id\": \"alice/p\u0000\"}",
			"huge number":    `{"project_id": "alice/p", "limit": 1e400, "n": 123456789012345678901234567890}`,
			"deep nesting":   `{"project_id": "alice/p", "x": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`,
			"wrong types":    `{"project_id": 5, "limit": "x", "batch": "y", "call_ids": {}, "digests": 7}`,
			"oversized body": `{"project_id": "alice/p", "pad": "` + strings.Repeat("x", maxBody+10) + `"}`,
		} {
			got := alice.do(r.method, path, "application/json", []byte(body), nil)
			switch name {
			case "oversized body":
				check(r, name, got, is(413))
			case "deep nesting":
				check(r, name, got, clientError)
			case "malformed json", "invalid utf-8", "nul in json", "wrong types", "array body", "string body", "number body":
				check(r, name, got, clientError)
			default:
				check(r, name, got, nil)
			}
		}
	}

	after := snapshot(t, db)
	for table, rows := range before {
		for row := range rows {
			if !after[table][row] {
				t.Errorf("table %s lost or changed a row stored before the sweep: %s", table, truncate([]byte(row)))
			}
		}
	}
	if t.Failed() {
		seen := map[string]bool{}
		for _, line := range strings.Split(srv.Output(), "\n") {
			if i := strings.Index(line, "internal error"); i >= 0 && !seen[line[i:]] {
				seen[line[i:]] = true
				t.Log(line[i:])
			}
		}
	}
	t.Logf("swept %d routes; %d of bob's resource ids tried", len(routes), len(bobIDs))
}

// send issues r with a body and parameters generated by f.
func send(c client, r route, f filler, header map[string]string) response {
	path := f.path(r)
	query := url.Values{}
	for _, p := range r.op.Parameters {
		if p.In == "query" && (p.Required || f.text != "ok") {
			query.Set(p.Name, fmt.Sprint(f.value(p.Name, p.Schema, 0)))
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	switch {
	case r.multipart != nil:
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for name, prop := range f.doc.resolve(r.multipart).Properties {
			if f.doc.resolve(prop).Format == "binary" {
				part, _ := w.CreateFormFile(name, f.text)
				_, _ = part.Write([]byte("file content " + f.text))
				continue
			}
			_ = w.WriteField(name, fmt.Sprint(f.value(name, prop, 0)))
		}
		_ = w.Close()
		return c.do(r.method, path, w.FormDataContentType(), buf.Bytes(), header)
	case r.jsonBody != nil:
		body, _ := json.Marshal(f.value("", r.jsonBody, 0))
		return c.do(r.method, path, "application/json", body, header)
	default:
		return c.do(r.method, path, "", nil, header)
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
