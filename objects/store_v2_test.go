package objects_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/digest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
)

// The v2 op cases of the reference test suite.
func TestV2Ops(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		opCreate := func(name, source *string) *objects.V2CreateRes {
			t.Helper()
			return must[*objects.V2CreateRes](t)(svc.OpCreate(ctx, &objects.OpCreateReq{ProjectID: project, Name: name, SourceCode: source}))
		}
		opRead := func(id, version string) (*objects.V2Object, error) {
			return svc.V2Read(ctx, &objects.V2ReadReq{Family: objects.FamilyOps, ProjectID: project, ObjectID: id, Digest: version})
		}
		list := func(projectID string, limit, offset *int) []objects.V2Object {
			t.Helper()
			return must[[]objects.V2Object](t)(svc.V2List(ctx, &objects.V2ListReq{Family: objects.FamilyOps, ProjectID: projectID, Limit: limit, Offset: offset}))
		}

		// Create: object_id == name, version 0; the source is stored as obj.py.
		code := "def f(x):\n\t\"quoted\" 'single'\r\n    return '日本語 😀'\n"
		created := opCreate(ptr("my_op"), &code)
		if created.ObjectID != "my_op" || created.VersionIndex != 0 {
			t.Fatalf("created = %+v", created)
		}
		got := must[*objects.V2Object](t)(opRead("my_op", created.Digest))
		if *got.Code != code || got.VersionIndex != 0 {
			t.Fatalf("code = %q", *got.Code)
		}
		obj := read(t, svc, "my_op", created.Digest)
		wantVal := fmt.Sprintf(`{"_type":"CustomWeaveType","weave_type":{"type":"Op"},"files":{"obj.py":"%s"}}`, digest.Bytes([]byte(code)))
		if string(obj.Val) != wantVal || obj.Kind != "op" {
			t.Fatalf("stored op = %s (%s)", obj.Val, obj.Kind)
		}
		// No source: a placeholder; no name: "Op"; names normalised.
		if res := opCreate(ptr("no_source"), nil); res.VersionIndex != 0 {
			t.Fatalf("no source = %+v", res)
		}
		if placeholder := must[*objects.V2Object](t)(opRead("no_source", "latest")); !strings.Contains(*placeholder.Code, "def ") {
			t.Fatalf("placeholder = %q", *placeholder.Code)
		}
		if res := opCreate(nil, ptr("x")); res.ObjectID != "Op" {
			t.Fatalf("unnamed = %+v", res)
		}
		if res := opCreate(ptr("My Op/v<2>"), ptr("y")); res.ObjectID != "my_op_v2" {
			t.Fatalf("normalised = %+v", res)
		}
		_, err := svc.OpCreate(ctx, &objects.OpCreateReq{ProjectID: project, Name: ptr("bad:name")})
		wantErr(t, err, weft.ErrValidation)

		// Unknown op → 404.
		_, err = opRead("unknown", "latest")
		wantErr(t, err, objects.ErrNotFound)

		// Three sources under one name → versions 0, 1, 2 with distinct digests.
		seen := map[string]bool{}
		for i := range 3 {
			res := opCreate(ptr("versioned"), ptr(fmt.Sprintf("def v():\n    return %d\n", i)))
			if res.VersionIndex != i || seen[res.Digest] {
				t.Fatalf("version %d = %+v", i, res)
			}
			seen[res.Digest] = true
		}

		// Delete one version → reading it is ObjectDeletedError; the list drops it.
		must[*objects.ObjDeleteRes](t)(svc.V2Delete(ctx, &objects.V2DeleteReq{Family: objects.FamilyOps, ProjectID: project, ObjectID: "my_op", Digests: []string{created.Digest}}))
		_, err = opRead("my_op", created.Digest)
		wantErr(t, err, objects.ErrObjectDeleted)
		for _, o := range list(project, nil, nil) {
			if o.ObjectID == "my_op" {
				t.Fatal("deleted op is listed")
			}
		}
		// Delete with no digests removes all three versions.
		all := must[*objects.ObjDeleteRes](t)(svc.V2Delete(ctx, &objects.V2DeleteReq{Family: objects.FamilyOps, ProjectID: project, ObjectID: "versioned"}))
		if all.NumDeleted != 3 {
			t.Fatalf("deleted %d", all.NumDeleted)
		}
		_, err = svc.V2Delete(ctx, &objects.V2DeleteReq{Family: objects.FamilyOps, ProjectID: project, ObjectID: "unknown"})
		wantErr(t, err, objects.ErrNotFound)

		// Delete 2 of 4; the other 2 stay readable.
		var four []*objects.V2CreateRes
		for i := range 4 {
			four = append(four, opCreate(ptr("four"), ptr(fmt.Sprint(i))))
		}
		del := must[*objects.ObjDeleteRes](t)(svc.V2Delete(ctx, &objects.V2DeleteReq{Family: objects.FamilyOps, ProjectID: project, ObjectID: "four", Digests: []string{four[0].Digest, four[2].Digest}}))
		if del.NumDeleted != 2 {
			t.Fatalf("deleted %d", del.NumDeleted)
		}
		for _, i := range []int{1, 3} {
			if _, err := opRead("four", four[i].Digest); err != nil {
				t.Fatalf("v%d: %v", i, err)
			}
		}

		// Listing: five ops in a fresh project; limit, offset and pages.
		other := "acme/listing"
		for i := range 5 {
			must[*objects.V2CreateRes](t)(svc.OpCreate(ctx, &objects.OpCreateReq{ProjectID: other, Name: ptr(fmt.Sprintf("op%d", i))}))
		}
		must[*objects.ObjCreateRes](t)(svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: other, ObjectID: "not-an-op", Val: []byte(`{}`)}}))
		if n := len(list(other, nil, nil)); n != 5 {
			t.Fatalf("list = %d ops", n)
		}
		if n := len(list(other, ptr(3), nil)); n != 3 {
			t.Fatalf("limit 3 = %d", n)
		}
		if n := len(list(other, nil, ptr(2))); n != 3 {
			t.Fatalf("offset 2 = %d", n)
		}
		page1, page2 := list(other, ptr(3), ptr(0)), list(other, ptr(3), ptr(3))
		for _, a := range page1 {
			for _, b := range page2 {
				if a.ObjectID == b.ObjectID {
					t.Fatalf("pages overlap on %s", a.ObjectID)
				}
			}
		}
		if len(page1)+len(page2) != 5 {
			t.Fatalf("pages hold %d+%d", len(page1), len(page2))
		}
		if n := len(list("acme/empty", nil, nil)); n != 0 {
			t.Fatalf("empty project lists %d", n)
		}
	})
}

func TestV2Evaluations(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, objects.Config{})
		ctx := userCtx()
		ds := must[*objects.V2CreateRes](t)(svc.DatasetCreate(ctx, &objects.DatasetCreateReq{ProjectID: project, Name: "qa", Rows: rawRows(`{"q":"1+1","a":"2"}`)}))
		scorer := must[*objects.V2CreateRes](t)(svc.ScorerCreate(ctx, &objects.ScorerCreateReq{ProjectID: project, Name: "exact", OpSourceCode: ptr("def score(output, a):\n    return output == a\n")}))
		dsRef := ref.Object(project, ds.ObjectID, ds.Digest).WithScheme(ref.SchemeWeave).String()
		scRef := ref.Object(project, scorer.ObjectID, scorer.Digest).WithScheme(ref.SchemeWeave).String()
		req := &objects.EvaluationCreateReq{ProjectID: project, Name: "My Eval", Description: ptr("d"), Dataset: dsRef, Scorers: []string{scRef},
			EvalAttributes: []byte(`{"team":"core"}`)}
		ev := must[*objects.EvaluationCreateRes](t)(svc.EvaluationCreate(ctx, req))
		if ev.ObjectID != "my_eval" || ev.VersionIndex != 0 || ev.EvaluationRef != "weave:///acme/proj/object/my_eval:"+ev.Digest {
			t.Fatalf("evaluation = %+v", ev)
		}
		// The three placeholder ops exist, and the object holds their digests.
		val := read(t, svc, "my_eval", ev.Digest)
		for _, op := range []string{"evaluate", "predict_and_score", "summarize"} {
			o := read(t, svc, "my_eval."+op, "latest")
			if o.Kind != "op" || !strings.Contains(string(val.Val), `"`+op+`":"`+o.Digest+`"`) {
				t.Fatalf("op %s (%s) not in %s", op, o.Digest, val.Val)
			}
		}
		if deref(val.BaseObjectClass) != "Evaluation" || !strings.Contains(string(val.Val), `"trials":1`) || !strings.Contains(string(val.Val), `"team":"core"`) {
			t.Fatalf("evaluation value = %s", val.Val)
		}
		again := must[*objects.EvaluationCreateRes](t)(svc.EvaluationCreate(ctx, req))
		if again.Digest != ev.Digest || again.VersionIndex != 0 {
			t.Fatalf("re-create = %+v", again)
		}
		req.Trials = ptr(3)
		v1 := must[*objects.EvaluationCreateRes](t)(svc.EvaluationCreate(ctx, req))
		if v1.VersionIndex != 1 {
			t.Fatalf("second version = %+v", v1)
		}
		got := must[*objects.V2Object](t)(svc.V2Read(ctx, &objects.V2ReadReq{Family: objects.FamilyEvaluations, ProjectID: project, ObjectID: "my_eval", Digest: "latest"}))
		if *got.Trials != 3 || *got.Dataset != dsRef || got.Scorers[0] != scRef || !strings.HasPrefix(*got.EvaluateOp, "weave:///acme/proj/op/my_eval.evaluate:") {
			t.Fatalf("read = %+v", got)
		}
		evals := must[[]objects.V2Object](t)(svc.V2List(ctx, &objects.V2ListReq{Family: objects.FamilyEvaluations, ProjectID: project}))
		if len(evals) != 2 {
			t.Fatalf("evaluations listed: %d", len(evals))
		}
		// A read through the wrong family is not found.
		_, err := svc.V2Read(ctx, &objects.V2ReadReq{Family: objects.FamilyDatasets, ProjectID: project, ObjectID: "my_eval", Digest: "latest"})
		wantErr(t, err, objects.ErrNotFound)
		_, err = svc.EvaluationCreate(ctx, &objects.EvaluationCreateReq{ProjectID: project, Name: "e", Dataset: "not a ref"})
		wantErr(t, err, weft.ErrInvalid)
		_, err = svc.EvaluationCreate(ctx, &objects.EvaluationCreateReq{ProjectID: project, Name: "e", Dataset: dsRef, EvalAttributes: []byte(`[1]`)})
		wantErr(t, err, weft.ErrInvalid)

		// Datasets, scorers and models read back through their families.
		dsRead := must[*objects.V2Object](t)(svc.V2Read(ctx, &objects.V2ReadReq{Family: objects.FamilyDatasets, ProjectID: project, ObjectID: "qa", Digest: ds.Digest}))
		rows := must[*objects.RefsReadBatchRes](t)(svc.RefsReadBatch(ctx, &objects.RefsReadBatchReq{Refs: []string{dsRef + "/attr/rows/id/" + mustDigest(t, `{"q":"1+1","a":"2"}`)}}))
		if !strings.HasPrefix(*dsRead.Rows, "weave:///acme/proj/table/") || string(rows.Vals[0]) != `{"q":"1+1","a":"2"}` {
			t.Fatalf("dataset = %+v, row %s", dsRead, rows.Vals[0])
		}
		scRead := must[*objects.V2Object](t)(svc.V2Read(ctx, &objects.V2ReadReq{Family: objects.FamilyScorers, ProjectID: project, ObjectID: "exact", Digest: "v0"}))
		if !strings.HasPrefix(*scRead.ScoreOp, "weave:///acme/proj/op/exact.score:") {
			t.Fatalf("scorer = %+v", scRead)
		}
		model := must[*objects.V2CreateRes](t)(svc.ModelCreate(ctx, &objects.ModelCreateReq{ProjectID: project, Name: "m", SourceCode: ptr("def predict(): ..."), Attributes: []byte(`{"temperature":0.5}`)}))
		mRead := must[*objects.V2Object](t)(svc.V2Read(ctx, &objects.V2ReadReq{Family: objects.FamilyModels, ProjectID: project, ObjectID: model.ObjectID, Digest: model.Digest}))
		if *mRead.SourceCode != "def predict(): ..." || string(mRead.Attributes) != `{"temperature":0.5}` {
			t.Fatalf("model = %+v", mRead)
		}
		del := must[*objects.ObjDeleteRes](t)(svc.V2Delete(ctx, &objects.V2DeleteReq{Family: objects.FamilyModels, ProjectID: project, ObjectID: "m"}))
		if del.NumDeleted != 1 {
			t.Fatalf("model delete = %d", del.NumDeleted)
		}
	})
}

func mustDigest(t *testing.T, text string) string {
	d, err := digest.JSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Two servers (two connection pools on one PostgreSQL schema) publishing
// versions of one object at the same moment never duplicate or skip a
// version_index.
func TestConcurrentPublishersOnePostgres(t *testing.T) {
	t.Parallel()
	url := testdb.PostgresURL(t)
	ctx := userCtx()
	var services []objects.Service
	for range 2 {
		db, err := weft.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		if err := weft.Migrate(context.Background(), db); err != nil {
			t.Fatal(err)
		}
		services = append(services, newService(t, db, objects.Config{}))
	}
	const perServer = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*perServer*2)
	start := make(chan struct{})
	for s, svc := range services {
		for i := range perServer {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// Each value is published twice (once per server) to race the dedup too.
				val := fmt.Sprintf(`{"n": %d}`, i)
				if s == 1 {
					val = fmt.Sprintf(`{"n":%d}`, perServer-1-i)
				}
				_, err := svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: project, ObjectID: "hot", Val: []byte(val)}})
				errs <- err
				val2 := fmt.Sprintf(`{"only": [%d, %d]}`, s, i)
				_, err = svc.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: project, ObjectID: "hot", Val: []byte(val2)}})
				errs <- err
			}()
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	res := must[*objects.ObjsQueryRes](t)(services[0].ObjsQuery(ctx, &objects.ObjsQueryReq{ProjectID: project}))
	want := perServer + 2*perServer // shared values once, own values per server
	if len(res.Objs) != want {
		t.Fatalf("%d versions; want %d", len(res.Objs), want)
	}
	indexes := map[int]bool{}
	for _, o := range res.Objs {
		indexes[o.VersionIndex] = true
	}
	for i := range want {
		if !indexes[i] {
			t.Fatalf("version_index %d missing (have %v)", i, indexes)
		}
	}
}
