package training_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
)

// twoStepTrainer stands in for a GPU trainer: two gradient steps, no files.
type twoStepTrainer struct{}

func (twoStepTrainer) Train(ctx context.Context, job *training.TrainJob, report training.Reporter) (*training.TrainResult, error) {
	if err := report.Started(ctx, 2); err != nil {
		return nil, err
	}
	for _, loss := range []float64{0.75, 0.25} {
		if err := report.Step(ctx, map[string]any{"loss": loss}); err != nil {
			return nil, err
		}
	}
	return &training.TrainResult{}, nil
}

// A model is registered, its validation rollouts logged, and one RL job
// trained by a worker in this process: every gradient_step carries the
// trainer's numbers and the batch's metrics, the events end in
// training_ended and the new checkpoint (step 1) carries the averaged loss and the batch's
// train/* metrics.
func ExampleStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "weft-training-example-")
	defer os.RemoveAll(dir)
	db, _ := weft.Open(ctx, "sqlite:"+filepath.Join(dir, "weft.db"))
	defer db.Close()
	if err := weft.Migrate(ctx, db, training.MigrateQueue(db)); err != nil {
		panic(err)
	}
	blobs, _ := blob.NewDir(filepath.Join(dir, "checkpoints"))
	manager, err := training.New(training.Config{DB: db, Blobs: blobs, Trainer: twoStepTrainer{}, Workers: 1,
		PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	_ = manager.Start(ctx)
	defer manager.Stop(ctx) //nolint:errcheck // example

	ctx = weft.WithPrincipal(ctx, weft.Principal{UserID: "u1", DefaultEntity: "acme"})
	model, _ := manager.CreateModel(ctx, &training.CreateModelReq{Project: "mail", Name: "agent", BaseModel: "Qwen/Qwen3-8B"})
	reward := func(r float64) *float64 { return &r }
	prompt := []json.RawMessage{json.RawMessage(`{"role":"user","content":"Find the invoice"}`)}
	rollouts := []training.TrajectoryGroup{{Trajectories: []training.Trajectory{
		{MessagesAndChoices: prompt, Reward: reward(1)},
		{MessagesAndChoices: prompt, Reward: reward(0)},
	}}}
	logged, _ := manager.Log(ctx, model.ID, &training.LogReq{TrajectoryGroups: rollouts})
	fmt.Println("step", logged.Step, "val/reward", logged.Metrics["val/reward"], "val/reward_std_dev", logged.Metrics["val/reward_std_dev"])

	job, _ := manager.CreateJob(ctx, &training.CreateJobReq{ModelID: model.ID, TrajectoryGroups: rollouts})
	for {
		j, _ := manager.GetJob(ctx, job.ID)
		if j.Status.Terminal() {
			fmt.Println(j.Status)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	events, _ := manager.ListEvents(ctx, job.ID, training.ListParams{})
	for _, e := range events.Data {
		fmt.Println(e.Type, string(e.Data))
	}
	latest, _ := manager.ListCheckpoints(ctx, model.ID, training.ListParams{Limit: 1, Order: training.OrderDesc})
	cp := latest.Data[0]
	fmt.Println("step", cp.Step, "loss", cp.Metrics["loss"], "train/reward", cp.Metrics["train/reward"])
	// Output:
	// step 0 val/reward 0.5 val/reward_std_dev 0.5
	// COMPLETED
	// training_started {"num_sequences":2}
	// gradient_step {"exception_rate":0,"loss":0.75,"num_groups_submitted":1,"num_groups_trainable":1,"num_trajectories":2,"reward":0.5,"reward_std_dev":0.5}
	// gradient_step {"exception_rate":0,"loss":0.25,"num_groups_submitted":1,"num_groups_trainable":1,"num_trajectories":2,"reward":0.5,"reward_std_dev":0.5}
	// training_ended {}
	// step 1 loss 0.5 train/reward 0.5
}
