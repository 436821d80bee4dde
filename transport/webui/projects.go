package webui

import (
	"net/http"
	"time"

	"github.com/weftlabs/weft/trace"
)

// maxProjectsListed bounds the projects page; each project costs two small
// single-project queries.
const maxProjectsListed = 200

// projectsView is the data of the projects page.
type projectsView struct {
	Projects []projectRow
	// More counts projects not listed past maxProjectsListed.
	More int
}

// projectRow is one project with its call count and last activity.
type projectRow struct {
	ID           string
	Calls        int64
	LastActivity time.Time // zero when the project has no call
}

// projectsPage lists the projects of the entities the caller belongs to. Each
// project is counted with its own query: a project's calls live together (one
// shard on a distributed database), so per-project queries stay local.
func (h *Handler) projectsPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	projects, err := h.cfg.Identity.Projects(ctx, v.principal)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	var view projectsView
	if len(projects) > maxProjectsListed {
		view.More = len(projects) - maxProjectsListed
		projects = projects[:maxProjectsListed]
	}
	for _, p := range projects {
		row := projectRow{ID: p.ID()}
		stats, err := h.cfg.Trace.CallsQueryStats(ctx, &trace.CallsQueryStatsReq{ProjectID: row.ID, Limit: countCap + 1})
		if err != nil {
			h.internalError(w, r, err)
			return
		}
		row.Calls = stats.Count
		err = h.cfg.Trace.CallsQuery(ctx, &trace.CallsQueryReq{
			ProjectID: row.ID, SortBy: []trace.SortBy{{Field: "started_at", Direction: "desc"}}, Limit: 1,
		}, func(c *trace.Call) error {
			row.LastActivity = c.StartedAt
			if c.EndedAt != nil && c.EndedAt.After(c.StartedAt) {
				row.LastActivity = *c.EndedAt
			}
			return nil
		})
		if err != nil {
			h.internalError(w, r, err)
			return
		}
		view.Projects = append(view.Projects, row)
	}
	h.render(w, r, http.StatusOK, "projects", page{Title: "Projects", Viewer: v, Body: view})
}
