package monitor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/trace"
	"github.com/weftlabs/weft/training"
)

// judges serves three tiny random-weight models with real tokenizers
// (Qwen3's, Llama 3's, and the 32,000-token SentencePiece one with a
// Llama 2 chat template) on the built-in engine, with JSON strings bounded
// so that random weights finish a verdict. The chat calls it traces go to
// the store of the (parallel) test whose project they belong to.
var judges struct {
	once    sync.Once
	gateway *chat.Gateway
	traces  sync.Map // project id → *trace.Store
}

// judgeModels are the models judges serves.
var judgeModels = []string{"judge-qwen3", "judge-llama3", "judge-llama2"}

// llama2Template is Llama 2 chat's prompt format.
const llama2Template = `{{ bos_token }}{%- for message in messages %}{%- if message.role == 'system' %}{{ '<<SYS>>\n' + message.content + '\n<</SYS>>\n\n' }}` +
	`{%- elif message.role == 'user' %}{{ '[INST] ' + message.content + ' [/INST]' }}{%- else %}{{ ' ' + message.content + eos_token }}{%- endif %}{%- endfor %}`

// tracesRecorder records judges' calls into the store of their project's
// test.
type tracesRecorder struct{}

func (tracesRecorder) RecordCalls(ctx context.Context, calls []chat.Call) error {
	for _, c := range calls {
		if s, ok := judges.traces.Load(c.ProjectID); ok {
			if err := (chatstore.Recorder{Trace: s.(*trace.Store)}).RecordCalls(ctx, []chat.Call{c}); err != nil {
				return err
			}
		}
	}
	return nil
}

// judgeGateway returns the judges' gateway, tracing the calls of project
// into traces.
func judgeGateway(t *testing.T, project string, traces *trace.Store) *chat.Gateway {
	t.Helper()
	judges.once.Do(func() {
		for _, name := range []string{llmtest.TokenizerQwen3, llmtest.TokenizerLlama3, llmtest.TokenizerLlama2} {
			llmtest.RequireTokenizer(t, name)
		}
		llama := llmtest.Dims{Architecture: llmtest.Llama, VocabSize: 128256, HiddenSize: 16, IntermediateSize: 32,
			Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8, MaxPositions: 1024, RMSNormEps: 1e-5, RopeTheta: 5e5, TiedEmbedding: true}
		llama2 := llama
		llama2.VocabSize = 32000
		dirs := []string{
			llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t),
			llmtest.ModelDir{Dims: llama, Tokenizer: llmtest.TokenizerLlama3}.Write(t),
			llmtest.ModelDir{Dims: llama2, Tokenizer: llmtest.TokenizerLlama2,
				Files: map[string][]byte{"chat_template.jinja": []byte(llama2Template)}}.Write(t),
		}
		var routes strings.Builder
		routes.WriteString("models:\n")
		for i, name := range judgeModels {
			fmt.Fprintf(&routes, "  - name: %s\n    upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB, max_sequences: 4, "+
				"structured_outputs: {max_string_length: 8, max_nesting: 4, max_whitespace: -1}}]\n", name, dirs[i])
		}
		routing, err := chat.ParseRouting([]byte(routes.String()), nil, inprocess.Kind)
		if err != nil {
			t.Fatal(err)
		}
		// The judges stay open for the package's run.
		models, err := inprocess.Open(routing, inprocess.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		judges.gateway, err = chat.New(chat.Config{Routing: routing, Recorder: tracesRecorder{}, Logger: slog.New(slog.DiscardHandler),
			Adapters: chatstore.Adapters{Training: noCheckpoints{}}, Backends: map[string]chat.Backend{chat.KindLocal: models}})
		if err != nil {
			t.Fatal(err)
		}
	})
	if judges.gateway == nil {
		t.Fatal("opening the judge models failed")
	}
	judges.traces.Store(project, traces)
	t.Cleanup(func() { judges.traces.Delete(project) })
	return judges.gateway
}

// noCheckpoints knows no trained model.
type noCheckpoints struct{}

func (noCheckpoints) ResolveAdapter(context.Context, string) (training.Adapter, bool, error) {
	return training.Adapter{}, false, nil
}

// verdictSchema is the verdict every judge answers under.
const verdictSchema = `{"type":"object","properties":{"verdict":{"enum":["good","bad"]},"reason":{"type":"string"}},` +
	`"required":["verdict","reason"],"additionalProperties":false}`

// judgeVal is an LLMAsAJudgeScorer as Weave publishes it, with weft's
// response_schema. The judges answer greedily: Qwen3's template leaves the
// first token free to open a think block, as vLLM's does, and a random-weight
// model sampled at temperature 1 opened one now and then and thought past
// max_tokens (an error verdict, rightly, so the test waited in vain).
func judgeVal(model string) string {
	return fmt.Sprintf(`{"_type":"LLMAsAJudgeScorer","_class_name":"LLMAsAJudgeScorer","_bases":["Scorer","Object","BaseModel"],`+
		`"model":{"_type":"LLMStructuredCompletionModel","_class_name":"LLMStructuredCompletionModel","_bases":["Model","Object","BaseModel"],`+
		`"llm_model_id":%q,"default_params":{"messages_template":[{"role":"system","content":"You grade answers to questions."}],`+
		`"temperature":0,"max_tokens":64,"response_format":"json_schema"}},`+
		`"scoring_prompt":"Question: {question}\nAnswer: {output}\nIs the answer good?","response_schema":%s}`, model, verdictSchema)
}

// TestJudgeVerdicts: an active monitor with a judge on each of three models
// of the built-in engine scores each ended call through weft's own chat
// path: every verdict satisfies the judge's schema (checked here by a JSON
// Schema validator), is stored as Weave stores scorer feedback, and links
// the judge's own traced call, which is not itself judged.
func TestJudgeVerdicts(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		var s *server
		s = newServer(t, db, serverOptions{monitor: func(cfg *monitor.Config) {
			cfg.JudgeRate = 100
			cfg.JudgeConcurrency = 4
		}})
		// A project per database: the subtests run at once and share the
		// gateway.
		project := "acme/support-" + path.Base(t.Name())
		gateway := judgeGateway(t, project, s.trace)
		s.monitors.SetChat(gateway, monitor.ChatModels{Chat: gateway})
		ctx := s.user(t, "alice", "acme")
		var refs []string
		for _, model := range judgeModels {
			refs = append(refs, s.publish(t, ctx, project, strings.ReplaceAll(model, "-", "_"), judgeVal(model)))
		}
		// One judge model has a price in the project: its verdicts cost
		// their tokens at it; the others' cost nothing known.
		const promptPrice, completionPrice = 0.001, 0.002
		if _, err := s.trace.CostCreate(ctx, &trace.CostCreateReq{ProjectID: project, Costs: map[string]trace.PriceInput{
			judgeModels[0]: {PromptTokenCost: promptPrice, CompletionTokenCost: completionPrice}}}); err != nil {
			t.Fatal(err)
		}
		op := "weave:///" + project + "/op/answer:abc"
		s.publish(t, ctx, project, "graded", monitorVal(1, []string{"weave:///" + project + "/op/answer:*"}, true, refs...))
		calls := []call{{id: newID(), op: op, output: `"42"`}, {id: newID(), op: op, output: `{"text":"forty-two"}`}}
		s.ingest(t, ctx, project, calls...)

		var got map[string]map[string]map[string]any
		// Six judge answers on three single-thread models, shared by the
		// three databases' subtests at once: on a loaded two-core machine
		// they took more than two minutes once.
		eventually(t, 5*time.Minute, "every judge's verdict", func() bool {
			got = s.verdictFeedback(t, project)
			return len(got[calls[0].id]) == 3 && len(got[calls[1].id]) == 3
		})
		c := jsonschema.NewCompiler()
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(verdictSchema))
		if err := c.AddResource("v.json", doc); err != nil {
			t.Fatal(err)
		}
		schema := c.MustCompile("v.json")
		for _, cl := range calls {
			for i, model := range judgeModels {
				name := strings.ReplaceAll(model, "-", "_")
				f := got[cl.id][name]
				payload, _ := json.Marshal(f["payload"])
				var p struct {
					Output json.RawMessage `json:"output"`
				}
				if err := json.Unmarshal(payload, &p); err != nil {
					t.Fatal(err)
				}
				out, err := jsonschema.UnmarshalJSON(strings.NewReader(string(p.Output)))
				if err != nil {
					t.Fatalf("%s on %s: payload.output %s is not JSON", model, cl.id, p.Output)
				}
				if err := schema.Validate(out); err != nil {
					t.Errorf("%s on %s: verdict %s off-schema: %v", model, cl.id, p.Output, err)
				}
				if text(f["runnable_ref"]) != refs[i] {
					t.Errorf("%s: runnable_ref %v, want %s", model, f["runnable_ref"], refs[i])
				}
				judgeCall := text(f["call_ref"])
				judgeID := judgeCall[strings.LastIndex(judgeCall, "/")+1:]
				if !strings.HasPrefix(judgeCall, "weave:///"+project+"/call/") {
					t.Fatalf("%s: call_ref %q, want the judge's traced call", model, judgeCall)
				}
				eventually(t, 30*time.Second, "the judge's call traced", func() bool {
					var found *trace.Call
					_ = s.trace.CallsQuery(context.Background(), &trace.CallsQueryReq{ProjectID: project,
						Filter: trace.CallsFilter{CallIDs: []string{judgeID}}}, func(c *trace.Call) error {
						found = c
						return nil
					})
					var in struct {
						Model string `json:"model"`
					}
					if found != nil {
						_ = json.Unmarshal(found.Inputs, &in)
					}
					return found != nil && found.OpName == chat.OpChatCompletion && in.Model == model
				})
				t.Logf("%s on %s: %s", model, cl.id, p.Output)
			}
		}
		// Each verdict records its judge's tokens, as the judge's traced
		// call counts them, and their cost where the model has a price:
		// its row is marked done once its feedback is written.
		eventually(t, 30*time.Second, "every verdict done", func() bool {
			st, err := s.monitors.Stats(ctx, monitor.StatsReq{ProjectID: project, MonitorID: "graded"})
			return err == nil && st.Verdicts.Done == int64(2*len(judgeModels))
		})
		var rows []struct {
			ScorerID         string   `bun:"scorer_id"`
			JudgeCallID      string   `bun:"judge_call_id"`
			PromptTokens     int64    `bun:"prompt_tokens"`
			CompletionTokens int64    `bun:"completion_tokens"`
			Cost             *float64 `bun:"cost"`
		}
		if err := db.NewRaw("SELECT scorer_id, judge_call_id, prompt_tokens, completion_tokens, cost FROM monitor_verdicts WHERE project_id = ?",
			project).Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			model := strings.ReplaceAll(r.ScorerID, "_", "-")
			var usage map[string]struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			}
			_ = s.trace.CallsQuery(context.Background(), &trace.CallsQueryReq{ProjectID: project,
				Filter: trace.CallsFilter{CallIDs: []string{r.JudgeCallID}}}, func(c *trace.Call) error {
				var summary struct {
					Usage json.RawMessage `json:"usage"`
				}
				_ = json.Unmarshal(c.Summary, &summary)
				return json.Unmarshal(summary.Usage, &usage)
			})
			traced := usage[model]
			if r.PromptTokens == 0 || r.PromptTokens != traced.PromptTokens || r.CompletionTokens != traced.CompletionTokens {
				t.Errorf("%s verdict: %d prompt and %d completion tokens; its traced call counts %d and %d", model,
					r.PromptTokens, r.CompletionTokens, traced.PromptTokens, traced.CompletionTokens)
			}
			switch want := float64(r.PromptTokens)*promptPrice + float64(r.CompletionTokens)*completionPrice; {
			case model == judgeModels[0] && (r.Cost == nil || math.Abs(*r.Cost-want) > 1e-12):
				t.Errorf("%s verdict: cost %v, want %v", model, r.Cost, want)
			case model != judgeModels[0] && r.Cost != nil:
				t.Errorf("%s verdict: cost %v, but the model has no price", model, *r.Cost)
			}
		}
		if len(rows) != 2*len(judgeModels) {
			t.Errorf("%d verdict rows, want %d", len(rows), 2*len(judgeModels))
		}
		stats, err := s.monitors.Stats(ctx, monitor.StatsReq{ProjectID: project, MonitorID: "graded"})
		var cost float64
		var prompt int64
		for _, r := range rows {
			prompt += r.PromptTokens
			if r.Cost != nil {
				cost += *r.Cost
			}
		}
		if err != nil || stats.Verdicts.Done != int64(len(rows)) || stats.PromptTokens != prompt || stats.PricedVerdicts != 2 ||
			math.Abs(stats.Cost-cost) > 1e-12 {
			t.Errorf("stats %+v (%v), want %d done, %d prompt tokens, 2 priced verdicts costing %v", stats, err, len(rows), prompt, cost)
		}
		// Per interval of the last hour, the same tokens and cost.
		from := time.Now().Add(-time.Hour)
		per, err := s.monitors.Stats(ctx, monitor.StatsReq{ProjectID: project, MonitorID: "graded", From: &from, Granularity: 600})
		if err != nil {
			t.Fatal(err)
		}
		var sum monitor.Totals
		for _, in := range per.Intervals {
			sum.Verdicts.Done += in.Verdicts.Done
			sum.PromptTokens += in.PromptTokens
			sum.PricedVerdicts += in.PricedVerdicts
			sum.Cost += in.Cost
		}
		if len(per.Intervals) < 6 || sum.Verdicts.Done != int64(len(rows)) || sum.PromptTokens != prompt || sum.PricedVerdicts != 2 || math.Abs(sum.Cost-cost) > 1e-12 {
			t.Errorf("%d intervals of the last hour add up to %+v, want %d done, %d prompt tokens, 2 priced verdicts costing %v",
				len(per.Intervals), sum, len(rows), prompt, cost)
		}
		// The judges' own calls are never judged.
		for id := range got {
			if id != calls[0].id && id != calls[1].id {
				t.Errorf("call %s was judged, but only the two ingested calls match", id)
			}
		}
	})
}

// TestJudgeModelAuthorized: a monitor whose judge names a model its
// publisher may not use — a served name that does not exist, or another
// entity's trained model — is refused when published; a trained model of
// the publisher's own entity is accepted.
func TestJudgeModelAuthorized(t *testing.T) {
	db := testdb.SQLite(t)
	s := newServer(t, db, serverOptions{})
	const project = "acme/support"
	gateway := judgeGateway(t, project, s.trace)
	s.monitors.SetChat(gateway, monitor.ChatModels{Chat: gateway, Adapters: chatstore.Adapters{Training: knownCheckpoints{"acme/p/agent": true, "rival/p/agent": true}}})
	alice := s.user(t, "alice", "acme")
	s.user(t, "bob", "rival")
	for model, allowed := range map[string]bool{"judge-qwen3": true, "acme/p/agent": true, "acme/p/agent:step3": true,
		"rival/p/agent": false, "wandb-artifact:///rival/p/agent:latest": false, "gpt-nothing": false} {
		ref := s.publish(t, alice, project, "j", judgeVal(model))
		_, err := s.tryPublish(alice, project, "m", monitorVal(1, nil, true, ref))
		switch {
		case allowed && err != nil:
			t.Errorf("judge model %s: refused: %v", model, err)
		case !allowed && !errors.Is(err, monitor.ErrJudgeModel):
			t.Errorf("judge model %s: err %v, want ErrJudgeModel", model, err)
		case !allowed:
			t.Logf("%s: %v", model, err)
		}
	}
}

// knownCheckpoints resolves the trained models it lists (by name, any step
// or artifact spelling).
type knownCheckpoints map[string]bool

func (k knownCheckpoints) ResolveAdapter(_ context.Context, model string) (training.Adapter, bool, error) {
	ref, ok := weft.ParseTrainedModel(model)
	if !ok || !k[ref.ProjectID+"/"+ref.Name] {
		return training.Adapter{}, false, nil
	}
	return training.Adapter{Name: ref.ProjectID + "/" + ref.Name + ":step1", BaseModel: "judge-qwen3", Step: 1}, true, nil
}

// TestJudgeFailureLeavesErrorVerdict: a judge that cannot run (here: the
// server serves no chat models) leaves an error verdict saying why, and
// no feedback — never a silent gap.
func TestJudgeFailureLeavesErrorVerdict(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		s := newServer(t, db, serverOptions{})
		ctx := s.user(t, "alice", "acme")
		const project = "acme/support"
		judge := s.publish(t, ctx, project, "judge", judgeVal("judge-qwen3"))
		s.publish(t, ctx, project, "graded", monitorVal(1, nil, true, judge))
		id := newID()
		s.ingest(t, ctx, project, call{id: id, op: "weave:///acme/support/op/answer:abc", output: `"42"`})
		var state, reason string
		eventually(t, 30*time.Second, "an error verdict", func() bool {
			err := db.NewRaw("SELECT state, coalesce(error, '') FROM monitor_verdicts WHERE project_id = ? AND call_id = ?", project, id).
				Scan(context.Background(), &state, &reason)
			return err == nil && state == monitor.StateError
		})
		if !strings.Contains(reason, "serves no chat models") {
			t.Errorf("error verdict's reason %q, want it to say the server serves no chat models", reason)
		}
		if got := s.verdictFeedback(t, project); len(got) != 0 {
			t.Errorf("an error verdict stored feedback: %v", got)
		}
	})
}
