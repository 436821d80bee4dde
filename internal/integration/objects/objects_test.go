// Package objects_test drives the real server binary over HTTP the way the
// official Weave SDKs publish and read objects, tables and files.
package objects_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

func TestPublishAndReadLikeTheSDKs(t *testing.T) {
	t.Parallel()
	testdb.EachURL(t, testPublishAndRead)
}

func testPublishAndRead(t *testing.T, dbURL string) {
	srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL})
	c := e2e.Admin(srv)
	const project = "admin/e2e"

	// An op: its source goes up as a file, then the op object names the file
	// by the digest the SDK computes itself.
	source := []byte("function add(a, b) { return a + b; }")
	fileDigest := c.Upload(t, project, "blob", source)
	if fileDigest != digest.Bytes(source) {
		t.Fatalf("file digest %s; the SDK computes %s", fileDigest, digest.Bytes(source))
	}
	opVal := fmt.Sprintf(`{"_type":"CustomWeaveType","weave_type":{"type":"Op"},"files":{"obj.py":"%s"},"load_op":"NO_LOAD_OP"}`, fileDigest)
	var op struct{ Digest string }
	c.Call(t, http.MethodPost, "/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": "add", "val": json.RawMessage(opVal)}}, &op)
	if want, _ := digest.JSON([]byte(opVal)); op.Digest != want {
		t.Fatalf("op digest %s; want %s", op.Digest, want)
	}
	var content bytes.Buffer
	status, raw := c.Send(t, http.MethodPost, "/file/content", "application/json", []byte(fmt.Sprintf(`{"project_id":%q,"digest":%q}`, project, fileDigest)))
	content.Write(raw)
	if status != 200 || !bytes.Equal(content.Bytes(), source) {
		t.Fatalf("file/content: %d %q", status, raw)
	}

	// Dataset.save(): table/create, table/query, then the Dataset object.
	var table struct {
		Digest     string
		RowDigests []string `json:"row_digests"`
	}
	rows := []json.RawMessage{json.RawMessage(`{"q":"2+2","a":4}`), json.RawMessage(`{"q":"café ☕","a":1.5}`)}
	c.Call(t, http.MethodPost, "/table/create", map[string]any{"table": map[string]any{"project_id": project, "rows": rows}}, &table)
	var queried struct {
		Rows []struct {
			Digest string
			Val    json.RawMessage
		}
	}
	c.Call(t, http.MethodPost, "/table/query", map[string]any{"project_id": project, "digest": table.Digest}, &queried)
	if len(queried.Rows) != 2 || queried.Rows[1].Digest != table.RowDigests[1] || string(queried.Rows[1].Val) != `{"q":"café ☕","a":1.5}` {
		t.Fatalf("table/query = %+v", queried)
	}
	dsVal := fmt.Sprintf(`{"_type":"Dataset","_class_name":"Dataset","_bases":["Object","BaseModel"],"name":"qa","description":null,"rows":"weave:///%s/table/%s"}`, project, table.Digest)
	var ds struct{ Digest string }
	c.Call(t, http.MethodPost, "/obj/create", map[string]any{"obj": map[string]any{"project_id": project, "object_id": "qa", "val": json.RawMessage(dsVal)}}, &ds)

	// ObjectRef.get(): obj/read by the concrete digest; the SDK reads obj.val.
	var read struct {
		Obj struct {
			Val             json.RawMessage
			BaseObjectClass string `json:"base_object_class"`
			IsLatest        int    `json:"is_latest"`
		}
	}
	c.Call(t, http.MethodPost, "/obj/read", map[string]any{"project_id": project, "object_id": "qa", "digest": ds.Digest}, &read)
	if string(read.Obj.Val) != dsVal || read.Obj.BaseObjectClass != "Dataset" || read.Obj.IsLatest != 1 {
		t.Fatalf("obj/read = %+v", read.Obj)
	}
	// A dataset row ref as the SDK builds it, read through refs/read_batch.
	var refs struct{ Vals []json.RawMessage }
	c.Call(t, http.MethodPost, "/refs/read_batch", map[string]any{"refs": []string{fmt.Sprintf("weave:///%s/object/qa:%s/attr/rows/id/%s", project, ds.Digest, table.RowDigests[0])}}, &refs)
	if len(refs.Vals) != 1 || string(refs.Vals[0]) != `{"q":"2+2","a":4}` {
		t.Fatalf("refs/read_batch = %s", refs.Vals)
	}
	var stats struct {
		Tables []struct {
			Count            int
			StorageSizeBytes *int64 `json:"storage_size_bytes"`
		}
	}
	c.Call(t, http.MethodPost, "/table/query_stats_batch", map[string]any{"project_id": project, "digests": table.Digest, "include_storage_size": true}, &stats)
	if len(stats.Tables) != 1 || stats.Tables[0].Count != 2 || stats.Tables[0].StorageSizeBytes == nil {
		t.Fatalf("query_stats_batch = %+v", stats)
	}

	// The v2 routes.
	var v2op struct {
		ObjectID     string `json:"object_id"`
		VersionIndex int    `json:"version_index"`
	}
	c.Call(t, http.MethodPost, "/v2/admin/e2e/ops", map[string]any{"name": "scorer op", "source_code": "def f():\n    return 1\n"}, &v2op)
	if v2op.ObjectID != "scorer_op" || v2op.VersionIndex != 0 {
		t.Fatalf("v2 op = %+v", v2op)
	}
	var ev struct {
		EvaluationRef string `json:"evaluation_ref"`
	}
	c.Call(t, http.MethodPost, "/v2/admin/e2e/evaluations", map[string]any{"name": "e", "dataset": fmt.Sprintf("weave:///%s/object/qa:%s", project, ds.Digest)}, &ev)
	if ev.EvaluationRef == "" {
		t.Fatal("no evaluation_ref")
	}
}

// Two server processes on one PostgreSQL publish versions of one object at
// the same moment: version_index values come out 0..n-1, none twice.
func TestTwoServersPublishConcurrently(t *testing.T) {
	t.Parallel()
	url := testdb.PostgresURL(t)
	first := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
	second := serverproc.Start(t, serverproc.Options{DatabaseURL: url})
	clients := []e2e.Client{e2e.Admin(first), {URL: second.URL, Auth: e2e.Basic(first.Key)}}
	const perServer = 15
	var wg sync.WaitGroup
	var mu sync.Mutex
	indexes := map[int]string{}
	for s, c := range clients {
		for i := range perServer {
			wg.Add(1)
			go func() {
				defer wg.Done()
				val := fmt.Sprintf(`{"server":%d,"i":%d}`, s, i)
				payload := fmt.Sprintf(`{"obj":{"project_id":"admin/race","object_id":"hot","val":%s}}`, val)
				got, err := c.Do(http.MethodPost, "/obj/create", "application/json", []byte(payload), nil)
				var res struct {
					Digest       string
					VersionIndex int `json:"version_index"`
				}
				if err != nil || got.Status != 200 || json.Unmarshal(got.Body, &res) != nil {
					t.Errorf("obj/create: %v %d %s", err, got.Status, got.Body)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if other, dup := indexes[res.VersionIndex]; dup {
					t.Errorf("version_index %d given to %s and %s", res.VersionIndex, other, res.Digest)
				}
				indexes[res.VersionIndex] = res.Digest
			}()
		}
	}
	wg.Wait()
	var got []int
	for i := range indexes {
		got = append(got, i)
	}
	sort.Ints(got)
	for i, v := range got {
		if i != v {
			t.Fatalf("version indexes %v are not 0..%d", got, 2*perServer-1)
		}
	}
	if len(got) != 2*perServer {
		t.Fatalf("%d versions; want %d", len(got), 2*perServer)
	}
}
