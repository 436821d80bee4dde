// Package feedback stores feedback attached to traced calls and objects, and the
// annotation queues people work through to give it.
//
// # Feedback
//
// A feedback row points at a call or object by its ref (trace_ref, or the
// Weave SDKs' weave_ref) and carries a free-form JSON payload, kept exactly as
// sent. The ref may be of any kind and is not looked up: SDKs send feedback before the call it scores
// has been flushed. Some feedback types are reserved and validated (see
// [Service.Create]): reactions (exactly one emoji; the stored payload gains its
// ":alias:" and skin-tone-free forms), notes (1 to 1024 characters),
// annotations (an annotation spec ref named like the type; with
// [Config.AnnotationSpecs] the value must satisfy the spec's schema) and runnable
// outputs (a scorer op or object ref, plus the scorer's call ref for ops).
// Every reserved type has a Weave spelling ("wandb.reaction.1") and a neutral
// one ("trace.reaction.1"); they follow the same rules.
//
// # Annotation queues
//
// A queue lists calls to annotate. Adding calls copies the fields the queue
// shows (op name, trace id, start and end times) from the trace store through a
// [CallLookup], so listing a queue never joins the calls table. Each annotator
// records progress on an item (in_progress, then completed or skipped); an
// item's state is the most recently updated record of any annotator, or
// "unstarted".
//
// # Using it
//
// [Service] is the contract and [Store] its implementation over a migrated
// weft database, PostgreSQL or SQLite; [New] takes a [Config] whose zero
// fields are the documented defaults. The acting user comes from the context:
//
//	svc, err := feedback.New(feedback.Config{DB: db, Calls: feedback.TraceCalls(calls),
//		AnnotationSpecs: feedback.ObjectSpecs(objectService)})
//	ctx = weft.WithPrincipal(ctx, weft.Principal{UserID: "u1"})
//	res, err := svc.Create(ctx, feedback.CreateReq{ProjectID: "team/proj",
//		TraceRef: "trace:///team/proj/call/0192...", FeedbackType: "wandb.reaction.1",
//		Payload: json.RawMessage(`{"emoji":"👍"}`)})
//
// Errors wrap this package's sentinels ([ErrInvalidFeedback],
// [ErrQueueNotFound], ...), each of a weft error class that decides its HTTP
// status. The files follow the layout every domain shares (see package weft):
// service.go, errors.go, types.go, config.go, store.go (feedback rows),
// store_queues.go and store_queue_items.go.
package feedback
