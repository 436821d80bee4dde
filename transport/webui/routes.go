package webui

import "net/http"

// routes registers every page, fragment and form of the UI, by family. A page
// that needs a signed-in user is wrapped by signedIn; a page of one project
// by inProject, which also authorizes read access (a form's handler asks for
// write access itself). A request that changes state goes through
// crossOrigin, which refuses other origins, and its session's CSRF token is
// checked by signedIn. A new family adds its block here with the same
// wrappers.
func (h *Handler) routes() {
	get := func(pattern string, page projectPage) {
		h.mux.Handle("GET "+projectPrefix+pattern, h.inProject(page))
	}
	post := func(pattern string, form projectPage) {
		h.mux.Handle("POST "+projectPrefix+pattern, h.crossOrigin.Handler(h.inProject(form)))
	}

	// Site: assets, sign-in and out, the projects page.
	h.mux.Handle("GET "+Prefix+"static/{name...}", http.HandlerFunc(h.assets.serve))
	h.mux.HandleFunc("GET "+Prefix+"signin", h.signInPage)
	h.mux.Handle("POST "+Prefix+"signin", h.crossOrigin.Handler(http.HandlerFunc(h.signIn)))
	h.mux.Handle("POST "+Prefix+"signout", h.crossOrigin.Handler(h.signedIn(h.signOut)))
	h.mux.Handle("GET /{$}", h.signedIn(h.projectsPage))
	h.mux.Handle("GET "+Prefix+"{$}", http.RedirectHandler("/", http.StatusSeeOther))

	// Trace list: the project's home, its live stream, its export, its
	// saved views and the actions on calls selected in it.
	get("{$}", h.tracesPage)
	get("live", h.traceListLive)
	get("export", h.exportTraces)
	get("views/{name}", h.openView)
	post("views", h.saveView)
	post("views/{name}/delete", h.deleteView)
	post("selection/queue", h.selectionToQueue)
	post("selection/dataset", h.selectionToDataset)

	// Trace view: the tree, its children, the detail pane, "show all",
	// feedback, next error, object versions and files refs lead to, and the
	// diff of two calls or traces.
	get("traces/{traceID}", h.tracePage)
	get("traces/{traceID}/next-error", h.nextError)
	get("calls/{callID}/children", h.callChildren)
	get("calls/{callID}", h.callDetail)
	get("calls/{callID}/value", h.callValue)
	post("calls/{callID}/feedback", h.addFeedback)
	get("objects/{name}/versions/{version}", h.objectVersionPage)
	get("files/{digest}", h.fileContent)
	get("diff", h.diffPage)

	// Dashboard: the project's traces over time.
	get("dashboard", h.dashboardPage)

	// Threads: the list and one thread as a conversation.
	get("threads", h.threadsPage)
	get("threads/{threadID}", h.threadPage)

	// Objects: the lists by kind, version histories and diffs, table rows
	// and their export, the labels (aliases) of versions.
	get("objects", h.objectsPage)
	get("objects/{name}/versions", h.objectHistoryPage)
	get("objects/{name}/diff", h.objectDiffPage)
	get("tables/{digest}", h.tablePage)
	get("tables/{digest}/export", h.exportTable)
	post("objects/{name}/versions/{version}/train", h.trainOnDataset)
	post("objects/{name}/aliases", h.setAlias)

	// Evaluations: the runs, their comparison and its export, and the forms
	// that send compared rows on.
	get("evaluations", h.evalsPage)
	get("evaluations/compare", h.evalComparePage)
	get("evaluations/compare/export", h.exportComparison)
	post("evaluations/compare/queue", h.sendToQueue)
	post("evaluations/compare/dataset", h.sendToDataset)

	// Annotation queues: the list, an item, and its autosaved fields and
	// progress; the forms that make and change queues and their specs.
	get("queues", h.queuesPage)
	get("edit-queue", h.editQueuePage)
	post("queues", h.saveQueue)
	get("edit-spec", h.editSpecPage)
	post("specs", h.saveSpec)
	get("queues/{queueID}", h.queueResume)
	get("queues/{queueID}/items/{itemID}", h.queueItemPage)
	post("queues/{queueID}/items/{itemID}/annotation", h.saveAnnotation)
	post("queues/{queueID}/items/{itemID}/progress", h.queueProgress)

	// Training: models, checkpoints' steps, jobs, their live streams and
	// charts.
	get("models", h.modelsPage)
	get("models/{modelID}", h.modelPage)
	get("models/{modelID}/steps/{step}", h.stepPage)
	get("models/{modelID}/live", h.modelLive)
	get("models/{modelID}/chart", h.modelMetric)
	get("training-jobs/{jobID}", h.jobPage)
	get("training-jobs/{jobID}/live", h.jobLive)
	get("training-jobs/{jobID}/chart", h.jobMetric)

	// Monitors: the list, one monitor's verdicts, cost and backfills, the
	// forms that make and change monitors and scorers (a scorer previewed
	// on a call first), and pause and resume.
	get("monitors", h.monitorsPage)
	get("monitors/{monitorID}", h.monitorPage)
	get("edit-monitor", h.editMonitorPage)
	post("monitors", h.saveMonitor)
	post("monitors/{monitorID}/active", h.setMonitorActive)
	get("edit-scorer", h.editScorerPage)
	post("scorers", h.saveScorer)

	// Settings: the user's API keys, the entity's members, model prices.
	get("settings", h.settingsPage)
	post("settings/keys", h.createKey)
	post("settings/keys/{keyID}/revoke", h.revokeKey)
	post("settings/prices", h.addPrice)
	post("settings/prices/{priceID}/delete", h.deletePrice)

	// Playground: the form, its run and the saving of a compared pair.
	get("playground", h.playgroundPage)
	post("playground/run", h.playgroundRun)
	post("playground/save", h.playgroundSave)

	h.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusNotFound, "There is no page here.")
	})
}

// projectPrefix starts the path of every page of one project.
const projectPrefix = Prefix + "p/{entity}/{project}/"

// projectPage serves a page or form of one project to a viewer allowed to
// read it (inProject).
type projectPage func(w http.ResponseWriter, r *http.Request, v *viewer, projectID string)
