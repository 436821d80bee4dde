// Package datasets makes Weave datasets from traced calls: the calls a
// trace-list selection names — a calls filter and a calls query, which may
// test the calls' feedback, so a monitor's verdicts too
// (feedback.[wandb.runnable.<scorer>].payload.output…) — become the rows
// of a new version of a Dataset object, published as the Weave SDKs
// publish one (the rows a table, the object's rows its ref).
//
// A row is what an evaluation passes a model and what supervised
// fine-tuning reads: the members of the call's inputs, and the call's
// output under "output". A chat call's row thus holds its "messages" and
// the answer; package training reads such a row as a conversation, so a
// dataset made here is a training_data_url (weave:///<entity>/<project>/
// object/<name>:<digest>) for an SFT job.
//
// [Service] is the contract, [Builder] its implementation over a calls
// reader and a dataset writer (the trace and objects services).
package datasets
