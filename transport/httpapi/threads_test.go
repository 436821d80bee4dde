package httpapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weftlabs/weft/internal/testdb"
)

// /threads/stream_query answers Weave's ThreadSchema lines: every field
// present (null where Weave's is), timestamps in RFC 3339, its sort names
// and a 4xx naming the supported ones otherwise, and only projects the key
// may read.
func TestThreadsStreamQuery(t *testing.T) {
	t.Parallel()
	f := newTraceFixture(t, testdb.SQLite(t))
	alice := basic("api", f.aliceKey)
	var items []string
	call := func(thread, started, ended string, turn bool) {
		id := newUUID()
		turnID := newUUID()
		if turn {
			turnID = id
		}
		items = append(items, fmt.Sprintf(`{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"op_name":"op","started_at":%q,"thread_id":%q,"turn_id":%q,"inputs":{},"attributes":{}}}}`,
			id, id, started, thread, turnID))
		if ended != "" {
			items = append(items, fmt.Sprintf(`{"mode":"end","req":{"end":{"project_id":"alice/p","id":%q,"ended_at":%q,"summary":{}}}}`, id, ended))
		}
	}
	call("a", "2026-05-01T12:00:00Z", "2026-05-01T12:00:00.100Z", true)
	call("a", "2026-05-01T12:00:01Z", "2026-05-01T12:00:01.300Z", true)
	call("a", "2026-05-01T12:00:02Z", "2026-05-01T12:00:09Z", false) // not a turn
	call("b", "2026-05-01T12:00:03Z", "", true)                      // running
	if status, body := post(t, f, alice, "/call/upsert_batch", `{"batch":[`+strings.Join(items, ",")+`]}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	lines := func(body string) []map[string]any {
		t.Helper()
		status, out := post(t, f, alice, "/threads/stream_query", body)
		if status != 200 {
			t.Fatalf("%s: %d %s", body, status, out)
		}
		var got []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got = append(got, m)
		}
		return got
	}
	got := lines(`{"project_id":"alice/p"}`)
	if len(got) != 2 {
		t.Fatalf("threads: %v", got)
	}
	// last_updated descending: b has none and comes last.
	a, b := got[0], got[1]
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"first_turn_id", "last_turn_id", "last_updated", "p50_turn_duration_ms", "p99_turn_duration_ms", "start_time", "thread_id", "turn_count"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if a["thread_id"] != "a" || a["turn_count"] != 2.0 || a["start_time"] != "2026-05-01T12:00:00Z" || a["last_updated"] != "2026-05-01T12:00:01.3Z" ||
		a["p50_turn_duration_ms"] != 200.0 || a["p99_turn_duration_ms"] != 298.0 {
		t.Errorf("thread a: %v", a)
	}
	if b["thread_id"] != "b" || b["turn_count"] != 1.0 || b["last_updated"] != nil || b["p50_turn_duration_ms"] != nil || b["last_turn_id"] != nil {
		t.Errorf("thread b: %v", b)
	}
	if got := lines(`{"project_id":"alice/p","sort_by":[{"field":"start_time","direction":"desc"}],"limit":1}`); len(got) != 1 || got[0]["thread_id"] != "b" {
		t.Errorf("start_time desc, limit 1: %v", got)
	}
	if got := lines(`{"project_id":"alice/p","filter":{"after_datetime":"2026-05-01T12:00:02Z"}}`); len(got) != 1 || got[0]["thread_id"] != "b" {
		t.Errorf("after: %v", got)
	}
	if got := lines(`{"project_id":"alice/p","filter":{"before_datetime":"2026-05-01T12:00:00.500Z"}}`); len(got) != 1 || got[0]["turn_count"] != 1.0 {
		t.Errorf("before: %v", got)
	}
	for _, tc := range []struct{ auth, body, want string }{
		{alice, `{"project_id":"alice/p","sort_by":[{"field":"turns","direction":"asc"}]}`, "Supported fields"},
		{alice, `{"project_id":"alice/p","limit":-1}`, ""},
		{alice, `{"project_id":"alice/p","nope":1}`, ""},
		{"", `{"project_id":"alice/p"}`, ""},
		{alice, `{"project_id":"bob/p"}`, ""},
	} {
		status, out := post(t, f, tc.auth, "/threads/stream_query", tc.body)
		if status < 400 || status >= 500 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %d %s", tc.body, status, out)
		}
	}
}
