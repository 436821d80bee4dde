// Package weft is a self-hosted tracing, evaluation and training service for
// LLM applications, as a Go library.
//
// # What is in it
//
//   - [github.com/weftlabs/weft/trace]: call tracing — start, end, batch upsert,
//     queries, deletes, token usage and costs.
//   - [github.com/weftlabs/weft/feedback]: feedback on calls and objects, and
//     annotation queues.
//   - [github.com/weftlabs/weft/objects]: versioned objects, ops, evaluations,
//     tables, files, refs and digests.
//   - [github.com/weftlabs/weft/chat]: an OpenAI-compatible chat completions and
//     image generation gateway to real model servers, traced into trace.
//   - [github.com/weftlabs/weft/training]: models, RL and SFT training jobs, their
//     events and checkpoints, and the workers that run them.
//   - [github.com/weftlabs/weft/transport/httpapi]: all of the above over HTTP, at
//     the routes the official Weave and OpenAI clients call.
//
// This package holds what they share: opening and migrating the database
// ([Open], [Migrate]), the acting caller ([Principal], [WithPrincipal]), users,
// entities, projects and API keys ([Identity]), and the error classes every
// service's errors wrap ([ErrNotFound], [ErrInvalid], ...).
//
// # Hosting
//
// Run the standalone server; it keeps its data in SQLite under ./data unless
// told otherwise, and prints an admin API key on first start:
//
//	go run ./examples/server
//	go run ./examples/server -database-url postgres://user:pass@host/weft
//
// # Embedding
//
// Open a database, migrate it, build the services you need, and either call
// them directly — with the acting user in the context — or mount the HTTP
// handler in your own server:
//
//	db, _ := weft.Open(ctx, "sqlite:weft.db")
//	_ = weft.Migrate(ctx, db)
//	identity, _ := weft.NewIdentity(weft.IdentityConfig{DB: db})
//	handler, _ := httpapi.New(httpapi.Config{Identity: identity /*, Trace: ..., */})
//	mux.Handle("/weft/", http.StripPrefix("/weft", handler))
//
// examples/embed is a complete program doing both.
//
// # Storage
//
// PostgreSQL is the production store; SQLite (pure Go) is the embedded default.
// Both run one migration history. Client JSON is stored exactly as sent, every
// primary key leads with the project, and a 2xx answer means the write is
// committed.
package weft
