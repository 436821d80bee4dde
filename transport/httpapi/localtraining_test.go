package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/llm/model"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/training/localtrainer"
)

// The whole loop in one process over HTTP: completions sampled from the
// locally served tiny model (with their token ids and log-probabilities),
// graded, sent back as an RL job for a model whose base model is the served
// one; the built-in trainer works it with no other program, the events carry
// real numbers per gradient step, the checkpoint is listed, and its adapter
// makes the graded replies likelier in proportion to their advantage. A job
// for a base model nothing here trains fails at once.
func TestLocalTrainingEndToEnd(t *testing.T) {
	gateway := sharedGateway(t) // serves "tiny"
	engine := gateway.LocalEngines()["tiny"]
	if engine == nil {
		t.Fatal("the shared gateway serves no local model tiny")
	}
	db := testdb.SQLite(t)
	ctx := context.Background()
	if err := weft.Migrate(ctx, db, training.MigrateQueue(db)); err != nil {
		t.Fatal(err)
	}
	trainer, err := localtrainer.New(localtrainer.Config{Models: map[string]localtrainer.BaseModel{"tiny": localtrainer.Served(engine)},
		LoRA: lora.Config{Rank: 4}, Threads: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = trainer.Close() })
	trainers := &training.TrainerSet{}
	trainers.Add("local", trainer, trainer.BaseModels()...)
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	manager, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: trainers, Workers: 1,
		PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := manager.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = manager.Stop(stopCtx)
	})
	s := &localServer{fixture: newFixture(t, db, 1<<22, func(cfg *Config) { cfg.Chat = gateway; cfg.Training = manager })}
	tf := &trainingFixture{url: s.server.URL, aliceKey: s.aliceKey, adminKey: s.adminKey}

	var served, foreign struct {
		ID string `json:"id"`
	}
	tf.call(t, s.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "loop", "name": "agent", "base_model": "tiny"}, &served)
	tf.call(t, s.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "loop", "name": "big", "base_model": "Qwen/Qwen3-8B"}, &foreign)

	// Rollouts: two prompts, four sampled replies each. The grade is the
	// share of the reply's tokens that are the first token ever sampled.
	type rollout struct {
		prompt, reply []int
		reward        float64
		group         int
	}
	var rollouts []rollout
	var groups []map[string]any
	chosen := -1
	for g, prompt := range []string{"Name a colour.", "Name a fruit."} {
		var trajectories []any
		for i := range 4 {
			c, raw := s.complete(t, fmt.Sprintf(`{"model":"tiny","messages":[{"role":"user","content":%q}],"max_tokens":6,"temperature":1,"seed":%d,"logprobs":true,"return_tokens_as_token_ids":true,"return_token_ids":true}`, prompt, 10*g+i))
			choice := member(t, raw, "choices", 0)
			ids := c.Choices[0].TokenIDs
			if chosen < 0 {
				chosen = ids[0]
			}
			hits := 0
			for _, id := range ids {
				if id == chosen {
					hits++
				}
			}
			r := rollout{prompt: c.PromptTokenIDs, reply: ids, reward: float64(hits) / float64(len(ids)), group: g}
			rollouts = append(rollouts, r)
			trajectories = append(trajectories, map[string]any{
				"messages_and_choices": []any{map[string]any{"role": "user", "content": prompt}, choice},
				"reward":               r.reward, "tools": nil, "additional_histories": []any{}, "metrics": map[string]any{}, "metadata": map[string]any{}, "logs": []any{},
			})
		}
		groups = append(groups, map[string]any{"trajectories": trajectories, "exceptions": []any{}})
	}
	experimental := map[string]any{"advantage_balance": 0.0, "epsilon": nil, "epsilon_high": nil, "importance_sampling_level": "token",
		"kimi_k2_tau": nil, "learning_rate": 0.05, "mask_prob_ratio": false, "max_negative_advantage_importance_sampling_weight": nil,
		"ppo": false, "precalculate_logprobs": false, "scale_rewards": true}

	// A base model nothing here trains: training_failed on the first poll.
	var job struct {
		ID string `json:"id"`
	}
	tf.call(t, s.aliceKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": foreign.ID, "trajectory_groups": groups, "experimental_config": experimental}, &job)
	events := pollEvents(t, tf, job.ID, time.Nanosecond)
	if len(events) != 1 || events[0].Type != training.EventTrainingFailed {
		t.Fatalf("job for an untrained base model: %+v", events)
	}

	tf.call(t, s.aliceKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": served.ID, "trajectory_groups": groups, "experimental_config": experimental}, &job)
	events = pollEvents(t, tf, job.ID, time.Minute)
	if events[0].Type != training.EventTrainingStarted || events[len(events)-1].Type != training.EventTrainingEnded {
		t.Fatalf("events %+v", events)
	}
	var started struct {
		NumSequences int `json:"num_sequences"`
	}
	_ = json.Unmarshal(events[0].Data, &started)
	steps := events[1 : len(events)-1]
	if started.NumSequences < 1 || len(steps) != started.NumSequences {
		t.Fatalf("training_started %s then %d gradient steps", events[0].Data, len(steps))
	}
	for _, e := range steps {
		var data map[string]float64 // every value a number
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("gradient_step %s: %v", e.Data, err)
		}
		if data["learning_rate"] != 0.05 || !(data["grad_norm"] > 0) || data["num_trainable_tokens"] < 1 {
			t.Errorf("gradient_step %s", e.Data)
		}
		if _, ok := data["policy_loss"]; !ok {
			t.Errorf("gradient_step lacks policy_loss: %s", e.Data)
		}
	}
	var checkpoints struct {
		Data []struct {
			Step    int64              `json:"step"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"data"`
	}
	tf.call(t, s.aliceKey, http.MethodGet, "/v1/preview/models/"+served.ID+"/checkpoints?order=desc&limit=1", nil, &checkpoints)
	if len(checkpoints.Data) != 1 || checkpoints.Data[0].Step != 1 {
		t.Fatalf("checkpoints %+v", checkpoints)
	}
	if _, ok := checkpoints.Data[0].Metrics["grad_norm"]; !ok {
		t.Errorf("checkpoint metrics %v lack the steps' averages", checkpoints.Data[0].Metrics)
	}

	// The adapter in the standard layout, scored on the sampled replies: the
	// policy objective Σ A·log p(reply) rose.
	adapter, found, err := manager.ResolveAdapter(ctx, "alice/loop/agent:step1")
	if err != nil || !found || adapter.Path == "" {
		t.Fatalf("ResolveAdapter = %+v %v %v", adapter, found, err)
	}
	trained, err := lora.Load(adapter.Path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(engine.Dir(), model.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	objective := func(a *lora.Adapter) float64 {
		var sum float64
		for g := range 2 {
			var rewards []float64
			var members []rollout
			for _, r := range rollouts {
				if r.group == g {
					rewards = append(rewards, r.reward)
					members = append(members, r)
				}
			}
			mean := 0.0
			for _, r := range rewards {
				mean += r / float64(len(rewards))
			}
			for _, r := range members {
				tokens := append(append([]int32(nil), toInt32(r.prompt)...), toInt32(r.reply)...)
				targets := make([]int32, len(tokens))
				for i := range targets {
					targets[i] = model.NoTarget
					if i+1 >= len(r.prompt) && i+1 < len(tokens) {
						targets[i] = tokens[i+1]
					}
				}
				pass, err := m.TrainForward(a, []model.TrainSequence{{Tokens: tokens, Targets: targets}})
				if err != nil {
					t.Fatal(err)
				}
				for _, lp := range pass.Logprobs[0] {
					sum += (r.reward - mean) * float64(lp)
				}
			}
		}
		return sum
	}
	before, after := objective(nil), objective(trained)
	if !(after > before) {
		t.Errorf("Σ advantage·log p(reply): %v before training, %v after", before, after)
	}
}

func toInt32(ids []int) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
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
