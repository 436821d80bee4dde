// Package training registers trainable models, accepts reinforcement-learning
// and supervised fine-tuning jobs, runs them on workers through a durable queue
// in the same database, and records what they report: an ordered event log per
// job and one checkpoint per successful job.
//
// It is the control plane behind the /v1/preview routes that OpenPipe ART's
// serverless client speaks:
//
//   - A model is registered once per (project, name) and starts with an untrained
//     step-0 checkpoint.
//   - [Service.Log] validates trajectory groups and stores their metrics as
//     "{split}/{metric}" on the model's current checkpoint.
//   - [Service.CreateJob] and [Service.CreateSFTJob] store the job and enqueue it
//     (River, on PostgreSQL or SQLite) in one transaction and return at once.
//   - A worker ([Store.Start]) hands the job to a [Trainer]; the trainer reports
//     training_started{num_sequences}, then gradient_step rows; on success the
//     next checkpoint (previous step + 1) is committed together with
//     training_ended, on failure training_failed{error_message} is written.
//   - A watchdog guarantees exactly one terminal event per job, also when a worker
//     dies, the queue gives up on a job, or the job is cancelled.
//
// Checkpoint files live in a [blob.Store]; [Store.ResolveAdapter] turns a model
// name used in chat completions into the adapter directory to serve.
//
// A [Trainer] does the training itself. Two come with weft: package
// localtrainer trains LoRA adapters in-process on the served weights, and
// package exectrainer runs an external program per job; a [TrainerSet]
// chooses one by the model's base model.
//
// # Using it
//
// [Service] is the contract and [Store] its implementation over a migrated
// weft database, PostgreSQL or SQLite (the queue's tables too: see
// [MigrateQueue]); [New] takes a [Config] whose zero fields are the
// documented defaults ([DefaultMaxAttempts], [DefaultJobTimeout], ...). The
// acting user comes from the context:
//
//	jobs, err := training.New(training.Config{DB: db, Trainer: trainer, Workers: 1})
//	err = jobs.Start(ctx)
//	model, err := jobs.CreateModel(weft.WithPrincipal(ctx, p), &training.CreateModelReq{...})
//
// Errors wrap this package's sentinels ([ErrModelNotFound], [ErrJobFinished],
// ...) or are a [FieldError], each of a weft error class that decides its
// HTTP status. The files follow the layout every domain shares (see package
// weft): service.go, errors.go, types.go, config.go, store.go,
// store_models.go, store_jobs.go, store_list.go and rows.go, beside the queue
// (queue.go), the worker and its watchdog (worker.go), the job's lease
// (lease.go) and the readers of training data (data.go, datahosts.go).
package training
