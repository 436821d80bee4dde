package feedback_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
)

// Request text reaches the database only as bound values: NUL characters,
// which no bound value can carry, are refused (ErrInvalidQuery, 400) wherever
// a filter, a purge or a sort takes them; LIKE metacharacters in a queue name
// search match themselves; a search longer than a queue name can be is
// refused; and stored payloads holding \u0000 can still be filtered on.
func TestHostileQueryText(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		svc := newService(t, db, nil)
		ctx := userCtx("u1")
		withNUL := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c1"), FeedbackType: "custom",
			Payload: payload(`{"note":"a\u0000b","n":1}`)})
		plain := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c1"), FeedbackType: "custom",
			Payload: payload(`{"note":"ab","n":2}`)})
		// A backslash, then the text u0000; and a backslash, then a NUL.
		escapedBackslash := mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c2"), FeedbackType: "custom",
			Payload: payload(`{"note":"\\u0000 text","n":3}`)})
		mustCreate(t, svc, feedback.CreateReq{ProjectID: project, TraceRef: callRef("c2"), FeedbackType: "custom",
			Payload: payload(`{"note":"x\\\u0000","n":4}`)})

		refused := map[string]feedback.QueryReq{
			"literal":        {Query: expr(`{"$eq":[{"$getField":"feedback_type"},{"$literal":"custom\u0000"}]}`)},
			"payload value":  {Query: expr(`{"$eq":[{"$getField":"payload.note"},{"$literal":"a\u0000b"}]}`)},
			"in list":        {Query: expr(`{"$in":[{"$getField":"id"},[{"$literal":"x"},{"$literal":"\u0000"}]]}`)},
			"payload path":   {Query: expr(`{"$eq":[{"$getField":"payload.no\u0000te"},{"$literal":"ab"}]}`)},
			"column name":    {Query: expr(`{"$eq":[{"$getField":"id\u0000"},{"$literal":"ab"}]}`)},
			"sort path":      {SortBy: []feedback.SortBy{{Field: "payload.no\u0000te"}}},
			"created_at":     {Query: expr(`{"$gt":[{"$getField":"created_at"},{"$literal":"2026\u0000"}]}`)},
			"literal first":  {Query: expr(`{"$lt":[{"$literal":"\u0000"},{"$getField":"payload.note"}]}`)},
			"nested not":     {Query: expr(`{"$not":[{"$or":[{"$eq":[{"$getField":"creator"},{"$literal":"\u0000"}]}]}]}`)},
			"unknown field":  {Fields: []string{"payload\u0000"}},
			"operator name":  {Query: expr(`{"$e\u0000q":[{"$getField":"id"},{"$literal":"x"}]}`)},
			"getField arg":   {Query: expr(`{"$eq":[{"$getField\u0000":"id"},{"$literal":"x"}]}`)},
			"null with path": {Query: expr(`{"$eq":[{"$getField":"payload.\u0000"},{"$literal":null}]}`)},
		}
		for name, req := range refused {
			req.ProjectID = project
			if _, err := svc.Query(ctx, req); !errors.Is(err, feedback.ErrInvalidQuery) {
				t.Errorf("query with NUL in %s: %v, want ErrInvalidQuery", name, err)
			}
		}
		for _, bad := range []string{
			`{"$eq":[{"$getField":"id"},{"$literal":"` + plain.ID + `\u0000"}]}`,
			`{"$or":[{"$eq":[{"$getField":"id"},{"$literal":"` + plain.ID + `"}]},{"$eq":[{"$getField":"id"},{"$literal":"\u0000"}]}]}`,
		} {
			if _, err := svc.Purge(ctx, feedback.PurgeReq{ProjectID: project, Query: *expr(bad)}); !errors.Is(err, feedback.ErrInvalidQuery) {
				t.Errorf("purge %s: %v, want ErrInvalidQuery", bad, err)
			}
		}

		// Filters and sorts over a payload that holds \u0000 work, and the
		// payload comes back as stored.
		res := queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$gte":[{"$getField":"payload.n"},{"$literal":1}]}`),
			SortBy: []feedback.SortBy{{Field: "payload.note", Direction: "desc"}}})
		if res.TotalCount != 4 {
			t.Fatalf("payload filter over a stored \\u0000: %+v", res)
		}
		res = queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"payload.note"},{"$literal":"\\u0000 text"}]}`)})
		if res.TotalCount != 1 || res.Result[0]["id"] != escapedBackslash.ID {
			t.Fatalf("payload.note == \\u0000 text: %+v", res)
		}
		res = queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"payload.note"},{"$literal":"ab"}]}`)})
		if res.TotalCount != 1 || res.Result[0]["id"] != plain.ID {
			t.Fatalf("payload.note == ab: %+v", res)
		}
		res = queryAll(t, svc, feedback.QueryReq{Query: expr(`{"$eq":[{"$getField":"payload.n"},{"$literal":1}]}`)})
		if res.TotalCount != 1 || string(res.Result[0]["payload"].(json.RawMessage)) != `{"note":"a\u0000b","n":1}` {
			t.Fatalf("payload.n == 1: %+v", res)
		}
		if _, err := svc.Purge(ctx, feedback.PurgeReq{ProjectID: project, Query: *expr(`{"$eq":[{"$getField":"id"},{"$literal":"` + withNUL.ID + `"}]}`)}); err != nil {
			t.Fatal(err)
		}

		// Queue name search: LIKE metacharacters match themselves; a search
		// longer than any queue name is refused.
		names := []string{`100% done`, `a_b`, `back\slash`, `plain`}
		for _, name := range names {
			if _, err := svc.CreateQueue(ctx, feedback.CreateQueueReq{ProjectID: project, Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		for search, want := range map[string]string{"%": `100% done`, "_": `a_b`, `\`: `back\slash`, `%_`: ""} {
			got, err := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: project, Name: &search})
			if err != nil {
				t.Fatalf("search %q: %v", search, err)
			}
			var found []string
			for _, q := range got.Queues {
				found = append(found, q.Name)
			}
			if want == "" && len(found) != 0 || want != "" && (len(found) != 1 || found[0] != want) {
				t.Errorf("search %q found %q, want %q", search, found, want)
			}
		}
		longest := strings.Repeat("é", feedback.MaxQueueNameLength)
		if _, err := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: project, Name: &longest}); err != nil {
			t.Errorf("search of the longest name: %v", err)
		}
		for _, search := range []string{strings.Repeat("%_", 50000), longest + "x", "pla\u0000in"} {
			if _, err := svc.QueryQueues(ctx, feedback.QueryQueuesReq{ProjectID: project, Name: &search}); !errors.Is(err, feedback.ErrInvalidQuery) {
				t.Errorf("search of %d characters: %v, want ErrInvalidQuery", len([]rune(search)), err)
			}
		}
	})
}
