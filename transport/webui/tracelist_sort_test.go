package webui_test

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// costCell is a row's cost cell: its call and the text it shows.
var costCell = regexp.MustCompile(`<tr data-call="([^"]+)"(?s:.*?)<td class="num tokens[^"]*"[^>]*>[^<]*</td>\s*<td class="num cost[^"]*">([^<]*)</td>`)

// TestTraceListSortByFeedbackAndCost sorts the list by its Feedback and Cost
// columns, both ways, and walks every page by its next link: the rows must
// come in the order of the reactions given and of the costs the Cost column
// shows, each trace once, the pages linked by cursor.
func TestTraceListSortByFeedbackAndCost(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db)
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		// 64 traces, more than a page. Costs follow no start order, some
		// tie, and every seventh trace has no priced usage.
		const n = 64
		cost := map[string]float64{}
		reactions := map[string]int{}
		var all []string
		for i := range n {
			callID, at := uuidN('a', i), t0.Add(time.Duration(i)*time.Second)
			all = append(all, callID)
			s.callStart(t, s.aliceKey, "alice/p", callID, uuidN('f', i), "", "chat", at, map[string]any{"i": i})
			summary := map[string]any{}
			if i%7 != 3 {
				prompt := (i * 37 % 20) * 100
				summary["usage"] = map[string]any{"gpt-4o-mini": map[string]any{"prompt_tokens": prompt, "completion_tokens": 10}}
				cost[callID] = float64(prompt)*0.15e-6 + 10*0.6e-6
			}
			s.callEnd(t, s.aliceKey, "alice/p", callID, at.Add(time.Second), "ok", summary, "")
			if r := i * 13 % 5; i%3 == 0 && r > 0 {
				reactions[callID] = r
				for j := range r {
					s.api(t, s.aliceKey, "/feedback/create", map[string]any{
						"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/" + callID, "feedback_type": "wandb.reaction.1",
						"payload": map[string]any{"emoji": []string{"👍", "🎉", "👀", "🚀"}[j%4]},
					})
				}
			}
		}
		// A note is feedback but no reaction.
		s.api(t, s.aliceKey, "/feedback/create", map[string]any{
			"project_id": "alice/p", "weave_ref": "weave:///alice/p/call/" + uuidN('a', 1), "feedback_type": "wandb.note.1", "payload": map[string]any{"note": "n"},
		})

		b := s.browser(t)
		b.signIn("", s.aliceKey)
		for _, sort := range []struct {
			field string
			value func(id string) (float64, bool)
		}{
			{trace.SortCost, func(id string) (float64, bool) { c, ok := cost[id]; return c, ok }},
			{trace.SortReactions, func(id string) (float64, bool) { return float64(reactions[id]), true }},
		} {
			for _, dir := range []string{"desc", "asc"} {
				t.Run(sort.field+" "+dir, func(t *testing.T) {
					want := slices.Clone(all)
					slices.SortStableFunc(want, func(x, y string) int {
						vx, okx := sort.value(x)
						vy, oky := sort.value(y)
						if okx != oky { // no value comes last either way
							if okx {
								return -1
							}
							return 1
						}
						c := cmp.Compare(vx, vy)
						if dir == "desc" {
							c = -c
						}
						return cmp.Or(c, cmp.Compare(x, y))
					})
					var got, shown []string
					path := "/ui/p/alice/p/?sort=" + sort.field + "&dir=" + dir
					for pages := 0; path != ""; pages++ {
						p := b.get(path)
						if p.status != 200 || pages > 3 {
							t.Fatalf("%s: %d", path, p.status)
						}
						got = append(got, rowsOf(p)...)
						for _, m := range costCell.FindAllStringSubmatch(p.body, -1) {
							shown = append(shown, m[2])
						}
						path = ""
						if strings.Contains(p.body, `rel="next"`) {
							path = linkOf(t, p, "next")
							if !strings.Contains(path, "after=") || strings.Contains(path, "offset=") {
								t.Fatalf("the next page is not found by cursor: %s", path)
							}
						}
					}
					if !slices.Equal(got, want) {
						t.Fatalf("rows:\n got %v\nwant %v", got, want)
					}
					if sort.field != trace.SortCost {
						return
					}
					// The order is the order of the numbers the Cost column shows.
					if len(shown) != len(got) {
						t.Fatalf("%d cost cells for %d rows", len(shown), len(got))
					}
					for i, text := range shown {
						c, ok := cost[got[i]]
						if wantText := "–"; ok {
							wantText = fmt.Sprintf("$%.6f", c)
							if text != wantText {
								t.Fatalf("row %d shows %q, want %q", i, text, wantText)
							}
						} else if text != wantText {
							t.Fatalf("row %d without a price shows %q", i, text)
						}
						if i == 0 || text == "–" || shown[i-1] == "–" {
							continue
						}
						prev, _ := strconv.ParseFloat(strings.TrimPrefix(shown[i-1], "$"), 64)
						this, _ := strconv.ParseFloat(strings.TrimPrefix(text, "$"), 64)
						if (dir == "desc" && this > prev) || (dir == "asc" && this < prev) {
							t.Fatalf("row %d (%s) after %s, sorted %s", i, text, shown[i-1], dir)
						}
					}
				})
			}
		}
		// A numeric cursor that is not a number is a bad view.
		for _, bad := range []string{"?sort=summary.weave.costs&after=cheap_x", "?sort=feedback.reactions&after=NaN_x", "?sort=summary.weave.costs&after=1.5_"} {
			if p := b.get("/ui/p/alice/p/" + bad); p.status != 400 {
				t.Errorf("%s: %d", bad, p.status)
			}
		}
	})
}
