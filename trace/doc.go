// Package trace records and reads calls: the spans of an LLM application's
// execution, as the Weave SDKs send them.
//
// A call is written in independent pieces — a start, an end, a rename — that
// may arrive in any order and are merged per (project, call id); the last
// write of each piece wins. A call becomes visible to reads once its start has
// arrived. Reads rebuild summary.weave (status, latency, name, costs); every
// other JSON field is returned exactly as it was sent.
//
// # Using it
//
// [Service] is the contract and [Store] its implementation over a migrated
// weft database, PostgreSQL or SQLite; [New] takes a [Config] whose zero
// fields are the documented defaults. The acting user comes from the context:
//
//	calls, err := trace.New(trace.Config{DB: db})
//	res, err := calls.CallStart(weft.WithPrincipal(ctx, p), &trace.CallStartReq{Start: ...})
//
// The Go-only members of [CallsFilter] serve views such as the web UI's trace
// list: status, time range, user, has-feedback, and Search, a case-insensitive
// substring search over the text of inputs and outputs in any script (a
// trigram index on PostgreSQL, FTS5 with the trigram tokenizer on SQLite).
// Queries sort by stored columns, by derived fields ([SortLatency],
// [SortStatus], [SortTotalTokens], [SortCost], [SortReactions]) and by any
// inputs.* / output.* member; sorted by started_at or a numeric field, a page
// continues from the last call's [Call.Cursor]. A [Feed] given in Config
// tells subscribers which calls each write touched, for live views; one that
// listens on PostgreSQL ([Feed.ListenPostgres]) hears other processes' writes
// too.
//
// Errors wrap this package's sentinels ([ErrInvalidCall], [ErrInvalidQuery],
// ...), each of a weft error class that decides its HTTP status. The files
// follow the layout every domain shares (see package weft): service.go,
// errors.go, types.go, config.go, store.go (the writes), store_query.go,
// store_usage.go and store_costs.go; search.go (the searchable text and its
// condition), sort.go (sort fields), status.go, feed.go and feed_relay.go.
package trace
