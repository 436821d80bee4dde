package webui

// objectRoutes registers the pages of objects, tables and evaluations: the
// object lists by kind, version histories and diffs, table rows, the
// evaluation runs, their comparison and the forms that send compared rows
// on.
func (h *Handler) objectRoutes() {
	p := "GET " + Prefix + "p/{entity}/{project}/"
	h.mux.Handle(p+"objects", h.inProject(h.objectsPage))
	h.mux.Handle(p+"objects/{name}/versions", h.inProject(h.objectHistoryPage))
	h.mux.Handle(p+"objects/{name}/diff", h.inProject(h.objectDiffPage))
	h.mux.Handle(p+"tables/{digest}", h.inProject(h.tablePage))
	h.mux.Handle(p+"evaluations", h.inProject(h.evalsPage))
	h.mux.Handle(p+"evaluations/compare", h.inProject(h.evalComparePage))
	post := "POST " + Prefix + "p/{entity}/{project}/evaluations/compare/"
	h.mux.Handle(post+"queue", h.crossOrigin.Handler(h.inProject(h.sendToQueue)))
	h.mux.Handle(post+"dataset", h.crossOrigin.Handler(h.inProject(h.sendToDataset)))
}
