package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/training/localtrainer"
)

// localTraining is a server that serves a tiny random Qwen3 as "tiny" (the
// real Qwen3 tokenizer and template), trains it with the built-in trainer
// and serves its checkpoints, all in one process, as examples/server wires
// them.
type localTraining struct {
	*localServer
	tf      *trainingFixture
	manager *training.Store
}

func newLocalTraining(t *testing.T) *localTraining {
	t.Helper()
	return newLocalTrainingOn(t, llmtest.ModelDir{Dims: llmtest.TinyQwen3, Tokenizer: llmtest.TokenizerQwen3}.Write(t))
}

// newLocalTrainingOn is newLocalTraining serving the model at path.
func newLocalTrainingOn(t *testing.T, path string) *localTraining {
	t.Helper()
	db := testdb.SQLite(t)
	ctx := context.Background()
	if err := weft.Migrate(ctx, db, training.MigrateQueue(db)); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	trainers := &training.TrainerSet{}
	manager, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: trainers, Workers: 1,
		PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler), DataHosts: []string{"127.0.0.1"}}) // the tests' data servers
	if err != nil {
		t.Fatal(err)
	}
	routing, err := chat.ParseRouting(fmt.Appendf(nil, "models: [{name: tiny, max_model_len: 256, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB, max_sequences: 8}]}]", path), nil, inprocess.Kind)
	if err != nil {
		t.Fatal(err)
	}
	gateway := openLocalGateway(t, chat.Config{Routing: routing, Adapters: chatstore.Adapters{Training: manager}, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = gateway.Close(context.Background()) })
	base, err := localtrainer.Served(gateway.models.Models()["tiny"])
	if err != nil {
		t.Fatal(err)
	}
	trainer, err := localtrainer.New(localtrainer.Config{Models: map[string]localtrainer.BaseModel{"tiny": base},
		Threads: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = trainer.Close() })
	trainers.Add("local", trainer, trainer.BaseModels()...)
	if err := manager.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = manager.Stop(stopCtx)
	})
	s := &localServer{fixture: newFixture(t, db, 1<<22, func(cfg *Config) { cfg.Chat = gateway; cfg.Training = manager })}
	return &localTraining{localServer: s, manager: manager, tf: &trainingFixture{url: s.server.URL, aliceKey: s.aliceKey, adminKey: s.adminKey}}
}

// sample completes prompt n times with the named model (temperature 1) and
// returns the choices as a trajectory carries them with their token ids.
func (lt *localTraining) sample(t *testing.T, modelName, prompt string, n, seed int) (choices []json.RawMessage, ids [][]int) {
	t.Helper()
	for i := range n {
		c, raw := lt.complete(t, fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}],"max_tokens":6,"temperature":1,"seed":%d,"logprobs":true,"return_tokens_as_token_ids":true,"return_token_ids":true}`,
			modelName, prompt, seed+i))
		choices = append(choices, member(t, raw, "choices", 0))
		ids = append(ids, c.Choices[0].TokenIDs)
	}
	return choices, ids
}

// The whole loop in one process over HTTP, with no other program: replies
// sampled from the served model are graded by the share of their tokens that
// are one chosen token, which the untrained model rarely produces; RL jobs
// for a model whose base model is the served one are trained by the
// built-in trainer, and within a bounded number of jobs the served latest
// checkpoint earns a mean grade above 0.8. Every gradient_step carries
// numbers, every job's checkpoint is listed before its end. A job for a base
// model nothing here trains fails on the first poll.
func TestLocalTrainingEndToEnd(t *testing.T) {
	lt := newLocalTraining(t)
	var served, foreign struct {
		ID string `json:"id"`
	}
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "loop", "name": "agent", "base_model": "tiny"}, &served)
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "loop", "name": "big", "base_model": "Qwen/Qwen3-8B"}, &foreign)
	experimental := map[string]any{"advantage_balance": 0.0, "epsilon": nil, "epsilon_high": nil, "importance_sampling_level": "token",
		"kimi_k2_tau": nil, "learning_rate": 0.02, "mask_prob_ratio": false, "max_negative_advantage_importance_sampling_weight": nil,
		"ppo": false, "precalculate_logprobs": false, "scale_rewards": true}
	prompts := []string{"Name a colour.", "Name a fruit.", "Name a city."}

	// The chosen token: the commonest among the untrained model's replies.
	counts := map[int]int{}
	for _, p := range prompts {
		_, ids := lt.sample(t, "tiny", p, 4, 1000)
		for _, reply := range ids {
			for _, id := range reply {
				counts[id]++
			}
		}
	}
	chosen := -1
	for id, n := range counts {
		if chosen < 0 || n > counts[chosen] || (n == counts[chosen] && id < chosen) {
			chosen = id
		}
	}
	grade := func(reply []int) float64 {
		hits := 0
		for _, id := range reply {
			if id == chosen {
				hits++
			}
		}
		return float64(hits) / float64(len(reply))
	}
	meanGrade := func(modelName string, seed int) float64 {
		var sum float64
		n := 0
		for _, p := range prompts {
			_, ids := lt.sample(t, modelName, p, 4, seed)
			for _, reply := range ids {
				sum += grade(reply)
				n++
			}
		}
		return sum / float64(n)
	}
	untrained := meanGrade("alice/loop/agent", 2000)
	t.Logf("untrained: mean grade %.3f (token %d)", untrained, chosen)
	if untrained > 0.3 {
		t.Fatalf("the untrained model already earns %v", untrained)
	}

	// A base model nothing here trains: training_failed on the first poll.
	var job struct {
		ID string `json:"id"`
	}
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": foreign.ID, "trajectory_groups": []any{}, "experimental_config": experimental}, &job)
	if events := pollEvents(t, lt.tf, job.ID, time.Nanosecond); len(events) != 1 || events[0].Type != training.EventTrainingFailed {
		t.Fatalf("job for an untrained base model: %+v", events)
	}

	const maxJobs = 12
	final := untrained
	for step := 1; step <= maxJobs && final <= 0.8; step++ {
		var groups []map[string]any
		for g, p := range prompts {
			choices, ids := lt.sample(t, "alice/loop/agent", p, 4, 100*step+10*g)
			var trajectories []any
			for i, c := range choices {
				trajectories = append(trajectories, map[string]any{
					"messages_and_choices": []any{map[string]any{"role": "user", "content": p}, c},
					"reward":               grade(ids[i]), "tools": nil, "additional_histories": []any{}, "metrics": map[string]any{}, "metadata": map[string]any{}, "logs": []any{},
				})
			}
			groups = append(groups, map[string]any{"trajectories": trajectories, "exceptions": []any{}})
		}
		lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": served.ID, "trajectory_groups": groups, "experimental_config": experimental}, &job)
		events := pollEvents(t, lt.tf, job.ID, time.Minute)
		if events[0].Type != training.EventTrainingStarted || events[len(events)-1].Type != training.EventTrainingEnded {
			t.Fatalf("job %d: events %+v", step, events)
		}
		var started struct {
			NumSequences int `json:"num_sequences"`
		}
		_ = json.Unmarshal(events[0].Data, &started)
		if steps := events[1 : len(events)-1]; len(steps) != started.NumSequences {
			t.Fatalf("job %d: training_started %s then %d gradient steps", step, events[0].Data, len(steps))
		}
		for _, e := range events[1 : len(events)-1] {
			var data map[string]float64 // every value a number
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatalf("gradient_step %s: %v", e.Data, err)
			}
			if data["learning_rate"] != 0.02 || !(data["grad_norm"] > 0) || data["num_trainable_tokens"] < 1 {
				t.Errorf("gradient_step %s", e.Data)
			}
		}
		var checkpoints struct {
			Data []struct {
				Step int64 `json:"step"`
			} `json:"data"`
		}
		lt.tf.call(t, lt.aliceKey, http.MethodGet, "/v1/preview/models/"+served.ID+"/checkpoints?order=desc&limit=1", nil, &checkpoints)
		if len(checkpoints.Data) != 1 || checkpoints.Data[0].Step != int64(step) {
			t.Fatalf("after job %d: checkpoints %+v", step, checkpoints)
		}
		final = meanGrade(fmt.Sprintf("alice/loop/agent:step%d", step), 5000+step)
		t.Logf("job %d: mean grade %.3f", step, final)
	}
	if final <= 0.8 {
		t.Fatalf("mean grade %v untrained, %v after %d jobs", untrained, final, maxJobs)
	}
	// The trained checkpoint is in the standard adapter layout.
	// (The SFT half follows.)
	adapter, found, err := lt.manager.ResolveAdapter(context.Background(), "alice/loop/agent")
	if err != nil || !found {
		t.Fatalf("ResolveAdapter = %+v %v %v", adapter, found, err)
	}
	if _, err := lora.Load(adapter.Path); err != nil {
		t.Fatal(err)
	}
}

type polledEvent struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// pollEvents reads a job's events, as the client polls them, until a
// terminal one arrives or wait has passed (then it fails the test).
func pollEvents(t *testing.T, f *trainingFixture, jobID string, wait time.Duration) []polledEvent {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		var page struct {
			Data []polledEvent `json:"data"`
		}
		f.call(t, f.aliceKey, http.MethodGet, "/v1/preview/training-jobs/"+jobID+"/events?limit=100", nil, &page)
		if n := len(page.Data); n > 0 && (page.Data[n-1].Type == training.EventTrainingEnded || page.Data[n-1].Type == training.EventTrainingFailed) {
			return page.Data
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s has no terminal event: %+v", jobID, page.Data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SFT over HTTP: the data is a JSON-lines file at a URL; the built-in trainer
// runs one step per batch with the schedule's learning rates, the loss falls,
// and the served checkpoint answers the trained answer.
func TestLocalSFTEndToEnd(t *testing.T) {
	lt := newLocalTraining(t)
	var m struct {
		ID string `json:"id"`
	}
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "loop", "name": "sft", "base_model": "tiny"}, &m)
	const question, answer = "What is the password?", "The password is swordfish."
	var data bytes.Buffer
	const lines = 16
	for range lines {
		line, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": question},
			map[string]any{"role": "assistant", "content": answer}}})
		data.Write(append(line, '\n'))
	}
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data.Bytes()) }))
	defer files.Close()
	// A schedule that decays, as one would give it: the last steps settle
	// rather than jump.
	rates := make([]float64, lines)
	for i := range rates {
		rates[i] = 0.02 * float64(lines-i) / lines
	}
	var job struct {
		ID string `json:"id"`
	}
	lt.tf.call(t, lt.aliceKey, http.MethodPost, "/v1/preview/sft-training-jobs", map[string]any{"model_id": m.ID,
		"training_data_url": files.URL + "/train.jsonl", "config": map[string]any{"batch_size": 1, "learning_rate": rates}}, &job)
	events := pollEvents(t, lt.tf, job.ID, time.Minute)
	if events[len(events)-1].Type != training.EventTrainingEnded || len(events) != 2+lines {
		t.Fatalf("events %+v", events)
	}
	// Each step runs at its batch's rate from the list.
	for i, e := range events[1 : len(events)-1] {
		var step map[string]float64
		if err := json.Unmarshal(e.Data, &step); err != nil || step["learning_rate"] != rates[i] {
			t.Fatalf("step %d: learning rate %v (%v), want %v", i+1, step["learning_rate"], err, rates[i])
		}
	}
	var first, last map[string]float64
	_ = json.Unmarshal(events[1].Data, &first)
	_ = json.Unmarshal(events[len(events)-2].Data, &last)
	if !(last["loss"] < first["loss"]/2) {
		t.Errorf("loss %v at the first step, %v at the last", first["loss"], last["loss"])
	}
	c, _ := lt.complete(t, fmt.Sprintf(`{"model":"alice/loop/sft:step1","messages":[{"role":"user","content":%q}],"max_tokens":24,"temperature":0}`, question))
	if got := c.Choices[0].Message.Content; got == nil || !strings.HasSuffix(*got, answer) || c.Choices[0].FinishReason != "stop" {
		t.Errorf("the trained checkpoint answers %q (%s)", derefString(got), c.Choices[0].FinishReason)
	}
	base, _ := lt.complete(t, fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":%q}],"max_tokens":24,"temperature":0}`, question))
	if got := base.Choices[0].Message.Content; got != nil && strings.Contains(*got, answer) {
		t.Errorf("the base model already answers %q", *got)
	}
}

func derefString(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// GET /v1/models lists the trained models of the caller's own entities
// whose base model the server runs, each with its base model as parent and
// the base model's endpoints: never another tenant's (the admin, who may
// touch every project, sees only the admin entity's), never one over a
// base model nothing serves.
func TestTrainedModelsListed(t *testing.T) {
	lt := newLocalTraining(t)
	for _, m := range []struct{ key, project, name, base string }{
		{lt.aliceKey, "loop", "agent", "tiny"},
		{lt.aliceKey, "loop", "big", "Qwen/Qwen3-8B"},
		{lt.adminKey, "ops", "helper", "tiny"},
	} {
		var out struct {
			ID string `json:"id"`
		}
		lt.tf.call(t, m.key, http.MethodPost, "/v1/preview/models", map[string]any{"project": m.project, "name": m.name, "base_model": m.base}, &out)
	}
	list := func(key string) map[string]chat.ModelCard {
		var out struct {
			Data []chat.ModelCard `json:"data"`
		}
		if status := lt.tf.call(t, key, http.MethodGet, "/v1/models", nil, &out); status != http.StatusOK {
			t.Fatalf("GET /v1/models: %d", status)
		}
		cards := map[string]chat.ModelCard{}
		for _, c := range out.Data {
			cards[c.ID] = c
		}
		return cards
	}
	alice, admin := list(lt.aliceKey), list(lt.adminKey)
	agent, ok := alice["alice/loop/agent"]
	if !ok || agent.Parent != "tiny" || agent.MaxModelLen != 256 || !slices.Equal(agent.Endpoints, alice["tiny"].Endpoints) {
		t.Errorf("alice's trained model: %+v in %v", agent, alice)
	}
	if _, ok := alice["alice/loop/big"]; ok {
		t.Errorf("a model over a base nothing serves is listed: %v", alice)
	}
	if _, ok := alice["admin/ops/helper"]; ok {
		t.Errorf("alice sees the admin's model: %v", alice)
	}
	if _, ok := admin["alice/loop/agent"]; ok {
		t.Errorf("the admin sees alice's model: %v", admin)
	}
	if c, ok := admin["admin/ops/helper"]; !ok || c.Parent != "tiny" {
		t.Errorf("the admin's own model: %v", admin)
	}
}
