// Package trace records and reads calls: the spans of an LLM application's
// execution, as the Weave SDKs send them.
//
// A call is written in independent pieces — a start, an end, a rename — that
// may arrive in any order and are merged per (project, call id); the last
// write of each piece wins. A call becomes visible to reads once its start has
// arrived. Reads rebuild summary.weave (status, latency, name, costs); every
// other JSON field is returned exactly as it was sent.
//
// [Store] is the implementation over PostgreSQL or SQLite; [Service] is its
// contract. Construct it with [New] on a migrated weft database:
//
//	calls, err := trace.New(trace.Config{DB: db})
//	res, err := calls.CallStart(weft.WithPrincipal(ctx, p), &trace.CallStartReq{Start: ...})
package trace
