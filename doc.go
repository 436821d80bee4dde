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
//     events and checkpoints, and the workers that run them (its trainers:
//     training/localtrainer in-process, training/exectrainer as a program).
//   - [github.com/weftlabs/weft/evalrun]: Weave's v2 evaluation runs,
//     predictions and scores over objects and trace.
//   - [github.com/weftlabs/weft/monitor]: online evaluation — monitors that
//     score new calls with a scorer or an LLM judge and write feedback.
//   - [github.com/weftlabs/weft/jobs]: the durable job queue the workers share.
//   - [github.com/weftlabs/weft/transport/httpapi]: all of the above over HTTP, at
//     the routes the official Weave and OpenAI clients call.
//   - [github.com/weftlabs/weft/transport/webui]: the web UI over the same
//     services, with the API's authorization.
//
// This package holds what they share: opening and migrating the database
// ([Open], [Migrate]), the acting caller ([Principal], [WithPrincipal]), users,
// entities, projects, API keys and the web UI's sessions ([Identity]), and the
// error classes every service's errors wrap ([ErrNotFound], [ErrInvalid], ...).
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
// # One shape for every package
//
// Every domain package (trace, feedback, objects, training, chat) is built the
// same way, so that a new one can copy any of them:
//
//   - doc.go is the tour; service.go holds the Service interface, whose
//     method docs are the contract (ordering, idempotency, paging, what is
//     not found); errors.go the sentinels, each made with [DefineError] over
//     one of this package's error classes, which fixes its HTTP status in one
//     table (transport/httpapi/errors.go); types.go the requests and answers.
//   - config.go holds Config with the defaults as exported DefaultX constants,
//     used by the package's defaulting and by the standalone server's flags;
//     Config.DB is a migrated [*DB] and Config.Now the one clock (time.Now
//     unless set; stored times are UTC). New(Config) fills the defaults,
//     validates once and returns the concrete type, which states that it
//     implements the interface: var _ Service = (*Store)(nil) (chat's is
//     Gateway, over model servers instead of a database).
//   - store.go holds Store and New; store_<concern>.go one concern each of
//     what Store does (store_queues.go, store_tables.go, store_jobs.go, ...).
//   - Every request names its project; the acting user comes from the
//     context ([WithPrincipal], [UserID]) and a user id in a request is
//     ignored. Authorization is the caller's job: transport/httpapi registers
//     every route through one helper that names the projects a request
//     touches, authorizes them and calls the service.
//   - Tests run one body on every database (internal/testdb.ForEach) and
//     Example functions run on SQLite.
//
// # Storage
//
// PostgreSQL is the production store; SQLite (pure Go) is the embedded default.
// Both run one migration history. Client JSON is stored exactly as sent, every
// primary key leads with the project, and a 2xx answer means the write is
// committed.
package weft
