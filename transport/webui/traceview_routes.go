package webui

import "html/template"

// traceViewFuncs are the template functions of the trace view, the detail
// pane and the diff page.
func traceViewFuncs(md *markdownRenderer) template.FuncMap {
	return template.FuncMap{
		"epochMS":   epochMS,
		"endMS":     endMS,
		"cost":      formatCost,
		"markdown":  md.html,
		"reactions": func() []string { return quickReactions },
		"truncate":  truncate,
		"opHref":    refHref,
	}
}

// traceViewRoutes registers the pages and fragments of the trace view beyond
// the tree and the detail pane: "show all", feedback, next error, object
// versions, files and the diff.
func (h *Handler) traceViewRoutes() {
	p := "GET " + Prefix + "p/{entity}/{project}/"
	h.mux.Handle(p+"calls/{callID}/value", h.inProject(h.callValue))
	h.mux.Handle("POST "+Prefix+"p/{entity}/{project}/calls/{callID}/feedback", h.crossOrigin.Handler(h.inProject(h.addFeedback)))
	h.mux.Handle(p+"traces/{traceID}/next-error", h.inProject(h.nextError))
	h.mux.Handle(p+"objects/{name}/versions/{version}", h.inProject(h.objectVersionPage))
	h.mux.Handle(p+"files/{digest}", h.inProject(h.fileContent))
	h.mux.Handle(p+"diff", h.inProject(h.diffPage))
}
