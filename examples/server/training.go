package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/chat/inprocess"
	"github.com/weftlabs/weft/jobs"
	"github.com/weftlabs/weft/monitor"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/training"
	"github.com/weftlabs/weft/training/blob"
	"github.com/weftlabs/weft/training/exectrainer"
	"github.com/weftlabs/weft/training/localtrainer"
)

// trainingOptions are the flags of the training service, shared by serve and
// worker.
type trainingOptions struct {
	trainerCommand    string
	trainerBaseModels string
	otherWorkers      bool
	checkpointDir     string
	workers           int
	maxAttempts       int
	rescueAfter       time.Duration
	jobTimeout        time.Duration
	lease             time.Duration
	dataHosts         string
	dataTimeout       time.Duration
	maxDataBytes      int64
	maxSFTTokens      int
}

func trainingFlags(fs *flag.FlagSet, defaultWorkers int) *trainingOptions {
	o := &trainingOptions{}
	fs.StringVar(&o.trainerCommand, "trainer-command", "", "program run per training job (exec trainer protocol; space-separated arguments), for the base models of -trainer-base-models")
	fs.StringVar(&o.trainerBaseModels, "trainer-base-models", "", "comma-separated base models -trainer-command trains; empty = every base model the built-in trainer does not (it trains the models this server serves in-process)")
	fs.BoolVar(&o.otherWorkers, "training-other-workers", false, "other processes (weft worker) run jobs too: leave a job this process has no trainer for queued for them instead of failing it")
	fs.StringVar(&o.checkpointDir, "checkpoint-dir", training.DefaultCheckpointDir, "directory holding checkpoint files")
	fs.IntVar(&o.workers, "training-workers", defaultWorkers, "training jobs this process runs at once, with its trainers (the built-in trainer for the models it serves, -trainer-command for the others)")
	fs.IntVar(&o.maxAttempts, "training-max-attempts", training.DefaultMaxAttempts, "attempts per training job before it fails")
	fs.DurationVar(&o.jobTimeout, "training-job-timeout", training.DefaultJobTimeout, "longest one training attempt may run")
	fs.StringVar(&o.dataHosts, "training-data-hosts", training.DefaultDataHosts, "comma-separated hosts an SFT job's http(s) training_data_url may name: example.com, *.example.com, example.com:8443, an address or a network (10.0.0.0/8); a name allows only public addresses, so list the address of an internal server too; empty: none (data comes from weft artifacts)")
	fs.DurationVar(&o.dataTimeout, "training-data-timeout", training.DefaultDataTimeout, "longest download of an SFT job's data")
	fs.Int64Var(&o.maxDataBytes, "training-data-max-bytes", training.DefaultMaxDataBytes, "largest SFT data a job takes (streamed to a scratch file); larger data fails the job")
	fs.IntVar(&o.maxSFTTokens, "training-sft-max-tokens", localtrainer.DefaultMaxSFTTokens, "most tokens of SFT data the built-in trainer trains in one job; more fails the job")
	fs.DurationVar(&o.lease, "training-lease", training.DefaultLease, "how long a running training attempt holds its job without renewing it (it renews every second); a job whose worker was killed runs again this long after")
	fs.DurationVar(&o.rescueAfter, "training-rescue-after", 0, "how long a job may look running before it is retried elsewhere (default: job timeout + "+training.DefaultRescueMargin.String()+")")
	return o
}

// newTrainingService builds the training manager for db from o; SFT data
// given as object references is read from files. Its trainers are a
// TrainerSet: the built-in trainer for the models served (in-process by
// served, which may be nil) and the exec trainer of -trainer-command (for
// -trainer-base-models, or every other base model). A job whose base model
// no trainer of the set runs fails at once, unless other processes may run
// it. A process with no trainer runs no workers.
func newTrainingService(db *weft.DB, queue *jobs.Queue, o *trainingOptions, files objects.Service, served *inprocess.Server, logger *slog.Logger) (*training.Store, *localtrainer.Trainer, error) {
	blobs, err := blob.NewDir(o.checkpointDir)
	if err != nil {
		return nil, nil, err
	}
	trainers := &training.TrainerSet{}
	runs := false
	if command := strings.Fields(o.trainerCommand); len(command) > 0 {
		trainer, err := exectrainer.New(exectrainer.Config{Command: command})
		if err != nil {
			return nil, nil, err
		}
		trainers.Add("exec", trainer, splitList(o.trainerBaseModels)...)
		runs = true
	}
	local, err := localTrainer(served, o.maxSFTTokens, logger)
	if err != nil {
		return nil, nil, err
	}
	if local != nil {
		trainers.Add("local", local, local.BaseModels()...)
		runs = true
	}
	workers := o.workers
	if !runs {
		workers = 0
	}
	store, err := training.New(training.Config{DB: db, Jobs: queue, Blobs: blobs, Objects: training.ObjectFiles(files), MaxAttempts: o.maxAttempts,
		JobTimeout: o.jobTimeout, RescueAfter: o.rescueAfter, Lease: o.lease, Logger: logger, DataHosts: splitList(o.dataHosts), DataTimeout: o.dataTimeout, MaxDataBytes: o.maxDataBytes,
		Trainer: trainers, Workers: workers, OtherWorkers: o.otherWorkers || o.workers == 0})
	if err != nil && local != nil {
		_ = local.Close()
	}
	return store, local, err
}

// localTrainer is the built-in trainer of the models served in-process, or
// nil when there are none.
func localTrainer(served *inprocess.Server, maxSFTTokens int, logger *slog.Logger) (*localtrainer.Trainer, error) {
	if served == nil || len(served.Models()) == 0 {
		return nil, nil
	}
	models := map[string]localtrainer.BaseModel{}
	for name, m := range served.Models() {
		base, err := localtrainer.Served(m)
		if err != nil {
			return nil, err
		}
		models[name] = base
	}
	return localtrainer.New(localtrainer.Config{Models: models, MaxSFTTokens: maxSFTTokens, Logger: logger})
}

func workerCommand() *command {
	return &command{
		name:    "worker",
		summary: "run training jobs only (no HTTP), against the servers' database",
		about: "Work the training queue of the database the servers use, without serving HTTP:\n" +
			"weft worker -database-url postgres://… -trainer-command CMD",
		setup: func(fs *flag.FlagSet) action {
			var dbURL, logLevel string
			databaseFlag(fs, &dbURL)
			logLevelFlag(fs, &logLevel)
			opts := trainingFlags(fs, 1)
			return func(ctx context.Context, out io.Writer, _ []string) error {
				return work(ctx, out, dbURL, logLevel, opts)
			}
		},
	}
}

// work runs training workers only, until ctx ends.
func work(ctx context.Context, out io.Writer, dbURL, logLevel string, opts *trainingOptions) error {
	if opts.trainerCommand == "" || opts.workers < 1 {
		return usagef("needs -trainer-command and -training-workers ≥ 1")
	}
	logger, err := newLogger(logLevel)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	files, err := objects.New(objects.Config{DB: db})
	if err != nil {
		return err
	}
	queue, err := jobs.New(db, jobs.Config{Logger: logger, RescueAfter: opts.rescueAfter})
	if err != nil {
		return err
	}
	manager, _, err := newTrainingService(db, queue, opts, files, nil, logger)
	if err != nil {
		return err
	}
	// This process works no monitor jobs but knows their kind, so that its
	// queue retries one whose worker died instead of discarding it.
	if err := monitor.RegisterKinds(queue); err != nil {
		return err
	}
	if err := manager.Start(ctx); err != nil {
		return err
	}
	if err := queue.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = queue.Stop(stopCtx)
	}()
	fmt.Fprintf(out, "weft worker running %d training job(s) at a time\n", opts.workers)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return manager.Stop(stopCtx)
}

// splitList reads a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
