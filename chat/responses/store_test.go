package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestStore(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		ctx := context.Background()
		s := NewStore(db)
		put := func(project, id, prev string, input []InputItem, output string) {
			t.Helper()
			rec := &Record{ProjectID: project, ID: id, PreviousID: prev, Input: input, CreatedAt: time.Now(),
				Response: json.RawMessage(`{"id":"` + id + `","output":` + output + `}`), CallID: "call-" + id, TraceID: "trace"}
			if err := s.Put(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		user := func(id, text string) InputItem {
			return InputItem{Type: "message", ID: id, Role: "user", Content: json.RawMessage(`"` + text + `"`)}
		}
		answer := func(id, text string) string {
			return `[{"type":"message","id":"` + id + `","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]}]`
		}
		put("e/p", "resp_1", "", []InputItem{user("msg_1", "a")}, answer("msg_2", "b"))
		put("e/p", "resp_2", "resp_1", []InputItem{user("msg_3", "c")}, `[{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}","status":"completed"}]`)
		put("e/p", "resp_3", "resp_2", []InputItem{{Type: "function_call_output", ID: "fco_1", CallID: "c1", Output: json.RawMessage(`"ok"`)}}, answer("msg_4", "d"))

		conv, err := s.History(ctx, "e/p", "resp_3", DefaultMaxChainDepth, DefaultMaxInputItems)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range conv.Items {
			got = append(got, it.ID)
		}
		if last := conv.Previous; fmt.Sprint(got) != "[msg_1 msg_2 msg_3 fc_1 fco_1 msg_4]" || last.CallID != "call-resp_3" || last.TraceID != "trace" || conv.First != "resp_1" {
			t.Errorf("history %v, last %+v, first %s", got, last, conv.First)
		}
		if _, err := s.History(ctx, "e/p", "resp_3", 2, DefaultMaxInputItems); !errors.Is(err, ErrInvalid) {
			t.Errorf("chain past its depth: %v", err)
		}
		if _, err := s.History(ctx, "e/p", "resp_3", 10, 5); !errors.Is(err, ErrInvalid) {
			t.Errorf("chain past its items: %v", err)
		}
		// Another project sees none of it.
		if _, err := s.Get(ctx, "e/other", "resp_1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("another project's response: %v", err)
		}
		if err := s.Delete(ctx, "e/other", "resp_1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting another project's response: %v", err)
		}

		put("e/p", "resp_4", "", []InputItem{user("m1", "1"), user("m2", "2"), user("m3", "3")}, `[]`)
		list, err := s.InputItems(ctx, "e/p", "resp_4", "", 2, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Data) != 2 || *list.FirstID != "m3" || *list.LastID != "m2" || !list.HasMore {
			t.Errorf("first page %+v", list)
		}
		list, err = s.InputItems(ctx, "e/p", "resp_4", "m2", 2, "desc")
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Data) != 1 || *list.FirstID != "m1" || list.HasMore {
			t.Errorf("second page %+v", list)
		}
		if want := `{"type":"message","id":"m1","status":"completed","role":"user","content":[{"type":"input_text","text":"1"}]}`; string(list.Data[0]) != want {
			t.Errorf("listed item %s", list.Data[0])
		}
		for _, bad := range []struct {
			after, order string
			limit        int
		}{{"", "", 101}, {"", "up", 1}, {"nope", "asc", 1}} {
			if _, err := s.InputItems(ctx, "e/p", "resp_4", bad.after, bad.limit, bad.order); !errors.Is(err, ErrInvalid) {
				t.Errorf("%+v: %v", bad, err)
			}
		}

		if err := s.Delete(ctx, "e/p", "resp_2"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.History(ctx, "e/p", "resp_3", 10, 100); !errors.Is(err, ErrNotFound) {
			t.Errorf("a chain through a deleted response: %v", err)
		}
		if err := s.Delete(ctx, "e/p", "resp_2"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
	})
}
