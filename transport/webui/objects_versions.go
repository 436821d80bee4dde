package webui

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// objectHistoryView is the data of an object's version history.
type objectHistoryView struct {
	Project string
	Name    string
	Kind    string
	// Versions are newest first.
	Versions []versionRow
	// DiffAction is the diff page the form goes to; A and B its default
	// sides (the two newest versions).
	DiffAction string
	A, B       int
	// AliasURL takes the form that labels a version (an alias that moves).
	AliasURL string
	// Prompt says the object is a prompt: each version opens in the
	// playground.
	Prompt bool
}

// versionRow is one version of the history.
type versionRow struct {
	Index    int
	Digest   string
	Created  time.Time
	IsLatest bool
	Href     string
	// PrevDiff compares the version with the one before it ("" for v0).
	PrevDiff string
	// Calls lists the calls that used the version.
	Calls string
	// Aliases are the labels naming the version ("latest" left out).
	Aliases []string
	// Playground opens a prompt version in the playground ("" otherwise).
	Playground string
}

// objectHistoryPage answers GET …/objects/{name}/versions: every live
// version of one object, newest first, with a form to compare any two.
func (h *Handler) objectHistoryPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no objects.")
		return
	}
	name := r.PathValue("name")
	if len(name) > maxObjectNameLength {
		h.refuse(w, r, weft.Errorf(errBadView, "object name: at most %d characters", maxObjectNameLength))
		return
	}
	res, err := h.cfg.Objects.ObjsQuery(r.Context(), &objects.ObjsQueryReq{
		ProjectID: projectID, Filter: &objects.ObjectVersionFilter{ObjectIDs: []string{name}}, MetadataOnly: true, IncludeTagsAndAliases: true,
	})
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if len(res.Objs) == 0 {
		h.renderError(w, r, http.StatusNotFound, "This project has no object named "+truncate(name, 80)+".")
		return
	}
	versions := res.Objs
	slices.SortFunc(versions, func(a, b objects.ObjSchema) int { return b.VersionIndex - a.VersionIndex })
	view := objectHistoryView{Project: projectID, Name: name, Kind: versions[0].Kind, DiffAction: objectDiffPath(projectID, name, "", ""),
		AliasURL: projectPath(projectID, "objects/", pathSegment(name), "/aliases"), Prompt: isPrompt(versions[0])}
	for i, o := range versions {
		row := versionRow{
			Index: o.VersionIndex, Digest: o.Digest, Created: o.CreatedAt, IsLatest: o.IsLatest == 1,
			Href:    objectVersionPath(projectID, name, o.Digest),
			Calls:   callsUsingPath(projectID, objectRef(projectID, o.Kind, name, o.Digest)),
			Aliases: slices.DeleteFunc(slices.Clone(o.Aliases), func(a string) bool { return a == "latest" }),
		}
		if view.Prompt {
			row.Playground = promptPlaygroundPath(projectID, name, o.Digest)
		}
		if i+1 < len(versions) {
			row.PrevDiff = objectDiffPath(projectID, name, versionName(versions[i+1].VersionIndex), versionName(o.VersionIndex))
		}
		view.Versions = append(view.Versions, row)
	}
	view.B = versions[0].VersionIndex
	view.A = versions[min(1, len(versions)-1)].VersionIndex
	h.render(w, r, http.StatusOK, "object_versions", page{Title: name + " · versions", Viewer: v, Project: projectID, Body: view})
}

// objectRef is the ref of an object or op version.
func objectRef(projectID, kind, name, digest string) string {
	return "weave:///" + projectID + "/" + kind + "/" + name + ":" + digest
}

// versionName is a version index as refs and the diff page write it.
func versionName(index int) string { return "v" + strconv.Itoa(index) }

// objectHistoryPath is the version history of an object.
func objectHistoryPath(projectID, name string) string {
	return projectPath(projectID, "objects/", pathSegment(name), "/versions")
}

// objectDiffPath compares versions a and b of an object ("" leaves a side
// to the form).
func objectDiffPath(projectID, name, a, b string) string {
	q := url.Values{}
	if a != "" {
		q.Set("a", a)
	}
	if b != "" {
		q.Set("b", b)
	}
	return withQuery(projectPath(projectID, "objects/", pathSegment(name), "/diff"), q)
}

// callsUsingPath is the trace list filtered to the calls that used ref: the
// calls of an op version, or the calls given an object version as input.
func callsUsingPath(projectID, ref string) string {
	return withQuery(projectPath(projectID), url.Values{"ref": {ref}})
}
