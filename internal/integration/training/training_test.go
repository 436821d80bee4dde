// Package training_test drives the training service through the real server
// binary: ART's flow ending in chat completions served by a LoRA upstream, SFT
// data published as weft objects, a worker process killed mid-job, and two
// servers sharing one database.
package training_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftlabs/weft/internal/gobuild"
	"github.com/weftlabs/weft/internal/integration/e2e"
	"github.com/weftlabs/weft/internal/integration/serverproc"
	"github.com/weftlabs/weft/internal/testdb"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// testTrainer is the stand-in GPU trainer, built once.
func testTrainer(t *testing.T) string { return gobuild.Binary(t, "./internal/testtrainer") }

// artClient speaks to srv with its admin key, as ART's client does.
func artClient(srv *serverproc.Server) e2e.Client {
	return e2e.Client{URL: srv.URL, Auth: e2e.Bearer(srv.Key)}
}

type event struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// events follows a job's events with the cursor, as ART polls, until the
// terminal event, and returns all of them.
func events(t *testing.T, c e2e.Client, jobID string, timeout time.Duration) []event {
	t.Helper()
	var all []event
	after := ""
	deadline := time.Now().Add(timeout)
	for {
		var page struct {
			Data    []event `json:"data"`
			HasMore bool    `json:"has_more"`
		}
		c.Call(t, http.MethodGet, "/v1/preview/training-jobs/"+jobID+"/events?limit=100&after="+after, nil, &page)
		all = append(all, page.Data...)
		if len(page.Data) > 0 {
			after = page.Data[len(page.Data)-1].ID
			if last := page.Data[len(page.Data)-1].Type; (last == "training_ended" || last == "training_failed") && !page.HasMore {
				return all
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: no terminal event after %s; events: %+v", jobID, timeout, all)
		}
		if !page.HasMore {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// checkOneEnd checks a job's log: exactly one terminal event, last, of type
// want, no event id twice, and every attempt's training_started before its
// gradient steps.
func checkOneEnd(t *testing.T, jobID string, events []event, want string) {
	t.Helper()
	seen := map[string]bool{}
	terminal, started := 0, false
	for _, e := range events {
		if seen[e.ID] {
			t.Fatalf("job %s: event %s listed twice", jobID, e.ID)
		}
		seen[e.ID] = true
		switch e.Type {
		case "training_ended", "training_failed":
			terminal++
		case "training_started":
			started = true
		case "gradient_step":
			if !started {
				t.Fatalf("job %s: gradient_step before training_started", jobID)
			}
		}
	}
	if terminal != 1 || events[len(events)-1].Type != want {
		t.Fatalf("job %s: %d terminal events, last %q, want one %q: %+v", jobID, terminal, events[len(events)-1].Type, want, events)
	}
}

// groups builds n trajectory groups of 4 rollouts with distinct rewards.
func groups(n int) []map[string]any {
	out := make([]map[string]any, n)
	for g := range out {
		trajs := make([]map[string]any, 4)
		for i := range trajs {
			trajs[i] = map[string]any{
				"messages_and_choices": []any{
					map[string]any{"role": "user", "content": fmt.Sprintf("scenario %d", g)},
					map[string]any{"finish_reason": "stop", "index": 0, "message": map[string]any{"role": "assistant", "content": "done"}},
				},
				"reward": float64(i) / 3, "metrics": map[string]any{"turns": 1},
			}
		}
		out[g] = map[string]any{"trajectories": trajs, "exceptions": []any{}}
	}
	return out
}

// loraServer is a vLLM stand-in with runtime LoRA loading: it records every
// load_lora_adapter request and the model of every completion.
type loraServer struct {
	*httptest.Server
	mu     sync.Mutex
	loads  []map[string]string
	models []string
}

func newLoRAServer(t *testing.T) *loraServer {
	l := &loraServer{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		l.mu.Lock()
		defer l.mu.Unlock()
		switch r.URL.Path {
		case "/v1/load_lora_adapter":
			l.loads = append(l.loads, map[string]string{"lora_name": fmt.Sprint(body["lora_name"]), "lora_path": fmt.Sprint(body["lora_path"])})
			_, _ = io.WriteString(w, "Success: LoRA adapter loaded")
		case "/v1/chat/completions":
			model := fmt.Sprint(body["model"])
			l.models = append(l.models, model)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": model,
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}},
				"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *loraServer) seen() ([]map[string]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]string(nil), l.loads...), append([]string(nil), l.models...)
}

// databases runs body against a fresh database of each kind (SQLite,
// PostgreSQL, Citus).
func databases(t *testing.T, body func(t *testing.T, url string)) { testdb.EachURL(t, body) }

// TestTrainedModelServedThroughChat: ART registers a model, trains it with an
// RL job and with SFT jobs whose data is a weft object (trace:/// and
// wandb-artifact:/// refs to an artifact holding train.jsonl), and completes
// with the trained model's names; the completions reach the LoRA upstream,
// which is asked to load each new adapter once.
func TestTrainedModelServedThroughChat(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, dbURL string) {
		lora := newLoRAServer(t)
		routing := filepath.Join(t.TempDir(), "routing.yaml")
		if err := os.WriteFile(routing, []byte(fmt.Sprintf("models: []\nlora: {url: %s/v1}\n", lora.URL)), 0o600); err != nil {
			t.Fatal(err)
		}
		checkpoints := t.TempDir()
		srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: []string{
			"-chat-config", routing, "-trainer-command", testTrainer(t), "-checkpoint-dir", checkpoints}})
		c := artClient(srv)
		complete := func(model string) string {
			t.Helper()
			var res struct{ Model string }
			c.Call(t, http.MethodPost, "/v1/chat/completions", map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, &res)
			return res.Model
		}

		var model struct{ ID, Entity string }
		c.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"project": "mail", "name": "agent-001", "base_model": "Qwen/Qwen3-14B", "entity": nil}, &model)
		// Untrained (step 0): the base model answers, nothing is loaded.
		if got := complete("wandb-artifact:///admin/mail/agent-001"); got != "Qwen/Qwen3-14B" {
			t.Fatalf("step-0 completion went to model %q", got)
		}

		var job struct{ ID string }
		c.Call(t, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(2)}, &job)
		checkOneEnd(t, job.ID, events(t, c, job.ID, time.Minute), "training_ended")
		for _, name := range []string{"admin/mail/agent-001", "admin/mail/agent-001:step1", "wandb-artifact:///admin/mail/agent-001:step1"} {
			if got := complete(name); got != "admin/mail/agent-001:step1" {
				t.Fatalf("%s: completion went to model %q, want the step-1 adapter", name, got)
			}
		}
		loads, _ := lora.seen()
		if len(loads) != 1 || loads[0]["lora_name"] != "admin/mail/agent-001:step1" {
			t.Fatalf("load_lora_adapter calls = %+v, want one for step 1", loads)
		}
		weights, err := os.ReadFile(filepath.Join(loads[0]["lora_path"], "adapter_model.safetensors"))
		if err != nil || !strings.HasPrefix(loads[0]["lora_path"], checkpoints) || string(weights) != "weights of step 1" {
			t.Fatalf("adapter path %q: %q %v", loads[0]["lora_path"], weights, err)
		}

		// SFT data published as ART publishes it: one train.jsonl in an artifact.
		var data strings.Builder
		for i := range 5 {
			fmt.Fprintf(&data, `{"messages":[{"role":"user","content":"q%d"},{"role":"assistant","content":"a%d"}]}`+"\n", i, i)
		}
		digest := c.Upload(t, "admin/mail", "train.jsonl", []byte(data.String()))
		c.Call(t, http.MethodPost, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "admin/mail", "object_id": "agent-001-sft-data-0123456789ab",
			"val": map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]any{"type": "wandb.Artifact"}, "files": map[string]any{"train.jsonl": digest}}}}, nil)
		for i, url := range []string{"trace:///admin/mail/object/agent-001-sft-data-0123456789ab:v0", "wandb-artifact:///admin/mail/agent-001-sft-data-0123456789ab:latest"} {
			c.Call(t, http.MethodPost, "/v1/preview/sft-training-jobs", map[string]any{"model_id": model.ID, "training_data_url": url, "config": map[string]any{"batch_size": 2}}, &job)
			events := events(t, c, job.ID, time.Minute)
			checkOneEnd(t, job.ID, events, "training_ended")
			if events[0].Type != "training_started" || events[0].Data["num_sequences"] != 3.0 {
				t.Fatalf("SFT from %s: 5 conversations in batches of 2 should be 3 sequences: %+v", url, events)
			}
			want := fmt.Sprintf("admin/mail/agent-001:step%d", i+2)
			if got := complete("admin/mail/agent-001"); got != want {
				t.Fatalf("after SFT from %s the latest name went to %q, want %q", url, got, want)
			}
		}
		if loads, _ := lora.seen(); len(loads) != 3 {
			t.Fatalf("load_lora_adapter calls = %+v, want one per trained step", loads)
		}
	})
}

// startWorker runs the server binary's worker subcommand against dbURL, with
// env added, until the test ends (or the test kills it).
func startWorker(t *testing.T, dbURL string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(serverproc.Binary(t), append([]string{"worker", "-database-url", dbURL, "-log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	banner := make([]byte, len("weft worker running"))
	if _, err := io.ReadFull(stdout, banner); err != nil || string(banner) != "weft worker running" {
		t.Fatalf("worker did not start: %q %v; stderr: %s", banner, err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return cmd
}

// killedWorker is a trainer TestWorkerKilledMidJob runs: the base model it
// trains, how to start a process that works the queue with it (returning
// how to SIGKILL it), and a job of it long enough to be killed mid-way.
type killedWorker struct {
	name      string
	baseModel string
	start     func(t *testing.T, dbURL, checkpoints string) (kill func())
	job       func(t *testing.T, c e2e.Client, modelID string) (jobID string)
}

// TestWorkerKilledMidJob kills (SIGKILL) the only process working the queue
// while it runs a job — a `weft worker` with the exec trainer, and a server
// training the model it serves with the built-in trainer — and starts
// another: it rescues the job through River's rescuer and retries it, and
// the job ends with exactly one training_ended, never silence.
func TestWorkerKilledMidJob(t *testing.T) {
	t.Parallel()
	for _, w := range []killedWorker{
		{
			name: "exec", baseModel: "b",
			start: func(t *testing.T, dbURL, checkpoints string) func() {
				cmd := startWorker(t, dbURL, []string{"TESTTRAINER_STEP_DELAY=300ms"}, "-trainer-command", testTrainer(t), "-checkpoint-dir", checkpoints,
					"-training-job-timeout", "8s", "-training-rescue-after", "9s")
				return func() { _ = cmd.Process.Kill() }
			},
			job: func(t *testing.T, c e2e.Client, modelID string) string {
				var job struct{ ID string }
				c.Call(t, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": modelID, "trajectory_groups": groups(2)}, &job)
				return job.ID
			},
		},
		{
			// Servers that serve (and so train) the tiny model, each from a
			// directory of its own with the same files. An attempt of the
			// SFT job (20 one-conversation steps) takes about two seconds;
			// the timeout leaves room for a loaded machine.
			name: "local", baseModel: e2e.TinyModelName,
			start: func(t *testing.T, dbURL, checkpoints string) func() {
				srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: []string{"-model", e2e.TinyModel(t),
					"-checkpoint-dir", checkpoints, "-training-job-timeout", "15s", "-training-rescue-after", "16s"}})
				return srv.Kill
			},
			job: sftJob,
		},
	} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			dbURL := testdb.PostgresURL(t)
			// The server accepts jobs and runs none: it leaves them to the
			// worker processes instead of failing what it has no trainer for.
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: []string{"-training-other-workers"}})
			c := artClient(srv)
			checkpoints := t.TempDir()
			kill := w.start(t, dbURL, checkpoints)

			var model struct{ ID string }
			c.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": w.baseModel}, &model)
			jobID := w.job(t, c, model.ID)
			waitMidJob(t, c, jobID)
			kill()
			w.start(t, dbURL, checkpoints)

			checkRetried(t, c, model.ID, jobID)
		})
	}
}

// sftJob posts an SFT job of 20 one-conversation steps (about two seconds
// on the tiny model) whose data is an artifact of admin/p, as ART publishes
// it.
func sftJob(t *testing.T, c e2e.Client, modelID string) string {
	var data strings.Builder
	for i := range 20 {
		fmt.Fprintf(&data, `{"messages":[{"role":"user","content":"question %d"},{"role":"assistant","content":"answer %d"}]}`+"\n", i, i)
	}
	digest := c.Upload(t, "admin/p", "train.jsonl", []byte(data.String()))
	c.Call(t, http.MethodPost, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "admin/p", "object_id": "m-sft-data-0123456789ab",
		"val": map[string]any{"_type": "CustomWeaveType", "weave_type": map[string]any{"type": "wandb.Artifact"}, "files": map[string]any{"train.jsonl": digest}}}}, nil)
	var job struct{ ID string }
	c.Call(t, http.MethodPost, "/v1/preview/sft-training-jobs", map[string]any{"model_id": modelID,
		"training_data_url": "wandb-artifact:///admin/p/m-sft-data-0123456789ab:v0", "config": map[string]any{"batch_size": 1, "learning_rate": 1e-3}}, &job)
	return job.ID
}

// waitMidJob waits until the job has started and made a gradient step.
func waitMidJob(t *testing.T, c e2e.Client, jobID string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var page struct{ Data []event }
		c.Call(t, http.MethodGet, "/v1/preview/training-jobs/"+jobID+"/events", nil, &page)
		if len(page.Data) >= 2 { // training_started and a gradient step: mid-job
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never started the job")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkRetried checks that a job whose first attempt was killed ended once,
// with training_ended, after the killed attempt and the retried one started,
// and made the model's step 1.
func checkRetried(t *testing.T, c e2e.Client, modelID, jobID string) {
	t.Helper()
	events := events(t, c, jobID, 2*time.Minute)
	checkOneEnd(t, jobID, events, "training_ended")
	starts := 0
	for _, e := range events {
		if e.Type == "training_started" {
			starts++
		}
	}
	if starts != 2 {
		t.Fatalf("want the killed attempt and the retried one to have started, got %d starts: %+v", starts, events)
	}
	var cps struct{ Data []struct{ Step int64 } }
	c.Call(t, http.MethodGet, "/v1/preview/models/"+modelID+"/checkpoints?limit=1&order=desc", nil, &cps)
	if len(cps.Data) != 1 || cps.Data[0].Step != 1 {
		t.Fatalf("latest checkpoint after the retried job = %+v, want step 1", cps.Data)
	}
}

// TestServerRestartedAfterKill: the one server of a database, training the
// model it serves, is killed (SIGKILL) mid-job and started again with the
// default job timeout (24 h): the job does not stay RUNNING until then — its
// attempt's lease (30 s by default) expires and the restarted server runs the
// job again to its one training_ended.
func TestServerRestartedAfterKill(t *testing.T) {
	t.Parallel()
	for _, b := range testdb.Backends[:2] { // SQLite and PostgreSQL
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			dbURL := b.URL(t)
			args := []string{"-model", e2e.TinyModel(t), "-checkpoint-dir", t.TempDir()}
			srv := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: args})
			c := artClient(srv)
			var model struct{ ID string }
			c.Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": e2e.TinyModelName}, &model)
			jobID := sftJob(t, c, model.ID)
			waitMidJob(t, c, jobID)
			srv.Kill()
			killed := time.Now()

			again := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: args})
			checkRetried(t, e2e.Client{URL: again.URL, Auth: c.Auth}, model.ID, jobID)
			t.Logf("the job ended %s after the kill", time.Since(killed).Round(time.Second))
		})
	}
}

// TestTwoServersRunJobs runs two servers with workers on one PostgreSQL
// database, jobs posted to both: every job ends once, no event twice, and each
// model's checkpoints advance by exactly one per job.
func TestTwoServersRunJobs(t *testing.T) {
	t.Parallel()
	dbURL := testdb.PostgresURL(t)
	checkpoints := t.TempDir()
	args := []string{"-trainer-command", testTrainer(t), "-checkpoint-dir", checkpoints, "-training-workers", "2"}
	env := []string{"TESTTRAINER_STEP_DELAY=5ms"}
	a := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: args, Env: env})
	b := serverproc.Start(t, serverproc.Options{DatabaseURL: dbURL, Args: args, Env: env})
	clients := []e2e.Client{artClient(a), {URL: b.URL, Auth: e2e.Bearer(a.Key)}}
	const models, jobsPerModel = 3, 4
	var modelIDs, jobIDs []string
	for i := range models {
		var model struct{ ID string }
		clients[i%2].Call(t, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": fmt.Sprintf("m%d", i), "base_model": "b"}, &model)
		modelIDs = append(modelIDs, model.ID)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range models * jobsPerModel {
		wg.Go(func() {
			var job struct{ ID string }
			clients[i%2].Call(t, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": modelIDs[i%models], "trajectory_groups": groups(1)}, &job)
			mu.Lock()
			jobIDs = append(jobIDs, job.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, id := range jobIDs {
		events := events(t, clients[i%2], id, 2*time.Minute)
		checkOneEnd(t, id, events, "training_ended")
		if events[0].Type != "training_started" || len(events) != int(events[0].Data["num_sequences"].(float64))+2 {
			t.Fatalf("job %s: want training_started, one gradient_step per sequence, training_ended: %+v", id, events)
		}
	}
	for _, id := range modelIDs {
		var cps struct{ Data []struct{ Step int64 } }
		clients[0].Call(t, http.MethodGet, "/v1/preview/models/"+id+"/checkpoints?limit=100", nil, &cps)
		if len(cps.Data) != jobsPerModel+1 || cps.Data[jobsPerModel].Step != jobsPerModel {
			t.Fatalf("model %s checkpoints = %+v, want steps 0..%d", id, cps.Data, jobsPerModel)
		}
	}
}
