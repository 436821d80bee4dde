package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/internal/testdb"
	"github.com/weftlabs/weft/training"
)

// Benchmarks for the figures; run with
//
//	go test ./transport/httpapi -run '^$' -bench Training -benchtime 20x
func benchDatabases(b *testing.B, body func(b *testing.B, db *weft.DB)) {
	b.Run("sqlite", func(b *testing.B) { body(b, testdb.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { body(b, testdb.Postgres(b)) })
}

// BenchmarkTrainingJobCreate64 posts RL jobs with 64 trajectory groups (the
// issue asks ≤ 50 ms per POST).
func BenchmarkTrainingJobCreate64(b *testing.B) {
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		f := newTrainingFixture(b, db, trainingOptions{workers: 0})
		var model training.Model
		f.call(b, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": "b"}, &model)
		body, _ := json.Marshal(map[string]any{"model_id": model.ID, "trajectory_groups": groups(64), "experimental_config": experimentalConfig})
		b.ReportMetric(float64(len(body))/1024, "KiB/request")
		b.ResetTimer()
		start := time.Now()
		for b.Loop() {
			if status := f.call(b, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", body, nil); status != http.StatusOK {
				b.Fatal(status)
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/post")
	})
}

// BenchmarkTrainingEventsPage reads a page of 20 events from a job with 40
// (the issue asks ≤ 10 ms per page).
func BenchmarkTrainingEventsPage(b *testing.B) {
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		f := newTrainingFixture(b, db, trainingOptions{workers: 1})
		var model training.Model
		f.call(b, f.adminKey, http.MethodPost, "/v1/preview/models", map[string]any{"project": "p", "name": "m", "base_model": "b"}, &model)
		var created struct{ ID string }
		f.call(b, f.adminKey, http.MethodPost, "/v1/preview/training-jobs", map[string]any{"model_id": model.ID, "trajectory_groups": groups(10)}, &created)
		events := f.pollEvents(b, created.ID)
		after := events[10].ID
		b.ResetTimer()
		start := time.Now()
		for b.Loop() {
			var page listPage
			f.call(b, f.adminKey, http.MethodGet, "/v1/preview/training-jobs/"+created.ID+"/events?after="+after, nil, &page)
			if len(page.Data) != 20 {
				b.Fatal(len(page.Data))
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/page")
	})
}

// countingTrainer reports 3 gradient steps per job and no files.
type countingTrainer struct{}

func (countingTrainer) Train(ctx context.Context, _ *training.TrainJob, r training.Reporter) (*training.TrainResult, error) {
	if err := r.Started(ctx, 3); err != nil {
		return nil, err
	}
	for i := range 3 {
		if err := r.Step(ctx, map[string]any{"loss": float64(i)}); err != nil {
			return nil, err
		}
	}
	return &training.TrainResult{}, nil
}

// BenchmarkTrainingThroughput runs 1,000 jobs (over 50 models) through 4
// workers and checks that every job has exactly 5 events ending in one
// training_ended: none lost, none duplicated.
func BenchmarkTrainingThroughput(b *testing.B) {
	benchDatabases(b, func(b *testing.B, db *weft.DB) {
		ctx := context.Background()
		f := newTrainingFixture(b, db, trainingOptions{workers: 0})
		manager, err := training.New(training.Config{DB: db, Blobs: f.blobs, Trainer: countingTrainer{}, Workers: 4,
			PollInterval: 50 * time.Millisecond, WatchdogInterval: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		const jobs, models = 1000, 50
		for b.Loop() {
			adminCtx := weft.WithPrincipal(ctx, weft.Principal{UserID: "u", DefaultEntity: "admin", Admin: true})
			ids := make([]string, 0, jobs)
			modelIDs := make([]string, models)
			for i := range modelIDs {
				m, err := manager.CreateModel(adminCtx, &training.CreateModelReq{Project: "bench", Name: fmt.Sprintf("m%d-%d", i, time.Now().UnixNano()), BaseModel: "b"})
				if err != nil {
					b.Fatal(err)
				}
				modelIDs[i] = m.ID
			}
			var tg []training.TrajectoryGroup
			_ = json.Unmarshal(mustJSON(groups(1)), &tg)
			start := time.Now()
			for i := range jobs {
				j, err := manager.CreateJob(adminCtx, &training.CreateJobReq{ModelID: modelIDs[i%models], TrajectoryGroups: tg})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, j.ID)
			}
			if err := manager.Start(ctx); err != nil {
				b.Fatal(err)
			}
			for _, id := range ids {
				for {
					j, err := manager.GetJob(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					if j.Status.Terminal() {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			elapsed := time.Since(start)
			_ = manager.Stop(ctx)
			for _, id := range ids {
				page, err := manager.ListEvents(ctx, id, training.ListParams{Limit: 100})
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Data) != 5 || page.Data[0].Type != training.EventTrainingStarted || page.Data[4].Type != training.EventTrainingEnded {
					b.Fatalf("job %s: %d events", id, len(page.Data))
				}
			}
			b.ReportMetric(float64(jobs)/elapsed.Seconds(), "jobs/s")
			b.ReportMetric(0, "lost_or_duplicated")
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
