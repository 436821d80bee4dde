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

// objectsPageSize is the number of objects an object list page shows.
const objectsPageSize = 50

// objectKind is one tab of the object list: a name for the URL and people,
// and the objects service filter that selects it.
type objectKind struct {
	Name  string
	Label string
	// isOp selects ops (true) or objects (false); nil both.
	isOp *bool
	// classes are the base object classes of the kind; empty for any.
	classes []string
}

// objectKinds are the tabs of the object list, in their order. A Weave
// object's base class is its class when it derives straight from Object
// (Dataset, Evaluation, Scorer, Model) and its grandparent otherwise
// (StringPrompt and MessagesPrompt are Prompts).
var objectKinds = []objectKind{
	{Name: "all", Label: "All"},
	{Name: "ops", Label: "Ops", isOp: new(true)},
	{Name: "datasets", Label: "Datasets", classes: []string{"Dataset"}},
	{Name: "evaluations", Label: "Evaluations", classes: []string{"Evaluation"}},
	{Name: "scorers", Label: "Scorers", classes: []string{"Scorer"}},
	{Name: "models", Label: "Models", classes: []string{"Model"}},
	{Name: "prompts", Label: "Prompts", classes: []string{"Prompt", "StringPrompt", "MessagesPrompt", "EasyPrompt"}},
	{Name: "objects", Label: "Other objects", isOp: new(false)},
}

// objectsView is the data of the object list.
type objectsView struct {
	Project string
	Kind    string
	Kinds   []kindTab
	Rows    []objectRow
	// First is the 1-based position of the first row.
	First      int
	Prev, Next string
}

// kindTab is one tab link of the object list.
type kindTab struct {
	Label   string
	Href    string
	Current bool
}

// objectRow is one object: its latest version and how many it has.
type objectRow struct {
	Name     string
	Kind     string
	Class    string
	Latest   int
	Versions int
	Updated  time.Time
	Href     string // the latest version
	History  string // every version
}

// objectsPage answers GET …/objects?kind=<kind>&offset=<n>: the project's
// objects of one kind by name, each with its latest version and its number
// of live versions.
func (h *Handler) objectsPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		h.renderError(w, r, http.StatusNotFound, "This server keeps no objects.")
		return
	}
	q := r.URL.Query()
	kindName := q.Get("kind")
	if kindName == "" {
		kindName = "all"
	}
	i := slices.IndexFunc(objectKinds, func(k objectKind) bool { return k.Name == kindName })
	if i < 0 {
		h.refuse(w, r, weft.Errorf(errBadView, "kind: %q is not a kind of object", truncate(kindName, 40)))
		return
	}
	kind := objectKinds[i]
	offset, err := offsetParam(q)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	limit := objectsPageSize + 1
	filter := &objects.ObjectVersionFilter{LatestOnly: new(true), IsOp: kind.isOp, BaseObjectClasses: kind.classes}
	res, err := h.cfg.Objects.ObjsQuery(r.Context(), &objects.ObjsQueryReq{
		ProjectID: projectID, Filter: filter, MetadataOnly: true, Limit: &limit, Offset: &offset,
		SortBy: []objects.SortBy{{Field: "object_id", Direction: "asc"}},
	})
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	latest := res.Objs
	view := objectsView{Project: projectID, Kind: kind.Name, First: offset + 1}
	if len(latest) > objectsPageSize {
		latest = latest[:objectsPageSize]
		view.Next = objectsPath(projectID, kind.Name, offset+objectsPageSize)
	}
	if offset > 0 {
		view.Prev = objectsPath(projectID, kind.Name, max(0, offset-objectsPageSize))
	}
	for _, k := range objectKinds {
		view.Kinds = append(view.Kinds, kindTab{Label: k.Label, Href: objectsPath(projectID, k.Name, 0), Current: k.Name == kind.Name})
	}
	counts, err := h.versionCounts(r, projectID, latest)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	for _, o := range latest {
		row := objectRow{
			Name: o.ObjectID, Kind: o.Kind, Latest: o.VersionIndex, Versions: counts[o.ObjectID], Updated: o.CreatedAt,
			Href:    objectVersionPath(projectID, o.ObjectID, o.Digest),
			History: objectHistoryPath(projectID, o.ObjectID),
		}
		if o.BaseObjectClass != nil {
			row.Class = *o.BaseObjectClass
		}
		if o.LeafObjectClass != nil && row.Class != *o.LeafObjectClass {
			row.Class = *o.LeafObjectClass
		}
		view.Rows = append(view.Rows, row)
	}
	h.render(w, r, http.StatusOK, "objects", page{Title: kind.Label + " · objects", Viewer: v, Project: projectID, Body: view})
}

// versionCounts counts the live versions of each object of a page, in one
// query over their names.
func (h *Handler) versionCounts(r *http.Request, projectID string, objs []objects.ObjSchema) (map[string]int, error) {
	counts := map[string]int{}
	if len(objs) == 0 {
		return counts, nil
	}
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.ObjectID
	}
	res, err := h.cfg.Objects.ObjsQuery(r.Context(), &objects.ObjsQueryReq{
		ProjectID: projectID, Filter: &objects.ObjectVersionFilter{ObjectIDs: names}, MetadataOnly: true,
	})
	if err != nil {
		return nil, err
	}
	for _, o := range res.Objs {
		counts[o.ObjectID]++
	}
	return counts, nil
}

// objectsPath is the link of one page of the object list.
func objectsPath(projectID, kind string, offset int) string {
	q := url.Values{}
	if kind != "all" {
		q.Set("kind", kind)
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	return withQuery(projectPath(projectID, "objects"), q)
}

// maxOffset bounds the offset parameter of the object, table and
// evaluation pages.
const maxOffset = 10_000_000

// offsetParam reads the offset parameter (0 when absent).
func offsetParam(q url.Values) (int, error) {
	s := q.Get("offset")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxOffset {
		return 0, weft.Errorf(errBadView, "offset: must be a whole number from 0 to %d", maxOffset)
	}
	return n, nil
}
