package trace_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/feedback"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/trace"
)

// TestStoreSortNumeric sorts by cost, reactions, latency and tokens, and
// pages each order by cursor: every order must be what the calls' own
// values say (the costs IncludeCosts prices, the reactions given, the ends
// written), the same whole and cut into pages.
func TestStoreSortNumeric(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s, ctx := newStore(t, db)
		// my-model has a project price from before t0 and a dearer one from
		// t0+30s; gpt-4o has a project price from t0+45s over the default.
		for _, p := range []struct {
			model  string
			from   time.Time
			prompt float64
		}{{"my-model", t0.Add(-time.Hour), 1e-3}, {"my-model", t0.Add(30 * time.Second), 1e-2}, {"gpt-4o", t0.Add(45 * time.Second), 5e-6}} {
			_, err := s.CostCreate(ctx, &trace.CostCreateReq{ProjectID: project, Costs: map[string]trace.PriceInput{
				p.model: {PromptTokenCost: p.prompt, CompletionTokenCost: 2 * p.prompt, CacheReadInputTokenCost: p.prompt / 10, EffectiveDate: &p.from},
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
		usage := func(models ...any) string {
			u := map[string]any{}
			for i := 0; i+1 < len(models); i += 2 {
				u[models[i].(string)] = models[i+1]
			}
			b, _ := json.Marshal(map[string]any{"usage": u})
			return string(b)
		}
		tokens := func(prompt, completion, cacheRead int) map[string]int {
			return map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "cache_read_input_tokens": cacheRead, "total_tokens": prompt + completion}
		}
		calls := []struct {
			at, took time.Duration
			summary  string // "" for a running call
		}{
			{0, 3 * time.Second, usage("gpt-4o", tokens(1000, 100, 0))},
			{time.Second, time.Second, usage("gpt-4o-2024-08-06", tokens(500, 0, 200))}, // priced as gpt-4o
			{10 * time.Second, 2 * time.Second, usage("my-model", tokens(10, 10, 0))},   // the older price
			{60 * time.Second, 2 * time.Second, usage("my-model", tokens(10, 10, 0))},   // the newer price
			{61 * time.Second, 5 * time.Second, usage("unknown-model", tokens(9999, 1, 0))},
			{62 * time.Second, 0, `{}`},
			{63 * time.Second, time.Second, usage("gpt-4o-mini", tokens(100, 100, 0), "my-model", tokens(1, 1, 1))},
			{64 * time.Second, 4 * time.Second, usage("gpt-4o", tokens(0, 0, 0))},      // priced at $0
			{65 * time.Second, 3 * time.Second, usage("gpt-4o", tokens(1000, 100, 0))}, // after gpt-4o's project price
			{66 * time.Second, 3 * time.Second, usage("gpt-4o", tokens(1000, 100, 0))}, // a tie with the one before
			{67 * time.Second, 0, ""}, // running
			{68 * time.Second, time.Second, usage("claude-3-5-sonnet-2024-10-22", tokens(300, 30, 100))},                // dated default
			{69 * time.Second, time.Second, usage("gpt-4o-2024-08-06x", tokens(300, 30, 0), "gpt-4o", tokens(1, 0, 0))}, // not a date suffix
		}
		var items []trace.BatchItem
		callIDs := make([]string, len(calls))
		for i, c := range calls {
			callIDs[i] = fmt.Sprintf("00000000-0000-7000-8000-%012d", i)
			items = append(items, start(callIDs[i], id(), nil, t0.Add(c.at), `{}`))
			if c.summary != "" {
				items = append(items, end(callIDs[i], t0.Add(c.at+c.took), c.summary))
			}
		}
		upsert(t, ctx, s, items...)
		fb, err := feedback.New(feedback.Config{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		reactions := map[string]int{callIDs[2]: 3, callIDs[0]: 1, callIDs[5]: 1}
		for callID, n := range reactions {
			for i := range n {
				req := feedback.CreateReq{ProjectID: project, FeedbackType: "wandb.reaction.1", Payload: json.RawMessage(`{"emoji":"👍"}`)}
				if i%2 == 0 {
					req.WeaveRef = "weave:///" + project + "/call/" + callID
				} else {
					req.TraceRef, req.FeedbackType = "trace:///"+project+"/call/"+callID, "trace.reaction.1"
				}
				if _, err := fb.Create(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A note is feedback but no reaction.
		if _, err := fb.Create(ctx, feedback.CreateReq{ProjectID: project, WeaveRef: "weave:///" + project + "/call/" + callIDs[4],
			FeedbackType: "wandb.note.1", Payload: json.RawMessage(`{"note":"n"}`)}); err != nil {
			t.Fatal(err)
		}

		// The values each order must follow, read from the calls themselves.
		priced := query(t, ctx, s, trace.CallsQueryReq{IncludeCosts: true})
		values := map[string]map[string]*float64{trace.SortCost: {}, trace.SortReactions: {}, trace.SortLatency: {}, trace.SortTotalTokens: {}}
		for _, c := range priced {
			var summary struct {
				Weave struct {
					Costs map[string]trace.Usage `json:"costs"`
				} `json:"weave"`
			}
			if err := json.Unmarshal(c.Summary, &summary); err != nil {
				t.Fatal(err)
			}
			if len(summary.Weave.Costs) > 0 {
				total := 0.0
				for _, u := range summary.Weave.Costs {
					for _, part := range []*float64{u.PromptTokensTotalCost, u.CompletionTokensTotalCost, u.CacheReadInputTokensTotalCost, u.CacheCreationInputTokensTotalCost} {
						if part != nil {
							total += *part
						}
					}
				}
				values[trace.SortCost][c.ID] = &total
			}
			n := float64(reactions[c.ID])
			values[trace.SortReactions][c.ID] = &n
			if c.EndedAt != nil {
				d := c.EndedAt.Sub(c.StartedAt).Seconds()
				values[trace.SortLatency][c.ID] = &d
			}
		}
		for i, c := range calls {
			var u map[string]map[string]map[string]float64
			_ = json.Unmarshal([]byte(c.summary), &u)
			if len(u["usage"]) > 0 {
				total := 0.0
				for _, m := range u["usage"] {
					total += m["total_tokens"]
				}
				values[trace.SortTotalTokens][callIDs[i]] = &total
			}
		}
		// Known costs, so that the order is checked against numbers and not
		// only against the store's own other reading.
		for i, want := range map[int]float64{
			0: 1000*2.5e-6 + 100*10e-6, 1: 300*2.5e-6 + 200*1.25e-6, 2: 10*1e-3 + 10*2e-3, 3: 10*1e-2 + 10*2e-2,
			7: 0, 8: 1000*5e-6 + 100*10e-6, 11: 200*3e-6 + 30*15e-6 + 100*0.3e-6, 12: 1 * 5e-6,
		} {
			if got := values[trace.SortCost][callIDs[i]]; got == nil || math.Abs(*got-want) > 1e-12 {
				t.Errorf("call %d costs %v, want %v", i, got, want)
			}
		}
		for _, i := range []int{4, 5, 10} {
			if got := values[trace.SortCost][callIDs[i]]; got != nil {
				t.Errorf("call %d has a cost %v, want none", i, *got)
			}
		}

		for _, field := range []string{trace.SortCost, trace.SortReactions, trace.SortLatency, trace.SortTotalTokens} {
			for _, dir := range []string{"desc", "asc"} {
				t.Run(field+" "+dir, func(t *testing.T) {
					want := slices.Clone(callIDs)
					slices.SortStableFunc(want, func(a, b string) int {
						va, vb := values[field][a], values[field][b]
						switch {
						case va == nil && vb == nil:
							return cmp.Compare(a, b)
						case va == nil:
							return 1
						case vb == nil:
							return -1
						}
						c := cmp.Compare(*va, *vb)
						if dir == "desc" {
							c = -c
						}
						return cmp.Or(c, cmp.Compare(a, b))
					})
					sortBy := []trace.SortBy{{Field: field, Direction: dir}}
					if got := ids(query(t, ctx, s, trace.CallsQueryReq{SortBy: sortBy})); !slices.Equal(got, want) {
						t.Fatalf("order:\n got %v\nwant %v", got, want)
					}
					var got []string
					var after *trace.CallsCursor
					for range len(callIDs) {
						page := query(t, ctx, s, trace.CallsQueryReq{SortBy: sortBy, Limit: 2, After: after})
						if len(page) == 0 {
							break
						}
						got = append(got, ids(page)...)
						cursor := page[len(page)-1].Cursor()
						after = &cursor
					}
					if !slices.Equal(got, want) {
						t.Fatalf("pages by cursor:\n got %v\nwant %v", got, want)
					}
				})
			}
		}
	})
}
