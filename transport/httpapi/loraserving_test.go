package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/chat/chatstore"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/internal/llm/llmtest"
	"github.com/weftlabs/weft/internal/llm/llmtest/llmcheck"
	"github.com/weftlabs/weft/internal/llm/lora"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
)

// TestServeTrainedCheckpointsLocally trains a model on a local base model
// (the stand-in trainer writes real adapters as checkpoints 1 and 2) and
// completes over HTTP with the checkpoint names an ART client uses: each
// is answered by the local engine with its adapter applied, several at
// once in shared passes, each as it answers alone.
func TestServeTrainedCheckpointsLocally(t *testing.T) {
	t.Parallel()
	f, dir, adapters := newLocalCheckpoints(t, testdb.SQLite(t), map[int]lora.Config{1: {}, 2: {Rank: 4, Targets: []lora.Target{lora.Q, lora.V, lora.Down}}})
	trainModel(t, f, f.aliceKey, "mail", "agent", 2)

	type answer struct {
		PromptTokenIDs []int `json:"prompt_token_ids"`
		Model          string
		Choices        []struct {
			TokenIDs []int `json:"token_ids"`
		}
	}
	complete := func(t *testing.T, name string) answer {
		body := map[string]any{"model": name, "messages": []map[string]string{{"role": "user", "content": "Write a poem about the sea."}},
			"max_tokens": 10, "temperature": 0, "ignore_eos": true, "return_token_ids": true}
		var a answer
		if status := f.call(t, f.aliceKey, http.MethodPost, "/v1/chat/completions", body, &a); status != http.StatusOK || len(a.Choices) != 1 {
			t.Fatalf("%s: status %d, %+v", name, status, a)
		}
		return a
	}
	names := map[string]string{ // name → the adapter it must apply
		"tiny-base":                                "",
		"alice/mail/agent:step0":                   "",
		"alice/mail/agent:step1":                   filepath.Join(adapters, "step1"),
		"wandb-artifact:///alice/mail/agent:step2": filepath.Join(adapters, "step2"),
		"wandb-artifact:///alice/mail/agent":       filepath.Join(adapters, "step2"), // latest
	}
	alone := map[string][]int{}
	for name, adapter := range names {
		a := complete(t, name)
		want := llmcheck.Greedy(t, dir, adapter, a.PromptTokenIDs, 10)
		if got := a.Choices[0].TokenIDs; !slices.Equal(got, want) {
			t.Fatalf("%s: served %v, the model with adapter %q gives %v", name, got, adapter, want)
		}
		alone[name] = a.Choices[0].TokenIDs
	}
	if slices.Equal(alone["tiny-base"], alone["alice/mail/agent:step1"]) || slices.Equal(alone["alice/mail/agent:step1"], alone["wandb-artifact:///alice/mail/agent:step2"]) {
		t.Fatal("the checkpoints answer as the base model does")
	}

	// All at once: the same answers.
	var wg sync.WaitGroup
	for range 2 {
		for name := range names {
			wg.Go(func() {
				if got := complete(t, name).Choices[0].TokenIDs; !slices.Equal(got, alone[name]) {
					t.Errorf("%s among others: %v, alone %v", name, got, alone[name])
				}
			})
		}
	}
	wg.Wait()

	if status := f.call(t, f.aliceKey, http.MethodPost, "/v1/chat/completions", map[string]any{
		"model": "alice/mail/agent:step9", "messages": []map[string]string{{"role": "user", "content": "hi"}}}, nil); status != http.StatusNotFound {
		t.Fatalf("a step never trained: %d, want 404", status)
	}
}

// newLocalCheckpoints serves a tiny random Qwen3 from dir as "tiny-base"
// beside the training routes, on db; the stand-in trainer's job number N
// writes the adapter of steps[N], saved under adapters, as checkpoint N.
func newLocalCheckpoints(t *testing.T, db *weft.DB, steps map[int]lora.Config) (f *trainingFixture, dir, adapters string) {
	t.Helper()
	dims := llmtest.TinyQwen3
	dir = llmtest.ModelDir{Dims: dims, Tokenizer: llmtest.TokenizerQwen3}.Write(t)
	adapters = t.TempDir()
	for step, cfg := range steps {
		a := llmtest.RandomAdapter(dims.LoRAShape(), cfg, uint64(step), 1)
		if err := lora.Save(filepath.Join(adapters, fmt.Sprintf("step%d", step)), a); err != nil {
			t.Fatal(err)
		}
	}
	f = newTrainingFixture(t, db, trainingOptions{
		workers: 1, env: []string{"TESTTRAINER_ADAPTERS=" + adapters},
		chat: func(store *training.Store, metrics prometheus.Registerer) chat.Service {
			routing, err := chat.ParseRouting(fmt.Appendf(nil,
				"models: [{name: tiny-base, upstreams: [{kind: local, path: %q, threads: 1, kv_cache_bytes: 64MiB}]}]", dir), nil, inprocess.Kind)
			if err != nil {
				t.Fatal(err)
			}
			g := openLocalGateway(t, chat.Config{Routing: routing, Adapters: chatstore.Adapters{Training: store}, Registerer: metrics, Logger: slog.New(slog.DiscardHandler)})
			t.Cleanup(func() { g.Close(context.Background()) })
			return g
		},
	})
	return f, dir, adapters
}

// trainModel registers project/name over "tiny-base" with key and runs
// jobs training jobs of it to their end; it returns the model.
func trainModel(t *testing.T, f *trainingFixture, key, project, name string, jobs int) training.Model {
	t.Helper()
	var m training.Model
	register := map[string]any{"project": project, "name": name, "base_model": "tiny-base"}
	if status := f.call(t, key, http.MethodPost, "/v1/preview/models", register, &m); status != http.StatusOK {
		t.Fatalf("register: %d", status)
	}
	for range jobs {
		var job struct{ ID string }
		body := map[string]any{"model_id": m.ID, "trajectory_groups": groups(2), "experimental_config": experimentalConfig}
		if status := f.call(t, key, http.MethodPost, "/v1/preview/training-jobs", body, &job); status != http.StatusOK {
			t.Fatalf("create job: %d", status)
		}
		if end := terminalEvents(f.pollEvents(t, job.ID)); len(end) != 1 || end[0].Type != training.EventTrainingEnded {
			t.Fatalf("job ended with %+v", end)
		}
	}
	return m
}
