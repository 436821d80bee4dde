// Package webui serves weft's web UI: server-rendered pages over the same
// services the API calls (trace, feedback), with the API's authorizer deciding
// what a user may see.
//
// Pages are html/template files embedded in the binary, updated in part by
// htmx; the one script of the UI's own is a plain ES module. There is no
// build step: the third-party browser files are committed under
// static/vendor, copied there by `go generate` from pinned npm packages whose
// hashes vendor.json lists (and a test checks). Every asset is served from the
// binary under a content-hashed name with a year-long cache lifetime, and
// every page carries a Content-Security-Policy that allows scripts and styles
// from this server only and nothing inline, so no page makes a request
// elsewhere and no value from stored data can run as code.
//
// A user signs in with an API key (and optionally the user name): the server
// opens a session (the ui_sessions table keeps a hash of its token), sets an
// HttpOnly, SameSite=Strict cookie (Secure under TLS) and resolves the user
// afresh on every page, so a revoked key or a removed membership applies at
// once. Sign-out revokes the session on the server. Every form and htmx
// request that changes state carries a CSRF token derived from the session,
// and requests from other origins are refused before it is checked.
//
// The trace list is a view held whole in its URL (filters, search, chosen
// inputs.* / output.* columns, sort, page), and live when Config.Feed is set:
// the page keeps a server-sent event stream open that re-sends its results
// whenever a call it shows, or one its filters keep, is written; the stream
// checks the session and project rights again before each update. Call
// [Handler.CloseStreams] on shutdown.
//
// Mount the handler in front of the API: the UI answers "/" and paths under
// [Prefix], and passes everything else to Config.Fallback.
//
//	api, _ := httpapi.New(httpapi.Config{Identity: identity, Trace: traces})
//	ui, _ := webui.New(webui.Config{DB: db, Identity: identity, Trace: traces, Fallback: api})
//	http.ListenAndServe(":8080", ui)
package webui
