package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

const maxBody = 1 << 20

// workers is how many requests the sweep keeps in flight per server.
const workers = 4

// response is an answer, or the error of a request that got none.
type response struct {
	status int
	body   []byte
	err    error
}

func do(c e2e.Client, method, path, contentType string, body []byte, header map[string]string) response {
	res, err := c.Do(method, path, contentType, body, header)
	return response{status: res.Status, body: res.Body, err: err}
}

// send issues a generated request with every optional member.
func send(c e2e.Client, q *request, header map[string]string) response {
	return sendKeeping(c, q, keepAll, header)
}

// sendKeeping issues a generated request with the optional members keep keeps.
func sendKeeping(c e2e.Client, q *request, keep func(*node) bool, header map[string]string) response {
	contentType, body := q.content(keep)
	return do(c, q.route.method, q.urlPath(), contentType, body, header)
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

// TestHostileSweep drives every route of the real server, on SQLite and on
// PostgreSQL, with hostile requests: nothing answers 5xx, every error body is
// JSON, text no JSON body may carry is refused before storage, credentials and
// tenants are enforced, and no row stored before the sweep is changed or lost.
func TestHostileSweep(t *testing.T) {
	t.Parallel()
	testdb.EachURL(t, sweep)
}

// failures collects what the sweep found, from many goroutines, and reports
// each distinct finding once.
type failures struct {
	mu    sync.Mutex
	found map[string]bool
}

func (f *failures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.found == nil {
		f.found = map[string]bool{}
	}
	f.found[fmt.Sprintf(format, args...)] = true
}

func (f *failures) report(t *testing.T) {
	const shown = 200
	var all []string
	for s := range f.found {
		all = append(all, s)
	}
	sort.Strings(all)
	for i, s := range all {
		if i == shown {
			t.Errorf("… and %d more", len(all)-shown)
			break
		}
		t.Error(s)
	}
}

// expect checks one answer: never a 5xx or a transport failure, a JSON body
// on every error, and want when it is not nil.
func (f *failures) expect(what string, got response, want func(int) bool) {
	switch {
	case got.err != nil:
		f.add("%s: %v", what, got.err)
	case got.status >= 500:
		f.add("%s: %d %s", what, got.status, truncate(got.body))
	case got.status >= 400 && !json.Valid(got.body):
		f.add("%s: %d with a non-JSON body %q", what, got.status, truncate(got.body))
	case want != nil && !want(got.status):
		f.add("%s: unexpected status %d %s", what, got.status, truncate(got.body))
	case got.status < 300 && itemFailed(got.body):
		f.add("%s: %d with an item that failed with a 5xx: %s", what, got.status, truncate(got.body))
	}
}

// itemFailed reports whether a batch answer holds an item error of status 5xx
// ({"res": [{"error": {"status": 500, …}}]}).
func itemFailed(body []byte) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["error"].(map[string]any); ok {
				if status, ok := e["status"].(float64); ok && status >= 500 {
					return true
				}
			}
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func is(codes ...int) func(int) bool {
	return func(s int) bool {
		for _, c := range codes {
			if s == c {
				return true
			}
		}
		return false
	}
}

func clientError(s int) bool { return s >= 400 && s < 500 }
func notSuccess(s int) bool  { return s >= 400 }

func sweep(t *testing.T, dbURL string) {
	start := time.Now()
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: []string{"-max-body-bytes", fmt.Sprint(maxBody), "-log-level", "error"}})
	admin(t, dbURL, "user", "create", "alice")
	admin(t, dbURL, "user", "create", "bob")
	alice := e2e.Client{URL: srv.URL, Auth: e2e.Basic(admin(t, dbURL, "key", "create", "alice"))}
	bob := e2e.Client{URL: srv.URL, Auth: e2e.Bearer(admin(t, dbURL, "key", "create", "bob"))}

	res := do(alice, "GET", "/openapi.json", "", nil, nil)
	doc, routes, err := parseDocument(res.body)
	if err != nil || len(routes) == 0 {
		t.Fatalf("openapi: %v (%d routes)", err, len(routes))
	}
	var found failures

	// Bob stores data first, in his own project: what must survive the sweep.
	// A second pass reaches what needs an id from the first (a model's log, a
	// queue's items).
	bobIDs := map[string]bool{}
	seed := generator{doc: doc, project: "bob/p", text: "seed"}
	for _, r := range routes {
		if got := send(bob, seed.request(r), nil); got.status < 300 {
			collectIDs(got.body, bobIDs)
		}
	}
	for _, r := range routes {
		if len(r.idParams()) == 0 || r.method == http.MethodDelete {
			continue
		}
		for _, id := range sortedKeys(bobIDs) {
			seed.id = id
			if got := send(bob, seed.request(r), nil); got.status < 300 {
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

	// Alice stores data of her own too, so that hostile requests can name
	// things that exist.
	own := generator{doc: doc, project: "alice/p", text: "ok"}
	aliceIDs := map[string]bool{}
	for _, r := range routes {
		if got := send(alice, own.request(r), nil); got.status < 300 {
			collectIDs(got.body, aliceIDs)
		}
	}
	plans := map[string]plan{}
	passing := 0
	for _, r := range routes {
		p := makePlan(alice, own, r, sortedKeys(aliceIDs))
		plans[r.String()] = p
		if p.passes {
			passing++
		} else if testing.Verbose() {
			t.Logf("%s: a plain request gets %d %s", r, p.got.status, truncate(p.got.body))
		}
		if r.secured() {
			found.expect(r.String()+" [no credentials]", send(e2e.Client{URL: srv.URL}, own.request(r), nil), is(401))
			found.expect(r.String()+" [wrong key]", send(e2e.Client{URL: srv.URL, Auth: "Bearer wf_0123456789abcdef_00"}, own.request(r), nil), is(401))
			found.expect(r.String()+" [garbage authorization]", send(e2e.Client{URL: srv.URL, Auth: "Basic %%%"}, own.request(r), nil), is(401))
		}
		if r.secured() && r.projectScoped(doc) {
			foreign := generator{doc: doc, project: "bob/p", text: "ok"}
			found.expect(r.String()+" [another tenant's project]", send(alice, foreign.request(r), map[string]string{"OpenAI-Project": "bob/p"}), notSuccess)
		}
		// Bob's resources, addressed by id: a route not scoped by a project must
		// refuse them; a project-scoped one looks them up in Alice's project.
		if len(r.idParams()) > 0 {
			for _, id := range sortedKeys(bobIDs) {
				var want func(int) bool
				if !r.projectScoped(doc) {
					want = notSuccess
				}
				g := own
				g.id = id
				found.expect(r.String()+" [another tenant's resource "+id+"]", send(alice, g.request(r), nil), want)
			}
		}
		if r.jsonBody != nil {
			malformedBodies(&found, alice, r, own.request(r).urlPath())
		}
	}

	// Hostile text, one slot at a time, then in every slot at once.
	type job struct {
		r    route
		slot int // -1: every slot
		h    hostile
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	requests := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				p := plans[j.r.String()]
				q := p.gen.request(j.r)
				slots, keep := q.slots, keepAll
				if j.slot >= 0 {
					s := slots[j.slot]
					slots, keep = slots[j.slot:j.slot+1], func(n *node) bool { return p.base[n.where] || s.keepPath(n) }
				}
				inBody := false
				for _, s := range slots {
					if s.put(j.h) != nil && s.inJSON {
						inBody = true
					}
				}
				where := "every slot"
				if j.slot >= 0 {
					where = slots[0].where
				}
				var want func(int) bool
				if j.h.badText && inBody && !j.r.ignoresUnknownMembers() {
					want = is(j.r.malformedStatus())
				}
				got := sendKeeping(alice, q, keep, nil)
				// A request line past net/http's header limit is refused by
				// the HTTP server itself, before any handler, with its own
				// plain-text 431: a clear 4xx no handler can shape.
				if got.status == http.StatusRequestHeaderFieldsTooLarge && len(q.urlPath()) > http.DefaultMaxHeaderBytes {
					got.body = []byte(`{}`)
				}
				found.expect(fmt.Sprintf("%s [%s in %s]", j.r, j.h.name, where), got, want)
				mu.Lock()
				requests++
				mu.Unlock()
			}
		}()
	}
	slots := 0
	for _, r := range routes {
		n := len(own.request(r).slots)
		slots += n
		for _, h := range hostiles {
			for i := range n {
				jobs <- job{r: r, slot: i, h: h}
			}
			jobs <- job{r: r, slot: -1, h: h}
		}
	}
	close(jobs)
	wg.Wait()

	after := snapshot(t, db)
	for table, rows := range before {
		for row := range rows {
			if !after[table][row] {
				found.add("table %s lost or changed a row stored before the sweep: %s", table, truncate([]byte(row)))
			}
		}
	}
	found.report(t)
	if t.Failed() {
		seen := map[string]bool{}
		for _, line := range strings.Split(srv.Output(), "\n") {
			if i := strings.Index(line, "internal error"); i >= 0 && !seen[line[i:]] && len(seen) < 50 {
				seen[line[i:]] = true
				t.Log(truncate([]byte(line[i:])))
			}
		}
	}
	t.Logf("swept %d routes (%d answer 2xx to a plain request), %d slots, %d hostile requests, %d of bob's resource ids, in %s",
		len(routes), passing, slots, requests, len(bobIDs), time.Since(start).Round(time.Second))
}

// plan is how a route's hostile requests are built: from a request that the
// server takes, as far as the sweep can tell, so that hostile text in one
// place is not hidden by a refusal of another.
type plan struct {
	gen generator
	// base holds the optional members every hostile request keeps.
	base   map[string]bool
	passes bool
	got    response
}

// makePlan picks, for r, an id of Alice's that the route finds (when it takes
// one), and the optional members to keep: all when the full request passes,
// else as many as can be kept while it passes, else none.
func makePlan(c e2e.Client, g generator, r route, ids []string) plan {
	p := plan{gen: g, base: map[string]bool{}}
	try := func() bool {
		keep := func(n *node) bool { return p.base[n.where] }
		p.got = sendKeeping(c, p.gen.request(r), keep, nil)
		p.passes = p.got.err == nil && p.got.status < 400
		return p.passes
	}
	optional := g.request(r).body.optionalMembers()
	for _, m := range optional {
		p.base[m] = true
	}
	if try() || r.method == http.MethodDelete {
		return p
	}
	// Name something of Alice's that exists, in the path, else in the body:
	// the first id the route finds.
	for _, named := range []*string{&p.gen.id, &p.gen.bodyID} {
		if p.got.status != http.StatusNotFound || named == &p.gen.id && len(r.idParams()) == 0 {
			continue
		}
		for _, id := range ids {
			*named = id
			if try() {
				return p
			}
			if p.got.status != http.StatusNotFound {
				break
			}
		}
		if p.got.status == http.StatusNotFound {
			*named = ""
			try()
		}
	}
	var removed []string
	for _, m := range optional {
		delete(p.base, m)
		removed = append(removed, m)
		if try() {
			break
		}
	}
	if !p.passes {
		return p
	}
	for _, m := range removed {
		p.base[m] = true
		if !try() {
			delete(p.base, m)
		}
	}
	try()
	return p
}

// malformedBodies sends bodies that are not the route's JSON.
func malformedBodies(found *failures, c e2e.Client, r route, path string) {
	// The cases whose faults are all in members no route knows, which OTLP
	// ignores.
	inUnknownMembers := map[string]bool{"invalid utf-8 in an unknown field": true, "lone surrogate in an unknown field": true, "wrong types": true}
	for _, tc := range []struct {
		name string
		body string
		want func(int) bool
	}{
		{"malformed json", `{"project_id": "alice/p",`, clientError},
		{"array body", `[]`, clientError},
		{"string body", `"text"`, clientError},
		{"number body", `12`, clientError},
		{"null body", `null`, nil},
		{"empty body", ``, nil},
		{"invalid utf-8 in an unknown field", "{\"project_id\": \"alice/p\", \"x\": \"\xff\xfe\"}", is(r.malformedStatus())},
		{"lone surrogate in an unknown field", `{"project_id": "alice/p", "x": "\udc00"}`, is(r.malformedStatus())},
		{"nul in json", "{\"project_id\": \"alice/p\u0000\"}", clientError},
		{"huge number", `{"project_id": "alice/p", "limit": 1e400, "n": 123456789012345678901234567890}`, nil},
		{"deep nesting", `{"project_id": "alice/p", "x": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, clientError},
		{"wrong types", `{"project_id": 5, "limit": "x", "batch": "y", "call_ids": {}, "digests": 7}`, clientError},
		{"oversized body", `{"project_id": "alice/p", "pad": "` + strings.Repeat("x", maxBody+10) + `"}`, is(413)},
	} {
		if r.ignoresUnknownMembers() && inUnknownMembers[tc.name] {
			tc.want = nil
		}
		found.expect(r.String()+" ["+tc.name+"]", do(c, r.method, path, "application/json", []byte(tc.body), nil), tc.want)
	}
}

// volatileColumns are the columns (table.column) the server rewrites by
// design as requests come: an API key's last use is written when it signs
// one.
var volatileColumns = map[string]bool{"api_keys.last_used_at": true}

// snapshot reads every row of every table as text, volatileColumns left
// out.
func snapshot(t *testing.T, db *weft.DB) map[string]map[string]bool {
	t.Helper()
	ctx := context.Background()
	var tables []string
	// Ordinary tables only: a full-text index's virtual table reads its
	// content from calls, and its shadow tables are storage it rewrites as it
	// merges segments.
	// The job queue's leader row is re-elected every few seconds by design.
	list := `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'river_leader'`
	if db.Dialect().Name().String() == "pg" {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'river_leader'`
	}
	if err := db.NewRaw(list).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	// The snapshot reads whole tables, every project at once: on Citus a
	// multi-shard read, which this connection allows for itself.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if db.Dialect().Name().String() == "pg" {
		if _, err := conn.ExecContext(ctx, "SET citus.multi_task_query_log_level = 'off'"); err != nil {
			t.Fatal(err)
		}
	}
	snap := map[string]map[string]bool{}
	for _, table := range tables {
		rows, err := conn.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`)
		if err != nil {
			t.Fatalf("snapshot %s: %v", table, err)
		}
		columns, _ := rows.Columns()
		set := map[string]bool{}
		for rows.Next() {
			values := make([]any, len(columns))
			pointers := make([]any, len(columns))
			for i := range values {
				pointers[i] = &values[i]
			}
			if err := rows.Scan(pointers...); err != nil {
				t.Fatalf("snapshot %s: %v", table, err)
			}
			var row strings.Builder
			for i, v := range values {
				if volatileColumns[table+"."+columns[i]] {
					continue
				}
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(&row, "%s=%q ", columns[i], fmt.Sprint(v))
			}
			set[row.String()] = true
		}
		if err := rows.Close(); err != nil {
			t.Fatalf("snapshot %s: %v", table, err)
		}
		snap[table] = set
	}
	return snap
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
