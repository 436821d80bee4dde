package objects_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

func rawRows(rows ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r)
	}
	return out
}

func TestTables(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		rows := rawRows(`{"q":"b","s":{"n":2}}`, `{"q":"a","s":{"n":10}}`, `{"q":"b","s":{"n":2}}`, `{"q":"c"}`, `{"q":"d","s":{"n":-1.5}}`)
		created := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows}}))
		if len(created.RowDigests) != 5 || created.RowDigests[0] != created.RowDigests[2] || created.Digest != digest.Table(created.RowDigests) || len(created.Digest) != 64 {
			t.Fatalf("created = %+v", created)
		}
		// Rows are stored once per project.
		var stored int
		if err := db.NewSelect().Table("obj_table_rows").ColumnExpr("COUNT(*)").Where("project_id = ?", project).Scan(ctx, &stored); err != nil || stored != 4 {
			t.Fatalf("stored rows = %d (%v); want 4", stored, err)
		}
		// Creating it again is a no-op with the same digest.
		again := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows}}))
		if again.Digest != created.Digest {
			t.Fatalf("again = %s", again.Digest)
		}
		_, err := svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows, ExpectedDigest: ptr("nope")}})
		wantErr(t, err, objects.ErrDigestMismatch)
		_, err = svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rawRows(`[1]`)}})
		wantErr(t, err, weft.ErrInvalid)

		query := func(req objects.TableQueryReq) string {
			t.Helper()
			req.ProjectID, req.Digest = project, created.Digest
			res := must[*objects.TableQueryRes](t)(svc.TableQuery(ctx, &req))
			var out []string
			for _, r := range res.Rows {
				var v struct{ Q string }
				_ = json.Unmarshal(r.Val, &v)
				out = append(out, v.Q+string(rune('0'+r.OriginalIndex)))
			}
			return strings.Join(out, ",")
		}
		tests := []struct {
			name string
			req  objects.TableQueryReq
			want string
		}{
			{"table order", objects.TableQueryReq{}, "b0,a1,b2,c3,d4"},
			{"limit offset", objects.TableQueryReq{Limit: ptr(2), Offset: ptr(1)}, "a1,b2"},
			{"offset past the end", objects.TableQueryReq{Offset: ptr(9)}, ""},
			{"offset alone", objects.TableQueryReq{Offset: ptr(3)}, "c3,d4"},
			{"filter then offset", objects.TableQueryReq{Filter: &objects.TableRowFilter{RowDigests: []string{created.RowDigests[0], created.RowDigests[3]}}, Offset: ptr(1)}, "b2,c3"},
			{"filter", objects.TableQueryReq{Filter: &objects.TableRowFilter{RowDigests: []string{created.RowDigests[0], created.RowDigests[3]}}}, "b0,b2,c3"},
			{"sort dotted path, missing last", objects.TableQueryReq{SortBy: []objects.SortBy{{Field: "s.n"}}}, "d4,b0,b2,a1,c3"},
			{"sort desc then page", objects.TableQueryReq{SortBy: []objects.SortBy{{Field: "s.n", Direction: "desc"}}, Limit: ptr(2)}, "a1,b0"},
			{"two keys", objects.TableQueryReq{SortBy: []objects.SortBy{{Field: "q", Direction: "desc"}, {Field: "s.n"}}}, "d4,c3,b0,b2,a1"},
		}
		for _, tc := range tests {
			if got := query(tc.req); got != tc.want {
				t.Errorf("%s: %s; want %s", tc.name, got, tc.want)
			}
		}
		for _, field := range []string{"", ".a", "a.", "a..b"} {
			_, err := svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: created.Digest, SortBy: []objects.SortBy{{Field: field}}})
			wantErr(t, err, weft.ErrInvalid)
		}
		_, err = svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: "unknown"})
		wantErr(t, err, objects.ErrNotFound)

		// Stats.
		stats := must[*objects.TableQueryStatsRes](t)(svc.TableQueryStats(ctx, &objects.TableQueryStatsReq{ProjectID: project, Digest: created.Digest}))
		if stats.Count != 5 {
			t.Fatalf("count = %d", stats.Count)
		}
		empty := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rawRows()}}))
		if empty.Digest != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			t.Fatalf("empty table digest = %s", empty.Digest)
		}
		batch := must[*objects.TableQueryStatsBatchRes](t)(svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: project, Digests: []string{created.Digest, "unknown", created.Digest, empty.Digest}}))
		if len(batch.Tables) != 2 || batch.Tables[0].StorageSizeBytes != nil {
			t.Fatalf("batch = %+v", batch.Tables)
		}
		sized := must[*objects.TableQueryStatsBatchRes](t)(svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: project, Digests: []string{created.Digest}, IncludeStorageSize: true}))
		wantSize := 0
		for _, r := range rows {
			wantSize += len(r)
		}
		if len(sized.Tables) != 1 || sized.Tables[0].Count != 5 || sized.Tables[0].StorageSizeBytes == nil || *sized.Tables[0].StorageSizeBytes != int64(wantSize) {
			t.Fatalf("sized = %+v; want size %d", sized.Tables, wantSize)
		}

		// Update: append, insert, pop.
		updated := must[*objects.TableUpdateRes](t)(svc.TableUpdate(ctx, &objects.TableUpdateReq{ProjectID: project, BaseDigest: created.Digest, Updates: []objects.TableUpdateSpec{
			{Append: &objects.TableAppend{Row: json.RawMessage(`{"q":"e"}`)}},
			{Pop: &objects.TablePop{Index: 0}},
			{Insert: &objects.TableInsert{Index: 1, Row: json.RawMessage(`{"q":"f"}`)}},
		}}))
		res := must[*objects.TableQueryRes](t)(svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: updated.Digest}))
		var qs []string
		for _, r := range res.Rows {
			qs = append(qs, string(r.Val))
		}
		if got := strings.Join(qs, ""); got != `{"q":"a","s":{"n":10}}{"q":"f"}{"q":"b","s":{"n":2}}{"q":"c"}{"q":"d","s":{"n":-1.5}}{"q":"e"}` || len(updated.UpdatedRowDigests) != 2 {
			t.Fatalf("updated rows = %s (%v)", got, updated.UpdatedRowDigests)
		}
		_, err = svc.TableUpdate(ctx, &objects.TableUpdateReq{ProjectID: project, BaseDigest: created.Digest, Updates: []objects.TableUpdateSpec{{Pop: &objects.TablePop{Index: 5}}}})
		wantErr(t, err, weft.ErrInvalid)
		_, err = svc.TableUpdate(ctx, &objects.TableUpdateReq{ProjectID: project, BaseDigest: created.Digest, Updates: []objects.TableUpdateSpec{{}}})
		wantErr(t, err, weft.ErrInvalid)
		_, err = svc.TableUpdate(ctx, &objects.TableUpdateReq{ProjectID: project, BaseDigest: "unknown"})
		wantErr(t, err, objects.ErrNotFound)

		// From digests.
		fromDigests := must[*objects.TableCreateFromDigestsRes](t)(svc.TableCreateFromDigests(ctx, &objects.TableCreateFromDigestsReq{ProjectID: project, RowDigests: created.RowDigests}))
		if fromDigests.Digest != created.Digest {
			t.Fatalf("from digests = %s", fromDigests.Digest)
		}
		_, err = svc.TableCreateFromDigests(ctx, &objects.TableCreateFromDigestsReq{ProjectID: project, RowDigests: []string{"missing"}})
		wantErr(t, err, objects.ErrNotFound)

		// Tables are per project.
		_, err = svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: "acme/other", Digest: created.Digest})
		wantErr(t, err, objects.ErrNotFound)
	})
}

func TestFiles(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{MaxFileBytes: 16})
		ctx := context.Background()
		content := []byte("print('日本')\n")
		first := must[*objects.FileCreateRes](t)(svc.FileCreate(ctx, &objects.FileCreateReq{ProjectID: project, Name: "obj.py", Content: content}))
		if first.Digest != digest.Bytes(content) {
			t.Fatalf("digest = %s", first.Digest)
		}
		second := must[*objects.FileCreateRes](t)(svc.FileCreate(ctx, &objects.FileCreateReq{ProjectID: project, Name: "other.py", Content: content, ExpectedDigest: first.Digest}))
		if second.Digest != first.Digest {
			t.Fatal("re-upload changed the digest")
		}
		must[*objects.FileCreateRes](t)(svc.FileCreate(ctx, &objects.FileCreateReq{ProjectID: project, Content: nil}))
		got := must[*objects.FileContentRes](t)(svc.FileContent(ctx, &objects.FileContentReq{ProjectID: project, Digest: first.Digest}))
		if string(got.Content) != string(content) {
			t.Fatalf("content = %q", got.Content)
		}
		stats := must[*objects.FilesQueryStatsRes](t)(svc.FilesQueryStats(ctx, &objects.FilesQueryStatsReq{ProjectID: project}))
		if stats.TotalSizeBytes != int64(len(content)) {
			t.Fatalf("total = %d; want %d", stats.TotalSizeBytes, len(content))
		}
		_, err := svc.FileCreate(ctx, &objects.FileCreateReq{ProjectID: project, Content: make([]byte, 17)})
		wantErr(t, err, objects.ErrFileTooLarge)
		wantErr(t, err, weft.ErrTooLarge)
		_, err = svc.FileCreate(ctx, &objects.FileCreateReq{ProjectID: project, Content: []byte("x"), ExpectedDigest: "nope"})
		wantErr(t, err, objects.ErrDigestMismatch)
		_, err = svc.FileContent(ctx, &objects.FileContentReq{ProjectID: project, Digest: "nope"})
		wantErr(t, err, objects.ErrNotFound)
		_, err = svc.FileContent(ctx, &objects.FileContentReq{ProjectID: "acme/other", Digest: first.Digest})
		wantErr(t, err, objects.ErrNotFound)
	})
}

func TestRefsReadBatch(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		table := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rawRows(`{"in":1}`, `{"in":2.50}`)}}))
		inner := create(t, svc, "inner", `{"deep":{"x":[10,20,30]}}`)
		ds := create(t, svc, "ds", `{"_type":"Dataset","_class_name":"Dataset","_bases":["Object","BaseModel"],"rows":"weave:///acme/proj/table/`+table.Digest+`","inner":"trace:///acme/proj/object/inner:`+inner.Digest+`","a b":{"c/d":[true,{"k":"v"}]}}`)
		gone := create(t, svc, "gone", `1`)
		must[*objects.ObjDeleteRes](t)(svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "gone"}))
		base := "weave:///acme/proj/object/ds:" + ds.Digest
		res := must[*objects.RefsReadBatchRes](t)(svc.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: []string{
			"trace:///acme/proj/object/inner:" + inner.Digest,
			base + "/attr/rows/id/" + table.RowDigests[1],
			base + "/key/a%20b/key/c%2Fd/index/1/key/k",
			base + "/attr/inner/key/deep/key/x/index/-1",
			base + "/key/missing",
			base + "/attr/rows/id/nope",
			"weave:///acme/proj/object/gone:" + gone.Digest,
			"weave:///acme/proj/object/inner:latest",
		}}))
		want := []string{`{"deep":{"x":[10,20,30]}}`, `{"in":2.50}`, `"v"`, `30`, `null`, `null`, `null`, `{"deep":{"x":[10,20,30]}}`}
		for i, w := range want {
			if string(res.Vals[i]) != w {
				t.Errorf("val %d = %s; want %s", i, res.Vals[i], w)
			}
		}
		for _, bad := range []string{"weave:///acme/proj/table/" + table.Digest, "weave:///acme/proj/call/x", "not a ref", base + "/bogus/x"} {
			_, err := svc.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: []string{bad}})
			wantErr(t, err, weft.ErrInvalid)
		}
		_, err := svc.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: make([]string, 1001)})
		wantErr(t, err, weft.ErrInvalid)
		_, err = svc.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: []string{"weave:///acme/proj/object/nobody:abc"}})
		wantErr(t, err, objects.ErrNotFound)
	})
}

// hookAfter runs fn, once, after the first statement whose text contains
// marker has run on db.
type hookAfter struct {
	marker string
	fired  atomic.Bool
	fn     func()
}

func (h *hookAfter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (h *hookAfter) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if strings.Contains(e.Query, h.marker) && h.fired.CompareAndSwap(false, true) {
		h.fn()
	}
}

// TestLargeTableWrittenInShortStatements writes a table of more rows than
// one statement takes: while it is half written, another tenant's write
// commits (SQLite has one writer: a table written in one transaction kept
// it waiting) and the table is nowhere to be seen; a write that fails
// halfway leaves no table, and the same table created again is whole.
func TestLargeTableWrittenInShortStatements(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		rows := make([]json.RawMessage, 2500)
		rowDigests := make([]string, len(rows))
		for i := range rows {
			rows[i] = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
			v, err := digest.Parse(rows[i])
			if err != nil {
				t.Fatal(err)
			}
			rowDigests[i] = digest.Bytes(v.Canonical())
		}
		tableDigest := digest.Table(rowDigests)
		invisible := func() {
			t.Helper()
			_, err := svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: tableDigest})
			wantErr(t, err, objects.ErrNotFound)
			stats := must[*objects.TableQueryStatsBatchRes](t)(svc.TableQueryStatsBatch(ctx, &objects.TableQueryStatsBatchReq{ProjectID: project, Digests: []string{tableDigest}}))
			if len(stats.Tables) != 0 {
				t.Errorf("stats of a half-written table: %+v", stats.Tables)
			}
			ds := create(t, svc, "ds", `{"rows":"weave:///`+project+`/table/`+tableDigest+`"}`)
			vals := must[*objects.RefsReadBatchRes](t)(svc.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: []string{
				"weave:///" + project + "/object/ds:" + ds.Digest + "/attr/rows/id/" + rowDigests[0]}}))
			if string(vals.Vals[0]) != "null" {
				t.Errorf("a row of a half-written table is read: %s", vals.Vals[0])
			}
		}

		failing, cancel := context.WithCancel(ctx)
		db.AddQueryHook(&hookAfter{marker: `INSERT INTO "obj_table_entries"`, fn: func() {
			invisible()
			cancel()
		}})
		_, err := svc.TableCreate(failing, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows}})
		if err == nil {
			t.Fatal("a table/create whose context ended halfway succeeded")
		}
		invisible()

		rows = append(rows, json.RawMessage(`{"i":"last"}`))
		db.AddQueryHook(&hookAfter{marker: `INSERT INTO "obj_table_entries"`, fn: func() {
			other, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := svc.ObjCreate(other, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: "other/proj", ObjectID: "note", Val: json.RawMessage(`{"n":1}`)}}); err != nil {
				t.Errorf("another tenant's write while a table is written: %v", err)
			}
		}})
		for _, want := range []int{len(rows) - 1, len(rows)} { // the failed table again, then a larger one
			res := must[*objects.TableCreateRes](t)(svc.TableCreate(ctx, &objects.TableCreateReq{Table: objects.TableSchemaForInsert{ProjectID: project, Rows: rows[:want]}}))
			got := must[*objects.TableQueryRes](t)(svc.TableQuery(ctx, &objects.TableQueryReq{ProjectID: project, Digest: res.Digest}))
			if len(got.Rows) != want || string(got.Rows[want-1].Val) != string(rows[want-1]) {
				t.Fatalf("table of %d rows read back with %d", want, len(got.Rows))
			}
		}
	})
}
