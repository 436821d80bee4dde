package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

// /project/stats counts the bytes of the project's calls' JSON, its live
// object versions, its table rows and its files, each part only when asked
// for, and nothing of another project's.
func TestProjectStats(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newWeaveFixture(t, db)
		alice := basic("api", f.aliceKey)
		stats := func(body string) map[string]int64 {
			t.Helper()
			status, raw := post(t, f, alice, "/project/stats", body)
			var out map[string]int64
			if status != 200 || json.Unmarshal(raw, &out) != nil {
				t.Fatalf("%s: %d %s", body, status, raw)
			}
			return out
		}
		if got := stats(`{"project_id":"alice/p"}`); len(got) != 4 || got["trace_storage_size_bytes"] != 0 || got["files_storage_size_bytes"] != 0 {
			t.Fatalf("empty project: %v", got)
		}
		id := newUUID()
		// 13 bytes of inputs (é is two), 2 of attributes, 4 of output, 2 of summary.
		items := fmt.Sprintf(`{"batch":[{"mode":"start","req":{"start":{"project_id":"alice/p","id":%q,"trace_id":%q,"op_name":"op","started_at":"2026-05-01T12:00:00Z","inputs":{"x":"café"},"attributes":{}}}},`+
			`{"mode":"end","req":{"end":{"project_id":"alice/p","id":%q,"ended_at":"2026-05-01T12:00:01Z","output":"ok","summary":{}}}}]}`, id, id, id)
		if status, body := post(t, f, alice, "/call/upsert_batch", items); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if status, body := post(t, f, alice, "/obj/create", `{"obj":{"project_id":"alice/p","object_id":"o","val":{"a":1}}}`); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if status, body := post(t, f, alice, "/table/create", `{"table":{"project_id":"alice/p","rows":[{"r":1},{"r":2}]}}`); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		got := stats(`{"project_id":"alice/p"}`)
		if got["trace_storage_size_bytes"] != 13+2+4+2 || got["objects_storage_size_bytes"] == 0 || got["tables_storage_size_bytes"] == 0 {
			t.Errorf("stats: %v", got)
		}
		if got := stats(`{"project_id":"alice/p","include_trace_storage_size":false,"include_table_storage_size":false}`); got["trace_storage_size_bytes"] != 0 || got["tables_storage_size_bytes"] != 0 || got["objects_storage_size_bytes"] == 0 {
			t.Errorf("parts: %v", got)
		}
		if status, body := post(t, f, alice, "/project/stats", `{"project_id":"admin/p"}`); status != 403 {
			t.Errorf("another project: %d %s", status, body)
		}
	})
}
