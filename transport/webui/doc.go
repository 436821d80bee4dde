// Package webui serves weft's web UI: server-rendered pages over the same
// services the API calls (trace, feedback), with the API's authorizer deciding
// what a user may see.
//
// Pages are html/template files embedded in the binary (templates/, a folder
// per page family), updated in part by htmx; the UI's own scripts are plain
// ES modules, one per concern (static/app.js for every page, keys.js for the
// keyboard, and one per page family that needs more). Every route is
// registered in routes.go, by family. There is no
// build step: the third-party browser files are committed under
// static/vendor, copied there by `go generate` from pinned npm packages whose
// hashes vendor.json lists (and a test checks). Every asset is served from the
// binary under a content-hashed name with a year-long cache lifetime, and
// every page carries a Content-Security-Policy that allows scripts and styles
// from this server only and nothing inline, so no page makes a request
// elsewhere and no value from stored data can run as code.
//
// A user signs in with an API key (and optionally the user name): the server
// opens a session (weft.Identity keeps only a hash of its token), sets an
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
// checks the session and project rights again before each update. To see the
// writes of other server processes on the same PostgreSQL database, let the
// feed listen ([trace.Feed.ListenPostgres]). Call [Handler.CloseStreams] on
// shutdown. A view saved under a name is an object of the project of
// Weave's builtin class SavedView (tracelist_views.go), offered to every
// member; a view exports as CSV of the list's columns or JSONL of its calls,
// streamed, up to Config.MaxExportRows. On a narrow screen the list draws
// each trace as a card and other tables keep the columns not marked
// wide-only.
//
// The trace view draws the call tree with children loaded a page of 100 at a
// time, each row with a bar on the trace's timeline (placed by
// static/traceview.js from the start and end the server writes on the row).
// Its detail pane reads chat messages in the OpenAI (chat and Responses),
// Anthropic and Gemini shapes (traceview_messages.go) and renders their text as Markdown
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
// Annotation queues (/ui/p/<entity>/<project>/queues) list their progress;
// opening one goes to its first unfinished item, whose page draws each
// annotation spec the queue lists as a form field of the spec's JSON schema
// (an enum or boolean as labelled radios, a number with its bounds, a string
// as text, anything else as JSON) beside the item's call. A field saves
// itself when it changes: the value is stored as feedback of type
// "wandb.annotation.<spec>" on the call, with the spec as annotation_ref and
// the queue as queue_id, exactly as through the API, replacing the user's
// earlier value; "Done" and "Skip" record the user's progress on the item.
//
// The keyboard works every page (static/keys.js, "?" lists the keys): j/k
// move through rows or tree nodes, Enter opens, h/l collapse and expand,
// [ and ] move between siblings, "/" focuses the search, e goes to the next
// error, 1–9 pick a label and n finishes a queue item. Pages opt in through
// markup, not code: [role=tree] with [role=treeitem] nodes and button.toggle,
// [data-key-item] rows (else table.grid rows), [data-key-open] openers,
// [data-key-search], fieldset[data-choices], and buttons marked
// data-action="next-item", "next-error" (or data-next-error) or
// "keys-help". "e" first dispatches a cancelable "weft:next-error" event on
// document, so a page that finds the next error itself (say, in subtrees not
// loaded yet) handles it there.
//
// The training pages (Config.Training) read the training service: a project's
// models, a model's checkpoints and jobs, a step's logged trajectories and a
// job's events. Their charts are data the server aligns (training_chart.go:
// one chart per metric, one line per run, null where a run has no value),
// written into a JSON script block that static/training.js hands to uPlot;
// each chart container keeps its uPlot instances (element.charts) so that
// what is drawn can be read back. A running job's page follows its events, and
// a model's page its new checkpoints and its latest one's metrics, over
// server-sent events read from the store every 300 ms (training_live.go: one
// poll stream serves both).
//
// The playground (Config.Chat) composes a chat-completion request from its
// form in static/playground.js and posts it to …/playground/run, which sends
// it through the gateway (traced into the page's project, with the API's write
// authorization) and relays the answer as it comes. A traced call opens in it
// with its request as the form; the pair of a call and its re-run is compared
// on the diff page and saved as a dataset row through the objects service.
//
// Mount the handler in front of the API: the UI answers "/" and paths under
// [Prefix], and passes everything else to Config.Fallback.
//
//	api, _ := httpapi.New(httpapi.Config{Identity: identity, Trace: traces})
//	ui, _ := webui.New(webui.Config{Identity: identity, Trace: traces, Fallback: api})
//	http.ListenAndServe(":8080", ui)
package webui
