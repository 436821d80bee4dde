// Package monitor runs online evaluation: the Weave Monitor objects of each
// project score the calls that end after they are active, on the server.
//
// A [Monitors] is three things at once, wired into a process by its
// configuration:
//   - the objects store's change hook: a Monitor object is checked when
//     published (a malformed value, a scorer that is not a published scorer
//     of the same project, a call filter query the calls query refuses, a
//     judge model its publisher may not use: each a 400) and its newest live
//     version kept in the monitors table in the publish's transaction;
//   - the trace store's write hook: a write that ends calls in a project with
//     an active monitor queues one dispatch job in the write's own
//     transaction, so work is never lost between the two and ingest pays one
//     indexed lookup per project;
//   - the workers of the jobs on the process's [jobs.Queue]: a dispatch job
//     matches its calls against the project's active monitors (op names and
//     the calls query, as the calls query reads them), samples them by
//     [Sampled], runs the deterministic scorers at once and queues one judge
//     job per judged verdict.
//
// Each verdict is a row of monitor_verdicts keyed by (project, call, scorer,
// scorer digest), and its feedback row's id is derived from that key: a job
// that runs twice — retried, rescued from a dead worker, or taken by another
// server on the same database — rewrites the same rows, so each call has
// one verdict per scorer version. A judge that fails, answers off-schema or
// cannot run leaves an error verdict with its reason.
//
// A monitor whose newest version is not active (paused) dispatches no more
// calls, and a judge still queued for it when it was paused leaves an error
// verdict saying so; turned active again, it scores the calls that end from
// then on.
//
// A backfill runs one monitor over the calls that started in a time range:
// a planner job walks the range in started_at order by a cursor it keeps in
// the monitor_backfills row, and queues a dispatch job per chunk of sampled
// calls in the transaction that moves the cursor; the dispatch jobs are the
// live ones', so a call already scored keeps its verdict.
//
// Verdicts are stored as Weave's scoring worker stores them: feedback of
// type wandb.runnable.<scorer>, runnable_ref the scorer's ref, trigger_ref
// the monitor's, payload {"output": verdict}, wb_user_id the monitor's
// publisher, and for a judge call_ref its own traced chat call.
//
// Files: monitors.go (the hooks and the monitors table), spec.go (Monitor
// objects), dispatch.go and verdicts.go (matching, sampling, the verdict
// rows), scorer.go (deterministic scorers), judge.go, judgework.go and
// template.go (LLM judges), models.go (judge model access), limits.go
// (per-monitor judge limits), backfill.go (monitors run over past calls),
// drafts.go (scorers checked and previewed before they are published),
// service.go (what the API offers).
package monitor
