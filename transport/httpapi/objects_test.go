package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

type objectsClient struct {
	t    *testing.T
	base string
	auth string
}

// do sends a request and checks its status and a fragment of its body; no
// answer may be a 500.
func (c objectsClient) do(method, path, contentType string, payload []byte, wantStatus int, wantFragment string) []byte {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(payload))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != wantStatus || !bytes.Contains(got, []byte(wantFragment)) {
		c.t.Fatalf("%s %s %s: %d %s; want %d with %s", method, path, payload, res.StatusCode, got, wantStatus, wantFragment)
	}
	if res.StatusCode >= 500 {
		c.t.Fatalf("%s %s: server error %s", method, path, got)
	}
	return got
}

func (c objectsClient) post(path, body string, wantStatus int, wantFragment string) []byte {
	c.t.Helper()
	return c.do(http.MethodPost, path, "application/json", []byte(body), wantStatus, wantFragment)
}

func multipartFile(t *testing.T, fields map[string]string, content []byte) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if content != nil {
		part, err := w.CreateFormFile("file", "blob")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = part.Write(content)
	}
	_ = w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

func TestObjectsRoutes(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		identity, _, key := testIdentity(t, db)
		svc, err := objects.New(objects.Config{DB: db, MaxFileBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(Config{Identity: identity, Objects: svc, MaxBodyBytes: 64 << 10, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c := objectsClient{t: t, base: srv.URL, auth: basic("api", key)}
		anonymous := objectsClient{t: t, base: srv.URL}

		// obj/create, as the SDKs send it.
		val := `{"name": "p", "temperature": 1.0, "emoji": "😀"}`
		wantDigest, _ := digest.JSON([]byte(val))
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"prompt","val":`+val+`,"wb_user_id":"ignored"}}`, 200, `"digest":"`+wantDigest+`"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"prompt","val":`+val+`}}`, 200, `"version_index":0`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"prompt","val":{"name":"q"}}}`, 200, `"version_index":1`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"prompt","val":1,"expected_digest":"nope"}}`, 409, `"error_type":"DigestMismatchError"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"bad id","val":1}}`, 422, `"error_type":"InvalidFieldError"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"prompt","val":{"_type":"Model","_class_name":"Model","_bases":["Object","BaseModel"]}}}`, 400, `"error_type":"ObjectNameTypeCollision"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"x","val":1},"extra":1}`, 422, `"extra_forbidden"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"x"}}`, 422, `"missing"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p",`, 422, `"detail"`)
		c.post("/obj/create", `{"obj":{"project_id":"admin/p","object_id":"x","val":1}}`, 403, `"Forbidden"`)
		c.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"big","val":"`+strings.Repeat("x", 70<<10)+`"}}`, 413, `Request too large`)
		anonymous.post("/obj/create", `{"obj":{"project_id":"alice/p","object_id":"x","val":1}}`, 401, `"detail"`)

		// obj/read: exact text, latest, vN, metadata only, not found, deleted.
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt","digest":"`+wantDigest+`"}`, 200, `"val":{"name":"p","temperature":1.0,"emoji":"😀"}`)
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt","digest":"latest"}`, 200, `"is_latest":1`)
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt","digest":"v0","metadata_only":true}`, 200, `"val":{}`)
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt","digest":"v9"}`, 404, `"error_type":"NotFoundError"`)
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt"}`, 422, `"missing"`)
		c.post("/obj/read", `{"project_id":"admin/p","object_id":"prompt","digest":"v0"}`, 403, `"Forbidden"`)
		c.post("/objs/query", `{"project_id":"alice/p","filter":{"latest_only":true},"limit":10}`, 200, `"version_index":1`)
		c.post("/obj/delete", `{"project_id":"alice/p","object_id":"prompt","digests":["v1"]}`, 200, `{"num_deleted":1}`)
		c.post("/obj/read", `{"project_id":"alice/p","object_id":"prompt","digest":"v1"}`, 404, `"deleted_at":"`)
		c.post("/obj/delete", `{"project_id":"alice/p","object_id":"prompt","digests":["v1"]}`, 404, `"NotFoundError"`)

		// refs/read_batch.
		c.post("/refs/read_batch", `{"refs":["weave:///alice/p/object/prompt:`+wantDigest+`/key/emoji"]}`, 200, `{"vals":["\ud83d\ude00"]}`)
		c.post("/refs/read_batch", `{"refs":["weave:///admin/p/object/prompt:`+wantDigest+`"]}`, 403, `"Forbidden"`)
		c.post("/refs/read_batch", `{"refs":["weave:///alice/p/table/abc"]}`, 400, `"InvalidRequest"`)
		c.post("/refs/read_batch", `{"refs":"nope"}`, 422, `"detail"`)

		// Files: multipart create, raw content, stats, limits.
		source := []byte("def f():\n    return 1\n")
		ct, form := multipartFile(t, map[string]string{"project_id": "alice/p"}, source)
		c.do(http.MethodPost, "/file/create", ct, form, 200, `{"digest":"`+digest.Bytes(source)+`"}`)
		c.do(http.MethodPost, "/file/create", ct, form, 200, digest.Bytes(source))
		if got := c.post("/file/content", `{"project_id":"alice/p","digest":"`+digest.Bytes(source)+`"}`, 200, ""); !bytes.Equal(got, source) {
			t.Fatalf("file content = %q", got)
		}
		c.post("/file/content", `{"project_id":"alice/p","digest":"nope"}`, 404, `"NotFoundError"`)
		c.post("/files/query_stats", `{"project_id":"alice/p"}`, 200, `{"total_size_bytes":22}`)
		ct, form = multipartFile(t, map[string]string{"project_id": "alice/p"}, make([]byte, 2048))
		c.do(http.MethodPost, "/file/create", ct, form, 413, `"error_type":"InsertTooLarge"`)
		ct, form = multipartFile(t, map[string]string{"project_id": "alice/p", "expected_digest": "nope"}, source)
		c.do(http.MethodPost, "/file/create", ct, form, 409, `DigestMismatchError`)
		ct, form = multipartFile(t, map[string]string{"project_id": "admin/p"}, source)
		c.do(http.MethodPost, "/file/create", ct, form, 403, `"Forbidden"`)
		ct, form = multipartFile(t, map[string]string{"project_id": "alice/p"}, nil)
		c.do(http.MethodPost, "/file/create", ct, form, 422, `file`)
		ct, form = multipartFile(t, nil, source)
		c.do(http.MethodPost, "/file/create", ct, form, 422, `project_id`)
		c.post("/file/create", `{"project_id":"alice/p"}`, 422, `"detail"`)

		// Tables.
		var table objects.TableCreateRes
		_ = json.Unmarshal(c.post("/table/create", `{"table":{"project_id":"alice/p","rows":[{"a":1},{"a":2.0},{"a":1}]}}`, 200, `"row_digests"`), &table)
		c.post("/table/create", `{"table":{"project_id":"alice/p","rows":[{},1]}}`, 422, `{"detail":[{"loc":["body","table","rows",1],"msg":"Input should be a valid dictionary","type":"dict_type","input":1}]}`)
		c.post("/table/create", `{"table":{"project_id":"alice/p"}}`, 422, `"missing"`)
		c.post("/table/query", `{"project_id":"alice/p","digest":"`+table.Digest+`","limit":1,"offset":1}`, 200, `"val":{"a":2.0},"original_index":1`)
		c.post("/table/query", `{"project_id":"alice/p","digest":"`+table.Digest+`","sort_by":[{"field":"a.","direction":"asc"}]}`, 400, `"InvalidRequest"`)
		c.post("/table/query", `{"project_id":"alice/p","digest":"unknown"}`, 404, `"NotFoundError"`)
		c.post("/table/query_stats", `{"project_id":"alice/p","digest":"`+table.Digest+`"}`, 200, `{"count":3}`)
		got := c.post("/table/query_stats_batch", `{"project_id":"alice/p","digests":["`+table.Digest+`","unknown"]}`, 200, `{"tables":[{"count":3,"digest":"`+table.Digest+`"}]}`)
		if bytes.Contains(got, []byte("storage_size_bytes")) {
			t.Fatalf("storage size without asking: %s", got)
		}
		c.post("/table/query_stats_batch", `{"project_id":"alice/p","digests":"`+table.Digest+`","include_storage_size":true}`, 200, `"storage_size_bytes":23`)
		c.post("/table/query_stats_batch", `{"project_id":"alice/p","digests":5}`, 422, `digests`)
		c.post("/table/query_stats_batch", `{"project_id":"admin/p","digests":[]}`, 403, `"Forbidden"`)
		c.post("/table/update", `{"project_id":"alice/p","base_digest":"`+table.Digest+`","updates":[{"append":{"row":{"a":3}}},{"pop":{"index":0}}]}`, 200, `"updated_row_digests":["`)
		c.post("/table/update", `{"project_id":"alice/p","base_digest":"`+table.Digest+`","updates":[{"pop":{"index":9}}]}`, 400, `"InvalidRequest"`)
		c.post("/table/create_from_digests", `{"project_id":"alice/p","row_digests":["`+table.RowDigests[0]+`"]}`, 200, `"digest"`)

		// v2 ops and evaluations.
		c.post("/v2/alice/p/ops", `{"name":"my_op","source_code":"def f(): pass\n"}`, 200, `"object_id":"my_op","version_index":0`)
		c.post("/v2/alice/p/ops", `{"name":"my_op","source_code":"def f(): return 2\n"}`, 200, `"version_index":1`)
		c.post("/v2/alice/p/ops", `{"name":"a:b"}`, 422, `InvalidFieldError`)
		c.post("/v2/alice/p/ops", `{"nme":"x"}`, 422, `extra_forbidden`)
		c.post("/v2/admin/p/ops", `{"name":"x"}`, 403, `"Forbidden"`)
		list := c.do(http.MethodGet, "/v2/alice/p/ops?limit=1", "", nil, 200, `"code":"def f(): return 2\n"`)
		if n := bytes.Count(list, []byte("\n{")) + 1; n != 1 || !bytes.HasSuffix(list, []byte("}\n")) {
			t.Fatalf("list = %q", list)
		}
		c.do(http.MethodGet, "/v2/alice/p/ops/my_op/versions/v0", "", nil, 200, `"code":"def f(): pass\n"`)
		c.do(http.MethodGet, "/v2/alice/p/ops/nope/versions/latest", "", nil, 404, `NotFoundError`)
		c.do(http.MethodGet, "/v2/alice/p/ops?limit=-1", "", nil, 422, `limit`)
		c.do(http.MethodDelete, "/v2/alice/p/ops/my_op?digests=v0", "", nil, 200, `{"num_deleted":1}`)
		c.do(http.MethodGet, "/v2/alice/p/ops/my_op/versions/v0", "", nil, 404, `ObjectDeletedError`)
		c.do(http.MethodDelete, "/v2/admin/p/ops/my_op", "", nil, 403, `Forbidden`)
		c.post("/v2/alice/p/datasets", `{"name":"ds","rows":[{"q":1}]}`, 200, `"object_id":"ds"`)
		ev := c.post("/v2/alice/p/evaluations", `{"name":"ev","dataset":"weave:///alice/p/object/ds:latest","scorers":[]}`, 200, `"evaluation_ref":"weave:///alice/p/object/ev:`)
		if !bytes.Contains(ev, []byte(`"version_index":0`)) {
			t.Fatalf("evaluation = %s", ev)
		}
		c.post("/v2/alice/p/evaluations", `{"name":"ev"}`, 422, `missing`)
		c.do(http.MethodGet, "/v2/alice/p/evaluations/ev/versions/latest", "", nil, 200, `"evaluate_op":"weave:///alice/p/op/ev.evaluate:`)
		c.do(http.MethodGet, "/v2/alice/p/datasets", "", nil, 200, `"rows":"weave:///alice/p/table/`)
		c.post("/v2/alice/p/scorers", `{"name":"sc"}`, 200, `"object_id":"sc"`)
		c.post("/v2/alice/p/models", `{"name":"m","attributes":{"t":1}}`, 200, `"object_id":"m"`)
		c.do(http.MethodGet, "/v2/alice/p/models/m/versions/v0", "", nil, 200, `"attributes":{"t":1}`)
	})
}
