package feedback_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/objects"
)

// publishSpec stores an AnnotationSpec object and returns its versioned ref.
func publishSpec(t *testing.T, objs objects.Service, name, val string) string {
	t.Helper()
	class := "AnnotationSpec"
	res, err := objs.ObjCreate(context.Background(), &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{
		ProjectID: project, ObjectID: name, Val: json.RawMessage(val), BuiltinObjectClass: &class}})
	if err != nil {
		t.Fatalf("publish spec %s: %v", name, err)
	}
	return objectRef(name + ":" + res.Digest)
}

func TestAnnotationValuesFollowTheirSpec(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		objs, err := objects.New(objects.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := feedback.New(feedback.Config{DB: db, AnnotationSpecs: feedback.ObjectSpecs(objs)})
		if err != nil {
			t.Fatal(err)
		}
		unchecked := newService(t, db, nil)
		ctx := userCtx("u1")

		mood := publishSpec(t, objs, "mood", `{"name":"mood","field_schema":{"type":"string","enum":["good","bad"]}}`)
		score := publishSpec(t, objs, "score", `{"name":"score","field_schema":{"type":"number","minimum":1,"maximum":5}}`)
		bareEnum := publishSpec(t, objs, "tone", `{"name":"tone","enum":["calm","loud"]}`)
		nested := publishSpec(t, objs, "label", `{"field_schema":{"json_schema":{"type":"string","maxLength":3}}}`)
		free := publishSpec(t, objs, "comment", `{"name":"comment","description":"no schema"}`)
		gone := publishSpec(t, objs, "old", `{"field_schema":{"type":"boolean"}}`)
		if _, err := objs.ObjDelete(context.Background(), &objects.ObjDeleteReq{ProjectID: project, ObjectID: "old"}); err != nil {
			t.Fatal(err)
		}
		broken := publishSpec(t, objs, "broken", `{"field_schema":{"type":5}}`)
		external := publishSpec(t, objs, "external", `{"field_schema":{"$ref":"file:///etc/passwd"}}`)
		object := publishSpec(t, objs, "rubric", `{"field_schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}`)
		missing := objectRef("ghost:0123456789abcdef")

		annotation := func(specRef, value string) feedback.CreateReq {
			name, _, _ := strings.Cut(strings.TrimPrefix(specRef, objectRef("")), ":")
			return feedback.CreateReq{ProjectID: project, TraceRef: callRef("c-annot"), FeedbackType: "wandb.annotation." + name,
				AnnotationRef: str(specRef), Payload: payload(`{"value":` + value + `}`)}
		}
		tests := []struct {
			name    string
			req     feedback.CreateReq
			class   error // nil: stored
			message string
		}{
			{"enum value", annotation(mood, `"good"`), nil, ""},
			{"enum other value", annotation(mood, `"meh"`), feedback.ErrInvalidAnnotationValue, "value must be one of"},
			{"enum wrong type", annotation(mood, `1`), feedback.ErrInvalidAnnotationValue, "mood"},
			{"number in range", annotation(score, `4.5`), nil, ""},
			{"number too big", annotation(score, `6`), feedback.ErrInvalidAnnotationValue, "maximum"},
			{"number as string", annotation(score, `"4"`), feedback.ErrInvalidAnnotationValue, "want number"},
			{"bare enum", annotation(bareEnum, `"calm"`), nil, ""},
			{"bare enum other", annotation(bareEnum, `"shrill"`), feedback.ErrInvalidAnnotationValue, "value must be one of"},
			{"nested json_schema", annotation(nested, `"abc"`), nil, ""},
			{"nested json_schema too long", annotation(nested, `"abcd"`), feedback.ErrInvalidAnnotationValue, "maxLength"},
			{"spec without schema", annotation(free, `{"any":"thing"}`), nil, ""},
			{"object value", annotation(object, `{"n":3}`), nil, ""},
			{"object member wrong", annotation(object, `{"n":"x"}`), feedback.ErrInvalidAnnotationValue, "at value/n: got string, want integer"},
			{"spec schema does not compile", annotation(broken, `1`), feedback.ErrAnnotationSpec, "unusable schema"},
			{"spec schema reads a file", annotation(external, `1`), feedback.ErrAnnotationSpec, "self-contained"},
			{"missing spec", annotation(missing, `"x"`), feedback.ErrAnnotationSpec, "not found or has been deleted"},
			{"deleted spec", annotation(gone, `true`), feedback.ErrAnnotationSpec, "not found or has been deleted"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				res, err := svc.Create(ctx, tc.req)
				if tc.class == nil {
					if err != nil {
						t.Fatalf("create: %v", err)
					}
					stored := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + res.ID + `"}]}`)})
					if stored.TotalCount != 1 || string(stored.Result[0]["payload"].(json.RawMessage)) != string(tc.req.Payload) {
						t.Fatalf("stored %+v, want payload %s", stored, tc.req.Payload)
					}
					return
				}
				if !errors.Is(err, tc.class) || !errors.Is(err, weft.ErrInvalid) || !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("err = %v, want %v (400) mentioning %q", err, tc.class, tc.message)
				}
				t.Logf("refused: %v", err)
				// Without a spec reader the spec is not read: the row is stored as before.
				if _, err := unchecked.Create(ctx, tc.req); err != nil {
					t.Fatalf("without AnnotationSpecs: %v", err)
				}
			})
		}

		t.Run("batch fails on the bad item and stores nothing", func(t *testing.T) {
			before := queryAll(t, svc, feedback.QueryReq{}).TotalCount
			batch := []feedback.CreateReq{annotation(score, `1`), annotation(mood, `"bad"`), annotation(score, `0`)}
			_, err := svc.BatchCreate(ctx, feedback.BatchCreateReq{Batch: batch})
			if !errors.Is(err, feedback.ErrInvalidAnnotationValue) || !strings.Contains(err.Error(), "batch[2]") {
				t.Fatalf("batch: %v", err)
			}
			if after := queryAll(t, svc, feedback.QueryReq{}).TotalCount; after != before {
				t.Fatalf("rows stored by a failed batch: %d → %d", before, after)
			}
		})

		t.Run("replace checks the value before removing the old row", func(t *testing.T) {
			old := mustCreate(t, svc, annotation(score, `2`))
			_, err := svc.Replace(ctx, feedback.ReplaceReq{FeedbackID: old.ID, CreateReq: annotation(score, `9`)})
			if !errors.Is(err, feedback.ErrInvalidAnnotationValue) {
				t.Fatalf("replace: %v", err)
			}
			if n := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + old.ID + `"}]}`)}).TotalCount; n != 1 {
				t.Fatalf("replaced row lost: %d rows", n)
			}
		})
	})
}

func TestTraceRefOfAnyKind(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, nil)
		ctx := userCtx("u1")
		tests := []struct {
			name  string
			ref   string
			class error // nil: stored
		}{
			{"unknown kind, same project", "weave:///" + project + "/obj/123:abc", nil},
			{"unknown kind, trace scheme", "trace:///" + project + "/thing/x/y/z", nil},
			{"call ref", callRef("c-any"), nil},
			{"unknown kind, other project", "weave:///other/proj/obj/123:abc", weft.ErrInvalid},
			{"known kind malformed", "weave:///" + project + "/object/noversion", weft.ErrInvalid},
			{"unknown kind without name", "weave:///" + project + "/obj/", weft.ErrInvalid},
			{"no kind", "weave:///" + project, weft.ErrInvalid},
			{"not a ref", "obj/123:abc", weft.ErrInvalid},
			{"other scheme", "wandb-artifact:///" + project + "/obj/123:abc", weft.ErrInvalid},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				req := feedback.CreateReq{ProjectID: project, WeaveRef: tc.ref, FeedbackType: "custom", Payload: payload(`{"k":1}`)}
				res, err := svc.Create(ctx, req)
				if tc.class != nil {
					if !errors.Is(err, tc.class) {
						t.Fatalf("err = %v, want %v", err, tc.class)
					}
					return
				}
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				stored := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + res.ID + `"}]}`)})
				if stored.TotalCount != 1 || stored.Result[0]["weave_ref"] != tc.ref {
					t.Fatalf("stored %+v, want weave_ref %s", stored.Result, tc.ref)
				}
			})
		}
	})
}
