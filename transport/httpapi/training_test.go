package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat"
	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/training/exectrainer"
)

// testTrainer is the stand-in GPU trainer, built once.
func testTrainer(t testing.TB) string { return gobuild.Binary(t, "./internal/testtrainer") }

type trainingFixture struct {
	url      string
	adminKey string
	aliceKey string
	manager  *training.Store
	blobs    *blob.Dir
	db       *weft.DB
}

type trainingOptions struct {
	env         []string
	workers     int
	maxAttempts int
	// chat, when set, makes the completions gateway served beside the
	// training routes, given the training store to resolve checkpoints and
	// the registry /metrics serves.
	chat func(*training.Store, prometheus.Registerer) chat.Service
}

func newTrainingFixture(t testing.TB, db *weft.DB, opts trainingOptions) *trainingFixture {
	t.Helper()
	ctx := context.Background()
	if err := weft.Migrate(ctx, db, training.MigrateQueue(db)); err != nil {
		t.Fatal(err)
	}
	identity, adminKey, aliceKey := testIdentity(t, db)
	trainer, err := exectrainer.New(exectrainer.Config{Command: []string{testTrainer(t)}, Env: opts.env, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if opts.maxAttempts == 0 {
		opts.maxAttempts = 2
	}
	logger := slog.New(slog.DiscardHandler)
	manager, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: trainer, Workers: opts.workers,
		MaxAttempts: opts.maxAttempts, RetryDelay: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond,
		WatchdogInterval: 200 * time.Millisecond, Logger: logger, DataHosts: []string{"127.0.0.1"}}) // the tests' data servers
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
	cfg := Config{Identity: identity, Training: manager, Logger: logger, Registry: prometheus.NewRegistry()}
	if opts.chat != nil {
		cfg.Chat = opts.chat(manager, cfg.Registry)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	return &trainingFixture{url: server.URL, adminKey: adminKey, aliceKey: aliceKey, manager: manager, blobs: blobs, db: db}
}

// call sends a JSON request with a Bearer key and decodes the answer into out
// (when not nil; a *[]byte takes the body as it is); it returns the status.
func (f *trainingFixture) call(t testing.TB, key, method, path string, body any, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			b, _ = json.Marshal(body)
		}
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.url+path, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if b, ok := out.(*[]byte); ok {
		*b = raw
	} else if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// groups builds n trajectory groups the way ART serialises them: choices with
// logprobs, plain messages, tools null, all keys present.
func groups(n int) []map[string]any {
	out := make([]map[string]any, n)
	for g := range out {
		trajs := make([]map[string]any, 4)
		for i := range trajs {
			trajs[i] = map[string]any{
				"messages_and_choices": []any{
					map[string]any{"role": "system", "content": "You are an email search agent."},
					map[string]any{"role": "user", "content": fmt.Sprintf("Find the invoice from scenario %d", g)},
					map[string]any{"finish_reason": "stop", "index": 0, "message": map[string]any{"role": "assistant", "content": "It is in the inbox.", "tool_calls": nil},
						"logprobs": map[string]any{"content": []any{map[string]any{"token": "token_id:42", "logprob": -0.12, "bytes": []int{73}, "top_logprobs": []any{}}}}},
				},
				"tools": nil, "additional_histories": []any{}, "reward": float64(i) / 3, "initial_policy_version": nil,
				"metrics": map[string]any{"correct": i%2 == 0, "turns": 2}, "metadata": map[string]any{"scenario": g}, "logs": []any{},
			}
		}
		out[g] = map[string]any{"trajectories": trajs, "exceptions": []any{}, "metadata": map[string]any{}, "metrics": map[string]any{"difficulty": 0.5}, "logs": []any{}}
	}
	return out
}

// experimentalConfig is what ART's 11-field client sends: every key, mostly null.
var experimentalConfig = map[string]any{"advantage_balance": 0.0, "epsilon": nil, "epsilon_high": nil,
	"importance_sampling_level": "token", "kimi_k2_tau": nil, "learning_rate": 5e-6, "mask_prob_ratio": false,
	"max_negative_advantage_importance_sampling_weight": nil, "ppo": false, "precalculate_logprobs": false,
	"scale_rewards": true, "loss_fn": "cispo"}

type listPage struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
	FirstID string            `json:"first_id"`
	LastID  string            `json:"last_id"`
}

type eventItem struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

type checkpointItem struct {
	ID      string             `json:"id"`
	Step    int64              `json:"step"`
	Metrics map[string]float64 `json:"metrics"`
}

// pollEvents follows the ART client's loop: fetch everything after the cursor
// (following has_more), do not advance the cursor for training_started, insist
// on training_started before gradient_step, stop at a terminal event. It
// returns every event seen once, in order.
func (f *trainingFixture) pollEvents(t testing.TB, jobID string) []eventItem {
	t.Helper()
	var all []eventItem
	seen := map[string]bool{}
	cursor := ""
	started := false
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		after := cursor
		for {
			path := "/v1/preview/training-jobs/" + jobID + "/events"
			if after != "" {
				path += "?after=" + after
			}
			var page listPage
			if status := f.call(t, f.adminKey, http.MethodGet, path, nil, &page); status != http.StatusOK {
				t.Fatalf("events: %d", status)
			}
			for _, raw := range page.Data {
				var e eventItem
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				if !seen[e.ID] {
					seen[e.ID] = true
					all = append(all, e)
				}
				switch e.Type {
				case training.EventTrainingStarted:
					if _, ok := e.Data["num_sequences"].(float64); !ok {
						t.Fatalf("training_started without numeric num_sequences: %v", e.Data)
					}
					started = true
					continue // ART does not advance its cursor here
				case training.EventGradientStep:
					if !started {
						t.Fatal("gradient_step before training_started")
					}
					for k, v := range e.Data {
						if _, ok := v.(float64); !ok {
							t.Fatalf("gradient_step value %s=%v is not a number", k, v)
						}
					}
				case training.EventTrainingEnded, training.EventTrainingFailed:
					return all
				}
				cursor = e.ID
			}
			if !page.HasMore || len(page.Data) == 0 {
				break
			}
			var last eventItem
			_ = json.Unmarshal(page.Data[len(page.Data)-1], &last)
			after = last.ID
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no terminal event for job %s; saw %d events", jobID, len(all))
	return nil
}

func terminalEvents(events []eventItem) []eventItem {
	var out []eventItem
	for _, e := range events {
		if e.Type == training.EventTrainingEnded || e.Type == training.EventTrainingFailed {
			out = append(out, e)
		}
	}
	return out
}

// TestTrainingARTFlow runs the ART serverless client's whole flow over HTTP
// against the exec trainer running internal/testtrainer.
func TestTrainingARTFlow(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTrainingFixture(t, db, trainingOptions{workers: 2, env: []string{"TESTTRAINER_STEP_DELAY=5ms"}})

		// register: entity null → the key's entity; return_existing is idempotent.
		register := map[string]any{"entity": nil, "project": "mail", "name": "agent-001", "base_model": "Qwen/Qwen3-14B-Instruct", "return_existing": true, "extra": 1}
		var model training.Model
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", register, &model); status != http.StatusOK {
			t.Fatalf("register: %d", status)
		}
		if model.Entity != "admin" || model.ID == "" || model.RunID == nil {
			t.Fatalf("model = %+v", model)
		}
		var again training.Model
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", register, &again)
		if again.ID != model.ID {
			t.Fatalf("return_existing gave %s, want %s", again.ID, model.ID)
		}
		register["return_existing"] = false
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", register, nil); status != http.StatusConflict {
			t.Fatalf("clash: %d, want 409", status)
		}
		register["return_existing"], register["base_model"] = true, "other/base"
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", register, nil); status != http.StatusConflict {
			t.Fatalf("clash on base model: %d, want 409", status)
		}

		// log: metrics land on step 0 as val/*.
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models/"+model.ID+"/log",
			map[string]any{"model_id": model.ID, "split": "val", "trajectory_groups": groups(3)}, nil); status != http.StatusOK {
			t.Fatalf("log: %d", status)
		}
		var cps listPage
		f.call(t, f.adminKey, http.MethodGet, "/v1/preview/models/"+model.ID+"/checkpoints?limit=1&order=desc", nil, &cps)
		var step0 checkpointItem
		_ = json.Unmarshal(cps.Data[0], &step0)
		if step0.Step != 0 || step0.Metrics["val/reward"] != 0.5 || step0.Metrics["val/correct"] != 0.5 || step0.Metrics["val/group_metric_difficulty"] != 0.5 {
			t.Fatalf("step 0 after log = %+v", step0)
		}

		// train: the id comes back at once, events follow, the checkpoint is
		// listed by the time training_ended is seen.
		var created struct{ ID string }
		body := map[string]any{"model_id": model.ID, "trajectory_groups": groups(4), "experimental_config": experimentalConfig}
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", body, &created); status != http.StatusOK || created.ID == "" {
			t.Fatalf("create job: %d %q", status, created.ID)
		}
		events := f.pollEvents(t, created.ID)
		if events[0].Type != training.EventTrainingStarted || events[0].Data["num_sequences"] != 16.0 {
			t.Fatalf("first event = %+v", events[0])
		}
		if end := terminalEvents(events); len(end) != 1 || end[0].Type != training.EventTrainingEnded || len(events) != 18 {
			t.Fatalf("events = %+v", events)
		}
		f.call(t, f.adminKey, http.MethodGet, "/v1/preview/models/"+model.ID+"/checkpoints?limit=1&order=desc", nil, &cps)
		var latest checkpointItem
		_ = json.Unmarshal(cps.Data[0], &latest)
		if latest.Step != 1 || latest.Metrics["loss"] == 0 || latest.Metrics["train/reward"] != 0.5 || latest.Metrics["learning_rate"] != 5e-6 {
			t.Fatalf("latest checkpoint = %+v", latest)
		}
		var job training.Job
		f.call(t, f.adminKey, http.MethodGet, "/v1/preview/training-jobs/"+created.ID, nil, &job)
		if job.Status != training.StatusCompleted || job.TrainingStart == nil || job.TrainingEnd == nil {
			t.Fatalf("job = %+v", job)
		}

		// complete with the trained model name: it resolves to the new adapter.
		adapter, ok, err := f.manager.ResolveAdapter(context.Background(), "wandb-artifact:///admin/mail/agent-001")
		if err != nil || !ok || adapter.Name != "admin/mail/agent-001:step1" || adapter.BaseModel != "Qwen/Qwen3-14B-Instruct" {
			t.Fatalf("resolve latest = %+v %v %v", adapter, ok, err)
		}
		if b, err := os.ReadFile(filepath.Join(adapter.Path, "adapter_model.safetensors")); err != nil || string(b) != "weights of step 1" {
			t.Fatalf("adapter files: %q %v", b, err)
		}
		if a, ok, _ := f.manager.ResolveAdapter(context.Background(), "admin/mail/agent-001:step0"); !ok || a.Step != 0 || a.Path != "" {
			t.Fatalf("resolve step0 = %+v %v", a, ok)
		}
		if _, ok, _ := f.manager.ResolveAdapter(context.Background(), "admin/mail/agent-001:step7"); ok {
			t.Fatal("step7 resolved")
		}

		// a second job starts from step 1 and makes step 2.
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", body, &created)
		f.pollEvents(t, created.ID)
		f.call(t, f.adminKey, http.MethodGet, "/v1/preview/models/"+model.ID+"/checkpoints?limit=1&order=desc", nil, &cps)
		_ = json.Unmarshal(cps.Data[0], &latest)
		if latest.Step != 2 {
			t.Fatalf("second job made step %d", latest.Step)
		}

		// delete checkpoints (JSON body on DELETE), then the model.
		var deleted training.DeleteCheckpointsRes
		f.call(t, f.adminKey, http.MethodDelete, "/v1/preview/models/"+model.ID+"/checkpoints", map[string]any{"steps": []int{0, 1, 9}}, &deleted)
		if deleted.DeletedCount != 2 || len(deleted.NotFoundSteps) != 1 || deleted.NotFoundSteps[0] != 9 {
			t.Fatalf("delete checkpoints = %+v", deleted)
		}
		var gone training.DeleteModelRes
		if status := f.call(t, f.adminKey, http.MethodDelete, "/v1/preview/models/"+model.ID, nil, &gone); status != http.StatusOK || gone.DeletedCheckpoints != 1 {
			t.Fatalf("delete model: %d %+v", status, gone)
		}
		if status := f.call(t, f.adminKey, http.MethodGet, "/v1/preview/models/"+model.ID, nil, nil); status != http.StatusNotFound {
			t.Fatalf("deleted model: %d", status)
		}
	})
}

// TestTrainingSFT runs SFT jobs from an http URL: good data trains, missing
// data fails the job (not the request) with a clear message.
func TestTrainingSFT(t *testing.T) {
	t.Parallel()
	data := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/train.jsonl" {
			http.NotFound(w, r)
			return
		}
		for i := range 5 {
			fmt.Fprintf(w, `{"messages":[{"role":"user","content":"q%d"},{"role":"assistant","content":"a%d"}]}`+"\n", i, i)
		}
	}))
	t.Cleanup(data.Close)
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTrainingFixture(t, db, trainingOptions{workers: 1})
		var model training.Model
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "sft", "base_model": "b"}, &model)
		var created struct{ ID string }
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/sft-training-jobs",
			map[string]any{"model_id": model.ID, "training_data_url": data.URL + "/train.jsonl", "config": map[string]any{"learning_rate": 1e-5}}, &created)
		events := f.pollEvents(t, created.ID)
		if events[0].Data["num_sequences"] != 3.0 || terminalEvents(events)[0].Type != training.EventTrainingEnded {
			t.Fatalf("sft events = %+v", events)
		}
		var again struct{ ID string }
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/sft-training-jobs",
			map[string]any{"model_id": model.ID, "training_data_url": data.URL + "/train.jsonl", "config": map[string]any{"learning_rate": 1e-5}}, &again)
		if again.ID != created.ID {
			t.Fatal("identical SFT submission made a second job")
		}
		for _, url := range []string{data.URL + "/missing.jsonl", "trace:///admin/p/object/data:v0"} {
			if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/sft-training-jobs",
				map[string]any{"model_id": model.ID, "training_folder_url": url, "config": nil}, &created); status != http.StatusOK {
				t.Fatalf("bad data must fail the job, not the request: %d", status)
			}
			end := terminalEvents(f.pollEvents(t, created.ID))
			msg, _ := end[0].Data["error_message"].(string)
			if end[0].Type != training.EventTrainingFailed || !strings.Contains(msg, "training data") {
				t.Fatalf("bad data %s: %+v", url, end)
			}
		}
	})
}

// TestTrainingKilledTrainer kills the trainer process mid-job: with a retry
// left the job succeeds on the next attempt, without one it fails; never
// silence.
func TestTrainingKilledTrainer(t *testing.T) {
	t.Parallel()
	for _, attempts := range []int{1, 2} {
		t.Run(strconv.Itoa(attempts), func(t *testing.T) {
			t.Parallel()
			testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
				pidFile := filepath.Join(t.TempDir(), "pid")
				f := newTrainingFixture(t, db, trainingOptions{workers: 1, maxAttempts: attempts,
					env: []string{"TESTTRAINER_STEP_DELAY=100ms", "TESTTRAINER_PID_FILE=" + pidFile}})
				var model training.Model
				f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": "b"}, &model)
				var created struct{ ID string }
				f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(2)}, &created)
				// Kill the first attempt's trainer once it has reported a step.
				deadline := time.Now().Add(30 * time.Second)
				for {
					var page listPage
					f.call(t, f.adminKey, http.MethodGet, "/v1/preview/training-jobs/"+created.ID+"/events", nil, &page)
					if len(page.Data) >= 2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("trainer never reported a step")
					}
					time.Sleep(20 * time.Millisecond)
				}
				b, err := os.ReadFile(pidFile)
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(string(b))
				_ = os.Remove(pidFile)
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				end := terminalEvents(f.pollEvents(t, created.ID))
				want := training.EventTrainingFailed
				if attempts > 1 {
					want = training.EventTrainingEnded
				}
				if len(end) != 1 || end[0].Type != want {
					t.Fatalf("after kill with %d attempts: %+v", attempts, end)
				}
			})
		})
	}
}

// TestTrainingWatchdogAndCancel: a job the queue gave up on, and a cancelled
// job, each get exactly one training_failed.
func TestTrainingWatchdogAndCancel(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTrainingFixture(t, db, trainingOptions{workers: 0}) // nobody runs jobs
		var model training.Model
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": "b"}, &model)
		var lost, cancelled struct{ ID string }
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(1)}, &lost)
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(1)}, &cancelled)
		// The queue lost the job (River's cleaner removed it, or it was deleted by
		// hand): only the watchdog can end it.
		if _, err := db.ExecContext(context.Background(), "DELETE FROM river_job WHERE CAST(args AS TEXT) LIKE ?", "%"+lost.ID+"%"); err != nil {
			t.Fatal(err)
		}
		var job training.Job
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs/"+cancelled.ID+"/cancel", nil, &job); status != http.StatusOK || job.Status != training.StatusCancelled {
			t.Fatalf("cancel: %d %+v", status, job)
		}
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs/"+cancelled.ID+"/cancel", nil, &job)
		for _, id := range []string{lost.ID, cancelled.ID} {
			events := f.pollEvents(t, id)
			if len(events) != 1 || events[0].Type != training.EventTrainingFailed || events[0].Data["error_message"] == "" {
				t.Fatalf("job %s events = %+v", id, events)
			}
		}
		if n, err := f.manager.Sweep(context.Background()); err != nil || n != 0 {
			t.Fatalf("second sweep ended %d jobs (%v)", n, err)
		}
	})
}

// TestTrainingPagination walks events and checkpoints page by page.
func TestTrainingPagination(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTrainingFixture(t, db, trainingOptions{workers: 1})
		var model training.Model
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": "b"}, &model)
		var created struct{ ID string }
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(5)}, &created)
		all := f.pollEvents(t, created.ID) // 1 + 20 + 1 = 22 events
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(1)}, &created)
		f.pollEvents(t, created.ID)
		if len(all) != 22 {
			t.Fatalf("%d events", len(all))
		}
		jobID := ""
		var first listPage
		f.call(t, f.adminKey, http.MethodGet, "/v1/preview/training-jobs/"+created.ID+"/events", nil, &first)
		_ = jobID
		tests := []struct {
			name, path    string
			wantLen       int
			wantMore      bool
			wantFirstStep int64
		}{
			{"checkpoints default asc", "?", 3, false, 0},
			{"checkpoints desc limit 1", "?limit=1&order=desc", 1, true, 2},
			{"checkpoints limit 2", "?limit=2", 2, true, 0},
			{"checkpoints limit 100", "?limit=100", 3, false, 0},
		}
		for _, tt := range tests {
			var page listPage
			f.call(t, f.adminKey, http.MethodGet, "/v1/preview/models/"+model.ID+"/checkpoints"+tt.path, nil, &page)
			var c checkpointItem
			_ = json.Unmarshal(page.Data[0], &c)
			if page.Object != "list" || len(page.Data) != tt.wantLen || page.HasMore != tt.wantMore || c.Step != tt.wantFirstStep || page.FirstID != c.ID {
				t.Errorf("%s: %+v", tt.name, page)
			}
		}
		// desc with after walks to older steps and ends with an empty last page.
		var steps []int64
		after := ""
		for range 5 {
			var page listPage
			f.call(t, f.adminKey, http.MethodGet, "/v1/preview/models/"+model.ID+"/checkpoints?limit=1&order=desc&after="+after, nil, &page)
			for _, raw := range page.Data {
				var c checkpointItem
				_ = json.Unmarshal(raw, &c)
				steps = append(steps, c.Step)
			}
			if !page.HasMore {
				break
			}
			after = page.LastID
		}
		if fmt.Sprint(steps) != "[2 1 0]" {
			t.Fatalf("desc walk = %v", steps)
		}
		// events: pages of 10 from the first job.
		jobEvents := all
		lastID := jobEvents[len(jobEvents)-1].ID
		var got []string
		cursor := ""
		for {
			var page listPage
			path := "/v1/preview/training-jobs/" + jobIDOf(t, f, model.ID) + "/events?limit=10"
			if cursor != "" {
				path += "&after=" + cursor
			}
			f.call(t, f.adminKey, http.MethodGet, path, nil, &page)
			for _, raw := range page.Data {
				var e eventItem
				_ = json.Unmarshal(raw, &e)
				got = append(got, e.ID)
			}
			if !page.HasMore {
				break
			}
			cursor = page.LastID
		}
		if len(got) != 22 || got[21] != lastID {
			t.Fatalf("paged %d events", len(got))
		}
		var empty listPage
		f.call(t, f.adminKey, http.MethodGet, "/v1/preview/training-jobs/"+jobIDOf(t, f, model.ID)+"/events?after="+lastID, nil, &empty)
		if len(empty.Data) != 0 || empty.HasMore || empty.FirstID != "" || empty.LastID != "" {
			t.Fatalf("page after the last event = %+v", empty)
		}
	})
}

// jobIDOf returns the first job of a model.
func jobIDOf(t testing.TB, f *trainingFixture, modelID string) string {
	t.Helper()
	var id string
	if err := f.db.NewSelect().Table("training_jobs").Column("id").Where("project_id = ? AND model_id = ?", projectOfID(t, f.db, modelID), modelID).
		Order("created_at ASC").Limit(1).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// projectOfID returns the project of a model or job id (statements on training
// tables name the project, as the store's do, so that they run on one shard).
func projectOfID(t testing.TB, db *weft.DB, id string) string {
	t.Helper()
	var projectID string
	if err := db.NewSelect().Table("training_ids").Column("project_id").Where("id = ?", id).Scan(context.Background(), &projectID); err != nil {
		t.Fatal(err)
	}
	return projectID
}

// TestTrainingBadInput: 401, 403, 404 and 422 in FastAPI's shape, never 500.
func TestTrainingBadInput(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *weft.DB) {
		f := newTrainingFixture(t, db, trainingOptions{workers: 0})
		var model training.Model
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": "b"}, &model)
		var job struct{ ID string }
		f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": []any{}}, &job)
		badGroup := groups(1)
		badGroup[0]["trajectories"].([]map[string]any)[0]["messages_and_choices"] = []any{42}
		tests := []struct {
			name, key, method, path string
			body                    any
			want                    int
		}{
			{"no key", "", http.MethodGet, "/v1/preview/models/" + model.ID, nil, 401},
			{"wrong key", "wf_nope", http.MethodGet, "/v1/preview/models/" + model.ID, nil, 401},
			{"other entity's model", f.aliceKey, http.MethodGet, "/v1/preview/models/" + model.ID, nil, 403},
			{"other entity's events", f.aliceKey, http.MethodGet, "/v1/preview/training-jobs/" + job.ID + "/events", nil, 403},
			{"register in other entity", f.aliceKey, http.MethodPost, "/v1/preview/models", map[string]any{"entity": "admin", "project": "p", "name": "x", "base_model": "b"}, 403},
			{"unknown model", f.adminKey, http.MethodGet, "/v1/preview/models/nope", nil, 404},
			{"unknown job", f.adminKey, http.MethodGet, "/v1/preview/training-jobs/nope/events", nil, 404},
			{"unknown cursor", f.adminKey, http.MethodGet, "/v1/preview/training-jobs/" + job.ID + "/events?after=nope", nil, 404},
			{"job for unknown model", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": "nope", "trajectory_groups": []any{}}, 404},
			{"limit 0", f.adminKey, http.MethodGet, "/v1/preview/training-jobs/" + job.ID + "/events?limit=0", nil, 422},
			{"limit 101", f.adminKey, http.MethodGet, "/v1/preview/models/" + model.ID + "/checkpoints?limit=101", nil, 422},
			{"order sideways", f.adminKey, http.MethodGet, "/v1/preview/models/" + model.ID + "/checkpoints?order=sideways", nil, 422},
			{"missing name", f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "base_model": "b"}, 422},
			{"name with slash", f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "a/b", "base_model": "b"}, 422},
			{"missing groups", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID}, 422},
			{"message is a number", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": badGroup}, 422},
			{"log bad group", f.adminKey, http.MethodPost, "/v1/preview/models/" + model.ID + "/log", map[string]any{"trajectory_groups": badGroup}, 422},
			{"reward a string", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", []byte(`{"model_id":"` + model.ID + `","trajectory_groups":[{"trajectories":[{"messages_and_choices":[],"reward":"high"}]}]}`), 422},
			{"bad sampling level", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": []any{}, "experimental_config": map[string]any{"importance_sampling_level": "word"}}, 422},
			{"config not an object", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": []any{}, "experimental_config": 3}, 422},
			{"sft bad scheme", f.adminKey, http.MethodPost, "/v1/preview/sft-training-jobs", map[string]any{"model_id": model.ID, "training_data_url": "ftp://x/y"}, 422},
			{"sft no url", f.adminKey, http.MethodPost, "/v1/preview/sft-training-jobs", map[string]any{"model_id": model.ID, "training_data_url": nil}, 422},
			{"broken json", f.adminKey, http.MethodPost, "/v1/preview/training-jobs", []byte(`{"model_id":`), 422},
			{"steps not ints", f.adminKey, http.MethodDelete, "/v1/preview/models/" + model.ID + "/checkpoints", map[string]any{"steps": []any{"a"}}, 422},
		}
		for _, tt := range tests {
			var body map[string]any
			status := f.call(t, tt.key, tt.method, tt.path, tt.body, &body)
			if status != tt.want {
				t.Errorf("%s: %d, want %d (%v)", tt.name, status, tt.want, body)
				continue
			}
			if status == 422 {
				if _, ok := body["detail"].([]any); !ok {
					t.Errorf("%s: 422 body is not FastAPI's list: %v", tt.name, body)
				}
			}
		}
		// Config objects answer a non-object as pydantic does a dict field.
		for _, path := range []string{"/v1/preview/training-jobs", "/v1/preview/sft-training-jobs"} {
			field := map[string]string{"/v1/preview/training-jobs": "experimental_config", "/v1/preview/sft-training-jobs": "config"}[path]
			var body map[string]any
			status := f.call(t, f.adminKey, http.MethodPost, path, map[string]any{"model_id": model.ID, "trajectory_groups": []any{}, "training_data_url": "https://x/y", field: []any{1}}, &body)
			want := []any{map[string]any{"loc": []any{"body", field}, "msg": "Input should be a valid dictionary", "type": "dict_type", "input": []any{1.0}}}
			if status != 422 || !reflect.DeepEqual(body["detail"], want) {
				t.Errorf("%s %s not an object: %d %v", path, field, status, body)
			}
		}
		// kimi_k2_tau is accepted as variant_k2_tau; nulls and unknown keys are fine.
		cfg := map[string]any{"kimi_k2_tau": 0.5, "epsilon": nil, "something_new": true}
		if status := f.call(t, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(1), "experimental_config": cfg, "unknown": 1}, &job); status != http.StatusOK {
			t.Fatalf("null/alias/unknown config: %d", status)
		}
		var stored string
		if err := db.NewSelect().Table("training_jobs").Column("experimental_config").Where("project_id = ? AND id = ?", projectOfID(t, db, job.ID), job.ID).Scan(context.Background(), &stored); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stored, `"variant_k2_tau":0.5`) || strings.Contains(stored, "epsilon") || !strings.Contains(stored, "something_new") {
			t.Fatalf("stored config = %s", stored)
		}
	})
}

// The training routes read their body raw and decode it themselves; the
// document still describes the JSON they take, so that clients (and the
// hostile sweep) can build it.
func TestTrainingBodiesDocumented(t *testing.T) {
	t.Parallel()
	identity, _, _ := testIdentity(t, testdb.SQLite(t))
	h, err := New(Config{Identity: identity, Training: (*training.Store)(nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	doc := h.API().OpenAPI()
	for path, field := range map[string]string{
		"/v1/preview/models": "base_model", "/v1/preview/models/{model_id}/log": "trajectory_groups",
		"/v1/preview/training-jobs": "model_id", "/v1/preview/sft-training-jobs": "training_data_url",
	} {
		media := doc.Paths[path].Post.RequestBody.Content["application/json"]
		if media == nil || len(doc.Paths[path].Post.RequestBody.Content) != 1 {
			t.Errorf("%s: body documented as %v", path, doc.Paths[path].Post.RequestBody.Content)
			continue
		}
		if schema := doc.Components.Schemas.SchemaFromRef(media.Schema.Ref); schema == nil || schema.Properties[field] == nil {
			t.Errorf("%s: documented body has no %q", path, field)
		}
	}
}
