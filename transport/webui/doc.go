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
// The trace view draws the call tree with children loaded a page of 100 at a
// time, each row with a bar on the trace's timeline (placed by
// static/traceview.js from the start and end the server writes on the row).
// Its detail pane reads chat messages in the OpenAI (chat and Responses),
// Anthropic and Gemini shapes (chat.go) and renders their text as Markdown
// with raw HTML shown as text and only http, https and mailto links kept
// (render_markdown.go); pictures are drawn only from inline raster data URLs
// or from the project's files through an authorized route, so no page
// fetches from another site. Refs link to the object version page, long
// values load in full on request, and feedback (reactions and notes) is added
// through the feedback service with the API's write authorization. "Next
// error" asks the server for the next failed call in the tree's order and
// opens the nodes on its path. The diff page compares two calls or two
// traces: children aligned by op name, latency, token and cost deltas, and
// inputs and outputs compared by internal/jsondiff.
//
// Mount the handler in front of the API: the UI answers "/" and paths under
// [Prefix], and passes everything else to Config.Fallback.
//
//	api, _ := httpapi.New(httpapi.Config{Identity: identity, Trace: traces})
//	ui, _ := webui.New(webui.Config{DB: db, Identity: identity, Trace: traces, Fallback: api})
//	http.ListenAndServe(":8080", ui)
package webui
