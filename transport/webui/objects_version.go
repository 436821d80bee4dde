package webui

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
)

// maxObjectNameLength bounds object names and versions taken from a URL.
const maxObjectNameLength = 256

// objectVersionView is the data of the object version page: one version's
// metadata and value (refs in it link on to their versions).
type objectVersionView struct {
	Project string
	Name    string
	Digest  string
	Kind    string
	Class   string
	// Train, on a dataset's version, starts an SFT job on it
	// (datasets_train.go).
	Train        *trainOffer
	VersionIndex int
	IsLatest     bool
	Created      time.Time
	Value        *jsonNode
	// Ref is the version's own ref, to copy into code.
	Ref string
	// Links of the version: every version, the calls that used this one,
	// the diff with the version before it ("" for v0), and the rows of
	// each table it holds (a dataset's rows), by member name.
	History, Calls, PrevDiff string
	Tables                   []tableLink
	// Code is an op version's source; CodeNote says why there is none to
	// show ("" for objects, which have no code).
	Code, CodeNote string
}

// maxCodeBytes bounds the source an op version page shows.
const maxCodeBytes = 256 << 10

// tableLink is a member of an object version that holds a table.
type tableLink struct {
	Field string
	Href  string
}

// objectVersionPage answers GET …/objects/{name}/versions/{version}: the
// page every object and op ref of a trace links to. version is a digest,
// "latest" or "v<N>".
func (h *Handler) objectVersionPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no objects.")
		return
	}
	name, version := r.PathValue("name"), r.PathValue("version")
	if len(name) > maxObjectNameLength || len(version) > maxObjectNameLength {
		h.refuse(w, r, weft.Errorf(errBadView, "object name and version: at most %d characters", maxObjectNameLength))
		return
	}
	res, err := h.cfg.Objects.ObjRead(r.Context(), &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: version})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	o := res.Obj
	view := objectVersionView{
		Project: projectID, Name: o.ObjectID, Digest: o.Digest, Kind: o.Kind, VersionIndex: o.VersionIndex,
		IsLatest: o.IsLatest == 1, Created: o.CreatedAt, Value: jsonTree(o.Val),
		Ref: "weave:///" + projectID + "/" + o.Kind + "/" + o.ObjectID + ":" + o.Digest,
	}
	if o.BaseObjectClass != nil {
		view.Class = *o.BaseObjectClass
	}
	decorate(view.Value, "", valueLinks{Project: projectID})
	view.History = objectHistoryPath(projectID, o.ObjectID)
	view.Calls = callsUsingPath(projectID, objectRef(projectID, o.Kind, o.ObjectID, o.Digest))
	if o.VersionIndex > 0 {
		view.PrevDiff = objectDiffPath(projectID, o.ObjectID, versionName(o.VersionIndex-1), versionName(o.VersionIndex))
	}
	for field, t := range tableMembers(o.Val) {
		if t.ProjectID() == projectID {
			view.Tables = append(view.Tables, tableLink{Field: field, Href: tablePath(projectID, t.Digest, tableView{})})
		}
	}
	slices.SortFunc(view.Tables, func(a, b tableLink) int { return strings.Compare(a.Field, b.Field) })
	if o.Kind == "op" {
		code, err := h.opSource(r.Context(), projectID, o.Val)
		switch {
		case errors.Is(err, errNoCode):
			view.CodeNote = "This op version keeps no code."
		case errors.Is(err, weft.ErrNotFound):
			view.CodeNote = "The code of this version is missing."
		case err != nil:
			h.internalError(w, r, err)
			return
		case len(code) > maxCodeBytes:
			view.Code, view.CodeNote = strings.ToValidUTF8(code[:maxCodeBytes], ""), "The code goes on beyond what is shown."
		default:
			view.Code = code
		}
	}
	if view.Train, err = h.trainOfferOf(r, projectID, &o); err != nil {
		h.internalError(w, r, err)
		return
	}
	title := o.ObjectID + ":v" + strconv.Itoa(o.VersionIndex)
	h.render(w, r, http.StatusOK, "object", page{Title: title, Viewer: v, Project: projectID, Body: view})
}

// imageTypes are the content types the file route serves for display; any
// other file is served as a download, never as a document of this origin.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// fileContent answers GET …/files/{digest}: a file of the project, such as
// the picture of a weave image, authorized like every page of the project.
func (h *Handler) fileContent(w http.ResponseWriter, r *http.Request, _ *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no files.")
		return
	}
	digest := r.PathValue("digest")
	if len(digest) > maxObjectNameLength {
		h.refuse(w, r, weft.Errorf(errBadView, "digest: at most %d characters", maxObjectNameLength))
		return
	}
	res, err := h.cfg.Objects.FileContent(r.Context(), &objects.FileContentReq{ProjectID: projectID, Digest: digest})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	header := w.Header()
	contentType := http.DetectContentType(res.Content)
	if !imageTypes[contentType] {
		contentType = "application/octet-stream"
		header.Set("Content-Disposition", "attachment")
	}
	header.Set("Content-Type", contentType)
	// A file's digest names its content: it never changes.
	header.Set("Cache-Control", "private, max-age=31536000, immutable")
	header.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	header.Set("Content-Length", strconv.Itoa(len(res.Content)))
	_, _ = w.Write(res.Content)
}
