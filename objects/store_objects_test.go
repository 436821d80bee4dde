package objects_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

func TestObjectVersioning(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		v0 := create(t, svc, "cfg", `{"b": 1.50, "a": [1, 1.0]}`)
		if v0.VersionIndex != 0 || len(v0.Digest) != digest.Length {
			t.Fatalf("first version = %+v", v0)
		}
		// Same content, other text: same digest, no new version.
		again := create(t, svc, "cfg", `{"a":[1,1.0],"b":1.5}`)
		if again.Digest != v0.Digest || again.VersionIndex != 0 {
			t.Fatalf("re-publish = %+v; want %+v", again, v0)
		}
		v1 := create(t, svc, "cfg", `{"a": 2}`)
		if v1.VersionIndex != 1 || v1.Digest == v0.Digest {
			t.Fatalf("second version = %+v", v1)
		}

		got := read(t, svc, "cfg", v0.Digest)
		if string(got.Val) != `{"b": 1.50, "a": [1, 1.0]}` || got.IsLatest != 0 || got.VersionIndex != 0 || got.Kind != "object" {
			t.Fatalf("read v0 = %+v (val %s)", got, got.Val)
		}
		if got.PfUserID == nil || *got.PfUserID != "user-1" || got.BaseObjectClass != nil || got.SizeBytes == nil {
			t.Fatalf("read v0 metadata = %+v", got)
		}
		for _, version := range []string{"latest", "v1", v1.Digest} {
			if got := read(t, svc, "cfg", version); got.Digest != v1.Digest || got.IsLatest != 1 {
				t.Fatalf("read %s = %+v", version, got)
			}
		}
		meta := must[*objects.ObjReadRes](t)(svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: project, ObjectID: "cfg", Digest: "v0", MetadataOnly: true}))
		if string(meta.Obj.Val) != `{}` || meta.Obj.Digest != v0.Digest {
			t.Fatalf("metadata_only = %+v", meta.Obj)
		}
		for _, version := range []string{"v7", "nope", "v"} {
			_, err := svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: project, ObjectID: "cfg", Digest: version})
			wantErr(t, err, objects.ErrNotFound)
		}
		_, err := svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: project, ObjectID: "other", Digest: "latest"})
		wantErr(t, err, objects.ErrNotFound)

		// Deleting the latest moves is_latest to the newest live version.
		del := must[*objects.ObjDeleteRes](t)(svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "cfg", Digests: []string{"latest"}}))
		if del.NumDeleted != 1 {
			t.Fatalf("deleted %d", del.NumDeleted)
		}
		_, err = svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: project, ObjectID: "cfg", Digest: v1.Digest})
		wantErr(t, err, objects.ErrObjectDeleted)
		if fields := weft.ErrorFields(err); fields["deleted_at"] == nil || !strings.Contains(err.Error(), "cfg:v1 was deleted at") {
			t.Fatalf("deleted error %v has fields %v", err, fields)
		}
		if got := read(t, svc, "cfg", "latest"); got.Digest != v0.Digest || got.IsLatest != 1 {
			t.Fatalf("latest after delete = %+v", got)
		}
		// A new digest continues the sequence; the deleted digest keeps its index.
		v2 := create(t, svc, "cfg", `{"a": 3}`)
		if v2.VersionIndex != 2 {
			t.Fatalf("after delete: %+v", v2)
		}
		back := create(t, svc, "cfg", `{"a": 2}`)
		if back.VersionIndex != 1 || back.Digest != v1.Digest {
			t.Fatalf("resurrected = %+v", back)
		}
		if got := read(t, svc, "cfg", "latest"); got.Digest != v2.Digest {
			t.Fatalf("latest = %s; want v2", got.Digest)
		}

		// Deleting: unknown digests, partial matches, too many, all.
		_, err = svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "cfg", Digests: []string{"v0", "nope"}})
		wantErr(t, err, objects.ErrNotFound)
		_, err = svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "cfg", Digests: make([]string, 101)})
		wantErr(t, err, weft.ErrInvalid)
		all := must[*objects.ObjDeleteRes](t)(svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "cfg"}))
		if all.NumDeleted != 3 {
			t.Fatalf("deleted %d; want 3", all.NumDeleted)
		}
		_, err = svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "cfg"})
		wantErr(t, err, objects.ErrNotFound)
		_, err = svc.ObjRead(ctx, &objects.ObjReadReq{ProjectID: project, ObjectID: "cfg", Digest: "latest"})
		wantErr(t, err, objects.ErrObjectDeleted)
	})
}

func TestObjectCreateRules(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		createErr := func(objectID, val string, mod func(*objects.ObjSchemaForInsert)) error {
			in := objects.ObjSchemaForInsert{ProjectID: project, ObjectID: objectID, Val: json.RawMessage(val)}
			if mod != nil {
				mod(&in)
			}
			_, err := svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: in})
			return err
		}
		// Object ids.
		for _, id := range []string{"", "has space", "slash/x", "colon:x", strings.Repeat("x", 129)} {
			wantErr(t, createErr(id, `1`, nil), objects.ErrInvalidObjectID)
			wantErr(t, createErr(id, `1`, nil), weft.ErrValidation)
		}
		for _, id := range []string{"café_é.1-2", strings.Repeat("x", 128), "openai.chat.completions.create"} {
			if err := createErr(id, `1`, nil); err != nil {
				t.Fatalf("id %q: %v", id, err)
			}
		}
		wantErr(t, createErr("x", `1`, func(in *objects.ObjSchemaForInsert) { in.ProjectID = "noslash" }), weft.ErrInvalid)

		// expected_digest.
		d, _ := digest.JSON([]byte(`{"k": "v"}`))
		wantErr(t, createErr("exp", `{"k":"v"}`, func(in *objects.ObjSchemaForInsert) { in.ExpectedDigest = ptr("wrong") }), objects.ErrDigestMismatch)
		wantErr(t, createErr("exp", `{"k":"v"}`, func(in *objects.ObjSchemaForInsert) { in.ExpectedDigest = ptr("wrong") }), weft.ErrConflict)
		if err := createErr("exp", `{"k":"v"}`, func(in *objects.ObjSchemaForInsert) { in.ExpectedDigest = &d }); err != nil {
			t.Fatal(err)
		}

		// Class processing.
		scorer := create(t, svc, "my-scorer", `{"_type":"MyScorer","_class_name":"MyScorer","_bases":["Scorer","Object","BaseModel"],"name":"s"}`)
		got := read(t, svc, "my-scorer", scorer.Digest)
		if deref(got.BaseObjectClass) != "Scorer" || deref(got.LeafObjectClass) != "MyScorer" || got.Kind != "object" {
			t.Fatalf("scorer classes = %v/%v", got.BaseObjectClass, got.LeafObjectClass)
		}
		ds := create(t, svc, "ds", `{"_type":"Dataset","_class_name":"Dataset","_bases":["Object","BaseModel"],"rows":"weave:///acme/proj/table/x"}`)
		if got := read(t, svc, "ds", ds.Digest); deref(got.BaseObjectClass) != "Dataset" || deref(got.LeafObjectClass) != "Dataset" {
			t.Fatalf("dataset classes = %+v", got)
		}
		op := create(t, svc, "my.op", `{"_type":"CustomWeaveType","weave_type":{"type":"Op"},"files":{"obj.py":"x"}}`)
		if got := read(t, svc, "my.op", op.Digest); got.Kind != "op" || got.BaseObjectClass != nil {
			t.Fatalf("op = %+v", got)
		}
		wantErr(t, createErr("ds2", `{"_type":"Dataset","_class_name":"Dataset","_bases":["Object","BaseModel"]}`,
			func(in *objects.ObjSchemaForInsert) { in.BuiltinObjectClass = ptr("Model") }), weft.ErrInvalid)
		wantErr(t, createErr("b1", `[1]`, func(in *objects.ObjSchemaForInsert) { in.BuiltinObjectClass = ptr("Leaderboard") }), weft.ErrInvalid)
		wantErr(t, createErr("b2", `{}`, func(in *objects.ObjSchemaForInsert) { in.SetBaseObjectClass = ptr("NoSuchClass") }), weft.ErrInvalid)
		if err := createErr("board", `{"name":"lb","columns":[]}`, func(in *objects.ObjSchemaForInsert) { in.BuiltinObjectClass = ptr("Leaderboard") }); err != nil {
			t.Fatal(err)
		}
		board := read(t, svc, "board", "latest")
		if deref(board.BaseObjectClass) != "Leaderboard" || !strings.Contains(string(board.Val), `"_class_name":"Leaderboard"`) {
			t.Fatalf("builtin = %+v %s", board, board.Val)
		}
		wantErr(t, createErr("plain", `{"a":`, nil), weft.ErrInvalid)
		for _, path := range []string{"../x.py", "a/../../b", "/etc/passwd", `..\\x`} {
			files, _ := json.Marshal(map[string]string{path: "d"})
			wantErr(t, createErr("files", `{"_type":"CustomWeaveType","weave_type":{"type":"Op"},"files":`+string(files)+`}`, nil), weft.ErrInvalid)
		}
		if err := createErr("files", `{"_type":"CustomWeaveType","weave_type":{"type":"Op"},"files":{"dir/obj..py":"d"}}`, nil); err != nil {
			t.Fatal(err)
		}

		// A name used by another base class or kind.
		wantErr(t, createErr("ds", `{"_type":"Model","_class_name":"Model","_bases":["Object","BaseModel"]}`, nil), objects.ErrNameTypeCollision)
		wantErr(t, createErr("ds", `{"plain":true}`, nil), objects.ErrNameTypeCollision)
		wantErr(t, createErr("my.op", `{"plain":true}`, nil), objects.ErrNameTypeCollision)
		// Once every version is deleted the name is free again.
		must[*objects.ObjDeleteRes](t)(svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "ds"}))
		if err := createErr("ds", `{"plain":true}`, nil); err != nil {
			t.Fatal(err)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// Digests of stored objects are the Python reference digests of the golden file.
func TestObjectDigestsMatchGolden(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../internal/digest/testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Objects []struct{ Input, Digest string }
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		for i, o := range g.Objects {
			res := create(t, svc, fmt.Sprintf("golden-%d", i), o.Input)
			if res.Digest != o.Digest {
				t.Errorf("digest of %s = %s; want %s", o.Input, res.Digest, o.Digest)
			}
			if got := read(t, svc, res.ObjectID, res.Digest); string(got.Val) != o.Input {
				t.Errorf("stored %s; sent %s", got.Val, o.Input)
			}
		}
	})
}

func TestObjsQuery(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		create(t, svc, "b-model", `{"_type":"Model","_class_name":"Model","_bases":["Object","BaseModel"],"v":1}`)
		create(t, svc, "b-model", `{"_type":"Model","_class_name":"Model","_bases":["Object","BaseModel"],"v":2}`)
		create(t, svc, "a-op", `{"_type":"CustomWeaveType","weave_type":{"type":"Op"},"files":{}}`)
		create(t, svc, "c-plain", `[1,2]`)
		gone := create(t, svc, "d-gone", `"x"`)
		must[*objects.ObjDeleteRes](t)(svc.ObjDelete(ctx, &objects.ObjDeleteReq{ProjectID: project, ObjectID: "d-gone", Digests: []string{gone.Digest}}))

		ids := func(req objects.ObjsQueryReq) string {
			req.ProjectID = project
			res := must[*objects.ObjsQueryRes](t)(svc.ObjsQuery(ctx, &req))
			var out []string
			for _, o := range res.Objs {
				out = append(out, fmt.Sprintf("%s:v%d", o.ObjectID, o.VersionIndex))
			}
			return strings.Join(out, ",")
		}
		tests := []struct {
			name string
			req  objects.ObjsQueryReq
			want string
		}{
			{"all live, created_at order", objects.ObjsQueryReq{}, "b-model:v0,b-model:v1,a-op:v0,c-plain:v0"},
			{"ops", objects.ObjsQueryReq{Filter: &objects.ObjectVersionFilter{IsOp: ptr(true)}}, "a-op:v0"},
			{"not ops, latest", objects.ObjsQueryReq{Filter: &objects.ObjectVersionFilter{IsOp: ptr(false), LatestOnly: ptr(true)}}, "b-model:v1,c-plain:v0"},
			{"base class", objects.ObjsQueryReq{Filter: &objects.ObjectVersionFilter{BaseObjectClasses: []string{"Model"}}}, "b-model:v0,b-model:v1"},
			{"exclude base class", objects.ObjsQueryReq{Filter: &objects.ObjectVersionFilter{ExcludeBaseObjectClasses: []string{"Model"}}}, "a-op:v0,c-plain:v0"},
			{"leaf class", objects.ObjsQueryReq{Filter: &objects.ObjectVersionFilter{LeafObjectClasses: []string{"Model"}, LatestOnly: ptr(true)}}, "b-model:v1"},
			{"ids", objects.ObjsQueryReq{Filter: &objects.ObjectVersionFilter{ObjectIDs: []string{"c-plain", "d-gone"}}}, "c-plain:v0"},
			{"sort object_id desc", objects.ObjsQueryReq{SortBy: []objects.SortBy{{Field: "object_id", Direction: "desc"}}}, "c-plain:v0,b-model:v0,b-model:v1,a-op:v0"},
			{"limit offset", objects.ObjsQueryReq{SortBy: []objects.SortBy{{Field: "object_id"}}, Limit: ptr(2), Offset: ptr(1)}, "b-model:v0,b-model:v1"},
		}
		for _, tc := range tests {
			if got := ids(tc.req); got != tc.want {
				t.Errorf("%s: got %s; want %s", tc.name, got, tc.want)
			}
		}
		res := must[*objects.ObjsQueryRes](t)(svc.ObjsQuery(ctx, &objects.ObjsQueryReq{ProjectID: project, MetadataOnly: true, Filter: &objects.ObjectVersionFilter{ObjectIDs: []string{"c-plain"}}}))
		if string(res.Objs[0].Val) != "{}" || res.Objs[0].SizeBytes != nil {
			t.Errorf("metadata only = %+v", res.Objs[0])
		}
	})
}
