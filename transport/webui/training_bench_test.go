package webui_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/transport/webui"
)

// benchSteps is the size of the benchmark's training job.
const benchSteps = 10_000

// longTrainer stands in for a GPU trainer: benchSteps gradient steps with
// the metrics a trainer reports, no files.
type longTrainer struct{}

func (longTrainer) Train(ctx context.Context, _ *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	if err := report.Started(ctx, benchSteps); err != nil {
		return nil, err
	}
	for i := range benchSteps {
		loss := 1.0 / float64(i+2)
		if err := report.Step(ctx, map[string]any{"loss": loss, "policy_loss": loss * 0.9, "grad_norm": 0.5 + math.Sin(float64(i)),
			"learning_rate": 5e-6, "entropy": 1.5 - 0.01*float64(i), "num_trainable_tokens": 128 + i, "tokens_per_second": 2048.0}); err != nil {
			return nil, err
		}
	}
	return &training.TrainResult{}, nil
}

// BenchmarkJobPage measures the server's part of a 10,000-step training
// job's page (the events read, the chart built and encoded, the page
// written) on SQLite and PostgreSQL, and reports the page's size. The
// browser's part is internal/integration/webui's BenchmarkTrainingChart.
//
//	go test -run '^$' -bench JobPage ./transport/webui/
func BenchmarkJobPage(b *testing.B) {
	for name, open := range map[string]func(testing.TB) *weft.DB{"sqlite": testdb.SQLite, "postgres": testdb.Postgres} {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			if err := training.MigrateQueue(db)(ctx); err != nil {
				b.Fatal(err)
			}
			blobs, err := blob.NewDir(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ts, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: longTrainer{}, Workers: 1,
				PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			if err := ts.Start(ctx); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = ts.Stop(context.Background()) })
			u := newBenchUI(b, db, func(c *webui.Config) { c.Training = ts })
			model, err := ts.CreateModel(u.ctx, &training.CreateModelReq{Project: "p", Name: "long", BaseModel: "Qwen/Qwen3-8B"})
			if err != nil {
				b.Fatal(err)
			}
			reward := func(r float64) *float64 { return &r }
			job, err := ts.CreateJob(u.ctx, &training.CreateJobReq{ModelID: model.ID, TrajectoryGroups: []training.TrajectoryGroup{{Trajectories: []training.Trajectory{
				{MessagesAndChoices: []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)}, Reward: reward(1)},
				{MessagesAndChoices: []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)}, Reward: reward(0)}}}}})
			if err != nil {
				b.Fatal(err)
			}
			for {
				j, err := ts.GetJob(u.ctx, job.ID)
				if err != nil {
					b.Fatal(err)
				}
				if j.Status.Terminal() {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			path := "/ui/p/bench/p/training-jobs/" + job.ID
			size := 0
			for b.Loop() {
				size = len(u.get(b, path))
			}
			b.ReportMetric(float64(size)/1024, "KiB/page")
		})
	}
}
