package webui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects"
	"github.com/weftlabs/weft/objects/ref"
)

// errNoObjects: the UI was built without the objects service (HTTP 503).
var errNoObjects = weft.DefineError(weft.ErrUnavailable, "ServiceUnavailable", "objects are not served here")

// saveRequest is what the playground posts to save a pair.
type saveRequest struct {
	Dataset  string `json:"dataset"`
	Original string `json:"original"` // call ids
	Rerun    string `json:"rerun"`
}

// playgroundSave adds the pair (a traced call and its re-run) as a row of a
// dataset: a new version of the dataset when it exists, its first version
// otherwise. It answers {"ref": the new dataset version's ref}.
func (h *Handler) playgroundSave(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	if h.cfg.Objects == nil {
		playgroundError(w, weft.Errorf(errNoObjects, "This server has no objects service."))
		return
	}
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		playgroundError(w, err)
		return
	}
	var req saveRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	if err != nil || json.Unmarshal(body, &req) != nil || req.Dataset == "" || !validID(req.Original) || !validID(req.Rerun) {
		playgroundError(w, weft.Errorf(errBadView, "the body must be {dataset, original, rerun}"))
		return
	}
	row, err := h.pairRow(ctx, projectID, req.Original, req.Rerun)
	if err != nil {
		playgroundError(w, err)
		return
	}
	version, err := h.appendDatasetRow(ctx, projectID, req.Dataset, row)
	if err == nil {
		err = h.cfg.Authorizer.ProjectWritten(ctx, v.principal, projectID)
	}
	if err != nil {
		playgroundError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]string{"ref": version.String(), "url": objectVersionPath(projectID, req.Dataset, version.Version)})
	_, _ = w.Write(b)
}

// pairRow is the dataset row of a call and its re-run: the original request's
// messages, both models and both outputs, and refs to both calls.
func (h *Handler) pairRow(ctx context.Context, projectID, originalID, rerunID string) (json.RawMessage, error) {
	original, err := h.readCall(ctx, projectID, originalID)
	if err != nil {
		return nil, err
	}
	rerun, err := h.readCall(ctx, projectID, rerunID)
	if err != nil {
		return nil, err
	}
	var in, again struct {
		Messages json.RawMessage `json:"messages"`
		Model    string          `json:"model"`
	}
	_ = json.Unmarshal(original.Inputs, &in)
	_ = json.Unmarshal(rerun.Inputs, &again)
	return json.Marshal(map[string]any{
		"messages": orNull(in.Messages), "model": in.Model, "output": orNull(original.Output),
		"rerun_messages": orNull(again.Messages), "rerun_model": again.Model, "rerun_output": orNull(rerun.Output),
		"original_call": ref.Call(projectID, originalID).String(), "rerun_call": ref.Call(projectID, rerunID).String(),
	})
}

// appendDatasetRow publishes the next version of dataset name with row
// appended to its rows, or its first version holding row alone.
func (h *Handler) appendDatasetRow(ctx context.Context, projectID, name string, row json.RawMessage) (ref.Ref, error) {
	latest, err := h.cfg.Objects.ObjRead(ctx, &objects.ObjReadReq{ProjectID: projectID, ObjectID: name, Digest: "latest"})
	if errors.Is(err, weft.ErrNotFound) {
		res, err := h.cfg.Objects.DatasetCreate(ctx, &objects.DatasetCreateReq{ProjectID: projectID, Name: name, Rows: []json.RawMessage{row}})
		if err != nil {
			return ref.Ref{}, err
		}
		return ref.Object(projectID, name, res.Digest), nil
	}
	if err != nil {
		return ref.Ref{}, err
	}
	var val map[string]json.RawMessage
	var rowsRef string
	if json.Unmarshal(latest.Obj.Val, &val) != nil || json.Unmarshal(val["rows"], &rowsRef) != nil {
		return ref.Ref{}, weft.Errorf(errBadView, "%s is not a dataset", name)
	}
	table, err := ref.Parse(rowsRef)
	if err != nil {
		return ref.Ref{}, weft.Errorf(errBadView, "%s is not a dataset", name)
	}
	updated, err := h.cfg.Objects.TableUpdate(ctx, &objects.TableUpdateReq{ProjectID: projectID, BaseDigest: table.Digest,
		Updates: []objects.TableUpdateSpec{{Append: &objects.TableAppend{Row: row}}}})
	if err != nil {
		return ref.Ref{}, err
	}
	val["rows"], _ = json.Marshal(ref.Table(projectID, updated.Digest).String())
	next, _ := json.Marshal(val)
	res, err := h.cfg.Objects.ObjCreate(ctx, &objects.ObjCreateReq{Obj: objects.ObjSchemaForInsert{ProjectID: projectID, ObjectID: name, Val: next}})
	if err != nil {
		return ref.Ref{}, err
	}
	return ref.Object(projectID, name, res.Digest), nil
}
